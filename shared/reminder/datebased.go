package reminder

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/localtime"
)

// Source is the current state of one source entity, from an event or its snapshot.
type Source struct {
	EntityType     string
	EntityGuid     string
	BusinessUnitID string
	Deleted        bool
	Data           map[string]any
	// Revision is the source revision the state is from (threshold edge state is guarded by it).
	Revision int64
}

// Active reports whether the source can still have reminders: not deleted and its data
// does not say "isActive": false.
func (s Source) Active() bool {
	if s.Deleted {
		return false
	}
	if v, ok := s.Data["isActive"]; ok {
		if b, ok := v.(bool); ok && !b {
			return false
		}
	}
	return true
}

// Zone is a business unit with its loaded time zone (businessunit.Zone).
type Zone = businessunit.Zone

// Occurrence is one candidate plus the target date and offset it came from.
type Occurrence struct {
	automation.Candidate
	Target     localtime.Date
	OffsetDays int
	LocalDate  localtime.Date
}

// inputHashV1 is the canonical input of a date-based occurrence: the key components and
// the settings that affect the key (docs/architecture.md#the-row). The send time is deliberately absent: a send
// time change updates rows in place under the same key (docs/architecture.md#settings-changes).
type inputHashV1 struct {
	V              int    `json:"v"`
	AutomationType string `json:"automationType"`
	TriggerType    string `json:"triggerType"`
	hashSubjectV1
	TargetDate string `json:"targetDate"`
	OffsetDays int    `json:"offsetDays"`
	Annual     bool   `json:"annual"`
}

// hashSubjectV1 is what every V1 hash input holds after its kind, in this order (JSON puts
// an embedded struct's members in its place): the setting, the unit, the source and the
// trigger key.
type hashSubjectV1 struct {
	SettingGuid    string `json:"settingGuid"`
	BusinessUnitID string `json:"businessUnitId"`
	SourceType     string `json:"sourceType"`
	SourceGuid     string `json:"sourceGuid"`
	TriggerKey     string `json:"triggerKey"`
}

func hashSubject(set Setting, src Source, z Zone) hashSubjectV1 {
	return hashSubjectV1{SettingGuid: set.Guid, BusinessUnitID: z.BusinessUnitID, SourceType: src.EntityType, SourceGuid: src.EntityGuid, TriggerKey: set.TriggerKey}
}

// TriggerDate reads the setting's trigger field from data. ok=false when the field is
// absent or null (no reminder); an error (automation.Invalid, field "data.<key>") when it is
// not a real "YYYY-MM-DD" date.
func TriggerDate(set Setting, data map[string]any) (d localtime.Date, ok bool, err error) {
	v, present := data[set.TriggerKey]
	if !present || v == nil {
		return localtime.Date{}, false, nil
	}
	str, isStr := v.(string)
	if !isStr {
		return localtime.Date{}, false, automation.Invalid("data."+set.TriggerKey, "must be a date string \"YYYY-MM-DD\", got %s", jsonText(v))
	}
	d, err = localtime.ParseDate(str)
	if err != nil {
		return localtime.Date{}, false, automation.Invalid("data."+set.TriggerKey, "%v", err)
	}
	return d, true, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// DateOccurrences returns the occurrences a DateBased setting wants for src.
//
// ref selects the target of annual settings, per offset: the first anniversary (after
// the original date) whose occurrence date is on or after ref. Event processing passes the
// business unit's local today, so annual occurrences are never recorded as missed (the
// chain moves to next year); revalidation passes the row's own local date so a late
// execution still finds its occurrence. now (UTC) applies the late rule when markMissed is set: an occurrence whose
// send instant is before now is kept (sent now) when its local date is today in the zone,
// and marked MissedReason=MissedWindow when older (docs/architecture.md#date-based-reminders).
func DateOccurrences(set Setting, src Source, z Zone, ref localtime.Date, now time.Time, markMissed bool) ([]Occurrence, error) {
	date, ok, err := TriggerDate(set, src.Data)
	if err != nil || !ok {
		return nil, err
	}
	today := localtime.DateOf(now, z.Loc)
	out := make([]Occurrence, 0, len(set.OffsetsDays))
	for _, off := range set.OffsetsDays {
		target := date
		if set.Annual {
			// Each offset follows its own yearly chain: the first anniversary whose
			// occurrence (anniversary − offset) is on or after ref, so a missed year
			// moves on to the next one instead of ending the chain.
			target = NextAnniversary(date, ref.AddDays(off))
		}
		o, err := dateOccurrence(set, src, z, target, off)
		if err != nil {
			return nil, err
		}
		if markMissed && o.ScheduledOn.Before(now) && o.LocalDate.Before(today) {
			o.MissedReason = automation.ReasonMissedWindow
		}
		out = append(out, o)
	}
	return out, nil
}

// Supported calendar range of targets and occurrence dates.
var (
	minDate = localtime.Date{Year: 1900, Month: 1, Day: 1}
	maxDate = localtime.Date{Year: 9998, Month: 12, Day: 31}
)

// inputHash is the InputHash of a date-based occurrence (inputHashV1).
func inputHash(set Setting, src Source, z Zone, target localtime.Date, off int) string {
	return automation.InputHash(inputHashV1{V: 1, AutomationType: string(automation.TypeReminder), TriggerType: string(automation.TriggerDateBased),
		hashSubjectV1: hashSubject(set, src, z), TargetDate: target.String(), OffsetDays: off, Annual: set.Annual})
}

func dateOccurrence(set Setting, src Source, z Zone, target localtime.Date, off int) (Occurrence, error) {
	local := target.AddDays(-off)
	if target.After(maxDate) || local.Before(minDate) {
		return Occurrence{}, automation.Invalid("data."+set.TriggerKey, "date %s gives an occurrence outside the supported range %s..%s", target, minDate, maxDate)
	}
	at := localtime.Resolve(z.Loc, local, *set.SendLocalTime)
	key, err := automation.ReminderDateKey(set.Guid, src.EntityType, src.EntityGuid, set.TriggerKey, target.String(), off)
	if err != nil {
		return Occurrence{}, automation.Invalid("entityguid", "%v", err)
	}
	hash := inputHash(set, src, z, target, off)
	return Occurrence{
		Candidate: automation.Candidate{
			AutomationType: automation.TypeReminder, TriggerType: automation.TriggerDateBased,
			SchedulerKey: key, InputHash: hash, SettingGuid: set.Guid,
			SourceEntityType: src.EntityType, SourceEntityGuid: src.EntityGuid, BusinessUnitID: z.BusinessUnitID,
			ScheduledOn: at, ScheduledLocalDate: local.String(), ScheduledLocalTime: set.SendLocalTime.String(), TimeZoneID: z.TimeZoneID,
		},
		Target: target, OffsetDays: off, LocalDate: local,
	}, nil
}

// NextAnniversary returns the first anniversary of orig that is on or after ref and in a
// later year than orig (29 February falls on 28 February in common years).
func NextAnniversary(orig, ref localtime.Date) localtime.Date {
	y := ref.Year - 1
	if y <= orig.Year {
		y = orig.Year + 1
	}
	for {
		a := localtime.AnniversaryIn(orig, y)
		if !a.Before(ref) {
			return a
		}
		y++
	}
}

// FollowingYear returns the same-offset occurrence of the next anniversary after o (for
// annual settings, ensured when o completes).
func FollowingYear(set Setting, src Source, z Zone, o Occurrence) (Occurrence, error) {
	date, ok, err := TriggerDate(set, src.Data)
	if err != nil {
		return Occurrence{}, err
	}
	if !ok {
		return Occurrence{}, fmt.Errorf("reminder: source has no %s", set.TriggerKey)
	}
	return dateOccurrence(set, src, z, NextAnniversary(date, o.Target.AddDays(1)), o.OffsetDays)
}
