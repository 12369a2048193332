package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
)

// ReasonNoRecipients: at due time the source has no recipient in the setting's field.
const ReasonNoRecipients automation.ReasonCode = "NoRecipients"

// MaxRecipients bounds the recipients one occurrence may fan out to.
const MaxRecipients = 100

// Handler executes due reminder rows (stage ②, §3.6): it reloads the setting, the source
// snapshot and the business unit, recomputes the occurrence, and either deactivates the row
// with a reason code or returns the delivery requests (recipients and channels resolved
// now) plus, for annual settings, the following year's occurrence.
type Handler struct {
	Store Store
}

var _ scheduler.Handler = (*Handler)(nil)

// Payload is the render data stored with each NotificationJob (small, no snapshot copy).
type Payload struct {
	SettingGuid string `json:"settingGuid"`
	SettingName string `json:"settingName"`
	SourceType  string `json:"sourceType"`
	SourceGuid  string `json:"sourceGuid"`
	TargetDate  string `json:"targetDate"`
	OffsetDays  int    `json:"offsetDays"`
	ScheduledOn string `json:"scheduledOn"` // RFC 3339 UTC
	LocalTime   string `json:"localTime"`   // RFC 3339 with the business unit's offset
	TimeZoneID  string `json:"timeZoneId"`
}

// Execute implements scheduler.Handler.
func (h *Handler) Execute(ctx context.Context, row automation.SchedulerRow, now time.Time) (scheduler.Outcome, error) {
	deact := func(r automation.ReasonCode) (scheduler.Outcome, error) { return scheduler.Outcome{Deactivate: r}, nil }
	rec, err := h.Store.ReminderSettingGet(ctx, row.SettingGuid)
	if errors.Is(err, store.ErrNotFound) {
		return deact(automation.ReasonReminderSettingInactive)
	}
	if err != nil {
		return scheduler.Outcome{}, err
	}
	set, err := ParseSetting([]byte(rec.Body))
	if err != nil {
		return scheduler.Outcome{}, scheduler.Permanent(fmt.Errorf("stored setting %s is invalid: %w", rec.Guid, err))
	}
	if !set.Active() {
		return deact(automation.ReasonReminderSettingInactive)
	}
	snap, err := h.Store.SourceSnapshotGet(ctx, row.SourceEntityType, row.SourceEntityGuid)
	if errors.Is(err, store.ErrNotFound) {
		return deact(automation.ReasonSourceNoLongerValid)
	}
	if err != nil {
		return scheduler.Outcome{}, err
	}
	var data map[string]any
	dec := json.NewDecoder(strings.NewReader(snap.DataJSON))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		return scheduler.Outcome{}, scheduler.Permanent(fmt.Errorf("stored snapshot of %s/%s is not JSON: %w", snap.EntityType, snap.EntityGuid, err))
	}
	src := Source{EntityType: snap.EntityType, EntityGuid: snap.EntityGuid, BusinessUnitID: snap.BusinessUnitID, Deleted: snap.IsDeleted, Data: data}
	if !src.Active() {
		return deact(automation.ReasonSourceNoLongerValid)
	}
	bu, err := h.Store.BusinessUnitGet(ctx, row.BusinessUnitID)
	if err != nil {
		return scheduler.Outcome{}, fmt.Errorf("business unit %s: %w", row.BusinessUnitID, err)
	}
	loc, err := localtime.LoadZone(bu.TimeZoneID)
	if err != nil {
		return scheduler.Outcome{}, scheduler.Permanent(err)
	}
	z := Zone{BusinessUnitID: bu.ID, TimeZoneID: bu.TimeZoneID, Loc: loc}
	ref, err := localtime.ParseDate(row.ScheduledLocalDate)
	if err != nil {
		return scheduler.Outcome{}, scheduler.Permanent(fmt.Errorf("row local date: %w", err))
	}
	occ, err := DateOccurrences(set, src, z, ref, now, false)
	if err != nil {
		// The stored source no longer yields a valid date: the row cannot be what it was.
		return deact(automation.ReasonSuperseded)
	}
	var mine *Occurrence
	for i := range occ {
		if occ[i].SchedulerKey == row.SchedulerKey && occ[i].InputHash == row.InputHash {
			mine = &occ[i]
		}
	}
	if mine == nil {
		return deact(automation.ReasonSuperseded)
	}
	if now.Sub(row.ScheduledOn) > time.Duration(set.MaxLatenessHoursOrDefault())*time.Hour {
		return deact(automation.ReasonTooLate)
	}
	recipients := resolveRecipients(data[set.Recipients.Field])
	if len(recipients) == 0 {
		return deact(ReasonNoRecipients)
	}
	payload := Payload{SettingGuid: set.Guid, SettingName: set.Name, SourceType: src.EntityType, SourceGuid: src.EntityGuid,
		TargetDate: mine.Target.String(), OffsetDays: mine.OffsetDays, ScheduledOn: row.ScheduledOn.UTC().Format(time.RFC3339),
		LocalTime: row.ScheduledOn.In(loc).Format(time.RFC3339), TimeZoneID: bu.TimeZoneID}
	var reqs []delivery.Request
	for _, ch := range set.Channels {
		for _, r := range recipients {
			reqs = append(reqs, delivery.Request{SchedulerKey: row.SchedulerKey, BusinessUnitID: row.BusinessUnitID,
				Channel: ch, Recipient: r, Template: set.Template, Payload: payload})
		}
	}
	jobs, msgs, err := delivery.Build(reqs)
	if err != nil {
		return scheduler.Outcome{}, scheduler.Permanent(err)
	}
	out := scheduler.Outcome{Deliveries: jobs, Outbox: msgs}
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.DeliveryKey
	}
	out.DispatchResultJSON = mustJSON(map[string]any{"deliveryKeys": keys, "queue": delivery.DispatchQueue})
	if set.Annual {
		next, err := FollowingYear(set, src, z, *mine)
		if err != nil {
			return scheduler.Outcome{}, scheduler.Permanent(err)
		}
		out.FollowUps = []automation.Candidate{next.Candidate}
	}
	return out, nil
}

// resolveRecipients accepts one address or an array of addresses; blanks are dropped and
// the list is bounded by MaxRecipients.
func resolveRecipients(v any) []string {
	var out []string
	add := func(x any) {
		if s, ok := x.(string); ok && strings.TrimSpace(s) != "" && len(out) < MaxRecipients {
			out = append(out, strings.TrimSpace(s))
		}
	}
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			add(x)
		}
	default:
		add(t)
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
