package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
)

// ReasonNoRecipients: at due time the source has no recipient in the setting's field.
const ReasonNoRecipients automation.ReasonCode = "NoRecipients"

// LocalTimeLayout is RFC 3339 with a numeric offset always (+00:00, never Z), so a local
// time is never mistaken for a UTC instant.
const LocalTimeLayout = "2006-01-02T15:04:05-07:00"

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
	// Source is the source snapshot's fields at execution time, for the template ({{.source.x}}).
	Source map[string]any `json:"source,omitempty"`
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
	// From here on, outcomes name the event that last shaped the source (logged with them).
	deact = func(r automation.ReasonCode) (scheduler.Outcome, error) {
		return scheduler.Outcome{Deactivate: r, SourceEventID: snap.LastEventID}, nil
	}
	src := Source{EntityType: snap.EntityType, EntityGuid: snap.EntityGuid, BusinessUnitID: snap.BusinessUnitID, Deleted: snap.IsDeleted, Data: data}
	if !src.Active() {
		return deact(automation.ReasonSourceNoLongerValid)
	}
	if src.BusinessUnitID != row.BusinessUnitID {
		return deact(automation.ReasonSuperseded) // the entity moved to another business unit
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
		// A support-retry row (automation.SupportRetryKey) stands for the occurrence whose
		// key it extends: same input, new key, so new delivery keys.
		sameKey := occ[i].SchedulerKey == row.SchedulerKey || automation.IsSupportRetryOf(row.SchedulerKey, occ[i].SchedulerKey)
		if sameKey && occ[i].InputHash == row.InputHash {
			mine = &occ[i]
		}
	}
	if mine == nil {
		return deact(automation.ReasonSuperseded)
	}
	// An annual chain continues whatever this year's occurrence ends as (sent, too late,
	// nobody to send to): next year's occurrence is ensured in the same transaction.
	var followUps []automation.Candidate
	if set.Annual {
		next, err := FollowingYear(set, src, z, *mine)
		if err != nil {
			return scheduler.Outcome{}, scheduler.Permanent(err)
		}
		followUps = []automation.Candidate{next.Candidate}
	}
	if now.Sub(row.ScheduledOn) > time.Duration(set.MaxLatenessHoursOrDefault())*time.Hour {
		return scheduler.Outcome{Deactivate: automation.ReasonTooLate, FollowUps: followUps, SourceEventID: snap.LastEventID}, nil
	}
	recipients, err := resolveRecipients(set.Recipients.Field, data[set.Recipients.Field])
	if err != nil {
		return scheduler.Outcome{}, scheduler.Permanent(err)
	}
	if len(recipients) == 0 {
		return scheduler.Outcome{Deactivate: ReasonNoRecipients, FollowUps: followUps, SourceEventID: snap.LastEventID}, nil
	}
	payload := Payload{SettingGuid: set.Guid, SettingName: set.Name, SourceType: src.EntityType, SourceGuid: src.EntityGuid,
		TargetDate: mine.Target.String(), OffsetDays: mine.OffsetDays, ScheduledOn: row.ScheduledOn.UTC().Format(time.RFC3339),
		LocalTime: row.ScheduledOn.In(loc).Format(LocalTimeLayout), TimeZoneID: bu.TimeZoneID, Source: data}
	var reqs []delivery.Request
	for _, ch := range set.Channels {
		for _, r := range recipients {
			reqs = append(reqs, delivery.Request{SchedulerKey: row.SchedulerKey, BusinessUnitID: row.BusinessUnitID,
				Channel: ch, Recipient: r, Template: set.Template, Payload: payload, LocalDate: row.ScheduledLocalDate})
		}
	}
	jobs, msgs, err := delivery.Build(reqs)
	if err != nil {
		return scheduler.Outcome{}, scheduler.Permanent(err)
	}
	out := scheduler.Outcome{Deliveries: jobs, Outbox: msgs, FollowUps: followUps, SourceEventID: snap.LastEventID}
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.DeliveryKey
	}
	out.DispatchResultJSON = mustJSON(map[string]any{"deliveryKeys": keys, "queue": delivery.DispatchQueue})
	return out, nil
}

// resolveRecipients accepts one address or an array of addresses from the source field;
// blank entries are dropped. More than MaxRecipients, a non-string entry, or an address with
// control characters (header injection) is an error naming the field: the row goes on
// support hold rather than silently sending to part of the list.
func resolveRecipients(field string, v any) ([]string, error) {
	var items []any
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		items = t
	default:
		items = []any{t}
	}
	if len(items) > MaxRecipients {
		return nil, fmt.Errorf("data.%s: %d recipients, more than the %d one occurrence may send to", field, len(items), MaxRecipients)
	}
	out := make([]string, 0, len(items))
	for i, x := range items {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("data.%s[%d]: recipient must be a string", field, i)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return nil, fmt.Errorf("data.%s[%d]: recipient contains control characters", field, i)
		}
		out = append(out, s)
	}
	return out, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
