package reminder

import (
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// overdueHashV1 is the canonical input of an immediate (overdue) notification: its key's
// components.
type overdueHashV1 struct {
	V              int    `json:"v"`
	AutomationType string `json:"automationType"`
	Kind           string `json:"kind"` // "overdue"
	hashSubjectV1
	TargetDate string `json:"targetDate"`
}

// overdueCandidate is the immediate-notification provider of a DateBased setting with
// ImmediateIfOverdue (docs/architecture.md#event-flow "ensure immediate notification if needed"): when the source's
// target date is before today in the business unit, one notification due now (to the
// minute), keyed by automation.ReminderOverdueKey. ok is false when it does not apply (the
// option is off, no date, the date is today or later). Whether the source is *first* seen
// overdue is decided by the caller from the existing rows (wantOverdue).
// overdueHash is the InputHash of an immediate notification for target (overdueHashV1).
func overdueHash(set Setting, src Source, z Zone, target localtime.Date) string {
	return automation.InputHash(overdueHashV1{V: 1, AutomationType: string(automation.TypeReminder), Kind: "overdue",
		hashSubjectV1: hashSubject(set, src, z), TargetDate: target.String()})
}

func overdueCandidate(set Setting, src Source, z Zone, now time.Time) (c automation.Candidate, target localtime.Date, ok bool, err error) {
	if !set.ImmediateIfOverdue || set.Annual || set.TriggerType != automation.TriggerDateBased {
		return c, target, false, nil
	}
	target, has, err := TriggerDate(set, src.Data)
	if err != nil || !has {
		return c, target, false, err
	}
	today := localtime.DateOf(now, z.Loc)
	if !target.Before(today) {
		return c, target, false, nil
	}
	key, err := automation.ReminderOverdueKey(set.Guid, src.EntityType, src.EntityGuid, set.TriggerKey, target.String())
	if err != nil {
		return c, target, false, automation.Invalid("entityguid", "%v", err)
	}
	due := now.UTC().Truncate(time.Minute)
	c = automation.Candidate{
		AutomationType: automation.TypeReminder, TriggerType: automation.TriggerDateBased,
		SchedulerKey: key, SettingGuid: set.Guid,
		InputHash:        overdueHash(set, src, z, target),
		SourceEntityType: src.EntityType, SourceEntityGuid: src.EntityGuid, BusinessUnitID: z.BusinessUnitID,
		ScheduledOn: due, ScheduledLocalDate: today.String(), ScheduledLocalTime: due.In(z.Loc).Format("15:04"), TimeZoneID: z.TimeZoneID,
	}
	return c, target, true, nil
}

// wantOverdue decides whether the overdue notification is wanted given this source's rows:
// yes when its row already exists (keep it: idempotent), or when no occurrence of the same
// target date was ever scheduled other than as a missed window - the source is seen for the
// first time after its date. A source known before its date already had its reminders.
func wantOverdue(c automation.Candidate, occ []Occurrence, existing map[string]automation.SchedulerRow) bool {
	if _, ok := existing[c.SchedulerKey]; ok {
		return true
	}
	for _, o := range occ {
		if r, ok := existing[o.SchedulerKey]; ok && !(r.Status == automation.StatusDeactivated && r.ReasonCode == automation.ReasonMissedWindow) {
			return false
		}
	}
	return true
}
