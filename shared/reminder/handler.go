package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// ReasonNoRecipients: at due time the source has no recipient in the setting's field.
const ReasonNoRecipients automation.ReasonCode = "NoRecipients"

// LocalTimeLayout is RFC 3339 with a numeric offset always (+00:00, never Z), so a local
// time is never mistaken for a UTC instant.
const LocalTimeLayout = "2006-01-02T15:04:05-07:00"

// MaxRecipients bounds the recipients one occurrence may fan out to.
const MaxRecipients = 100

// MaxRecipientChars bounds one recipient (UTF-16 code units): the NotificationJob.Recipient
// column (nvarchar(2000), migration 0007: an e-mail address is at most 320 characters, a
// webhook URL at most 2000; each channel validates its own).
const MaxRecipientChars = 2000

// Handler executes due reminder rows (stage ②, docs/architecture.md#revalidation): it reloads the setting, the source
// snapshot and the business unit, recomputes the occurrence, and either deactivates the row
// with a reason code or returns the delivery requests (recipients and channels resolved
// now) plus, for annual settings, the following year's occurrence.
type Handler struct {
	Store Store
	// parsed keeps each setting's last parse across batches (loadSetting); zero: empty.
	parsed settingParses
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
	// Overdue marks the immediate notification of a source first seen after its target date.
	Overdue bool `json:"overdue,omitempty"`
	// Threshold firings: the metric, its value at due time (decimal), the level the row
	// fired for (OncePerSource: the highest level reached) and the firing policy.
	MetricKey      string `json:"metricKey,omitempty"`
	MetricValue    string `json:"metricValue,omitempty"`
	ThresholdLevel string `json:"thresholdLevel,omitempty"`
	FiringPolicy   string `json:"firingPolicy,omitempty"`
}

// Execute implements scheduler.Handler. Revalidation (docs/architecture.md#revalidation): the setting, the source
// snapshot, the business unit (zone and role lists) are reloaded and the row's occurrence is
// recomputed with the same key helpers as the event path; the outcomes
// ReminderSettingInactive, SourceNoLongerValid, Superseded, ConditionNoLongerMet, TooLate
// and NoRecipients deactivate the row (outcomes, not failures). Recipients and channels are
// resolved now, from the setting's current recipient policy and channels.
func (h *Handler) Execute(ctx context.Context, row automation.SchedulerRow, now time.Time) (scheduler.Outcome, error) {
	deact := func(r automation.ReasonCode) (scheduler.Outcome, error) { return scheduler.Outcome{Deactivate: r}, nil }
	se, err := h.loadSetting(ctx, row.SettingGuid)
	if errors.Is(err, store.ErrNotFound) {
		return deact(automation.ReasonReminderSettingInactive)
	}
	if err != nil {
		return scheduler.Outcome{}, err
	}
	set := se.set
	if !set.Active() {
		return deact(automation.ReasonReminderSettingInactive)
	}
	sn, err := h.loadSnapshot(ctx, row.SourceEntityType, row.SourceEntityGuid)
	if errors.Is(err, store.ErrNotFound) {
		return deact(automation.ReasonSourceNoLongerValid)
	}
	if err != nil {
		return scheduler.Outcome{}, err
	}
	snap, data := sn.snap, sn.data
	// From here on, outcomes name the event that last shaped the source (logged with them).
	deact = func(r automation.ReasonCode) (scheduler.Outcome, error) {
		return scheduler.Outcome{Deactivate: r, SourceEventID: snap.LastEventID}, nil
	}
	src := Source{EntityType: snap.EntityType, EntityGuid: snap.EntityGuid, BusinessUnitID: snap.BusinessUnitID, Deleted: snap.IsDeleted, Data: data, Revision: snap.Revision}
	if !src.Active() {
		return deact(automation.ReasonSourceNoLongerValid)
	}
	if src.BusinessUnitID != row.BusinessUnitID || set.BusinessUnitID != row.BusinessUnitID {
		return deact(automation.ReasonSuperseded) // the entity (or setting) moved to another business unit
	}
	ue, err := h.loadUnit(ctx, row.BusinessUnitID)
	if err != nil {
		return scheduler.Outcome{}, err
	}
	bu, loc := ue.bu, ue.loc
	z := Zone{BusinessUnitID: bu.ID, TimeZoneID: bu.TimeZoneID, Loc: loc}

	var (
		payload   Payload
		followUps []automation.Candidate
	)
	switch {
	case row.TriggerType == automation.TriggerThresholdCondition:
		if set.TriggerType != automation.TriggerThresholdCondition {
			return deact(automation.ReasonSuperseded)
		}
		p, reason, err := h.revalidateThreshold(ctx, set, src, z, row)
		if err != nil || reason != "" {
			return scheduler.Outcome{Deactivate: reason, SourceEventID: snap.LastEventID}, err
		}
		payload = p
	default:
		p, next, reason, err := revalidateDate(set, src, z, row, now)
		if err != nil || reason != "" {
			return scheduler.Outcome{Deactivate: reason, SourceEventID: snap.LastEventID}, err
		}
		payload = p
		followUps = next
	}
	// An annual chain continues whatever this year's occurrence ends as (sent, too late,
	// nobody to send to): next year's occurrence is ensured in the same transaction.
	if now.Sub(row.ScheduledOn) > time.Duration(set.MaxLatenessHoursOrDefault())*time.Hour {
		return scheduler.Outcome{Deactivate: automation.ReasonTooLate, FollowUps: followUps, SourceEventID: snap.LastEventID}, nil
	}
	recipients, err := ResolveRecipients(set.Recipients, data, bu.Roles)
	if err != nil {
		return scheduler.Outcome{}, automation.Permanent(err)
	}
	if len(recipients) == 0 {
		return scheduler.Outcome{Deactivate: ReasonNoRecipients, FollowUps: followUps, SourceEventID: snap.LastEventID}, nil
	}
	payload.SettingGuid, payload.SettingName, payload.SourceType, payload.SourceGuid = set.Guid, set.Name, src.EntityType, src.EntityGuid
	payload.ScheduledOn = row.ScheduledOn.UTC().Format(time.RFC3339)
	payload.LocalTime = row.ScheduledOn.In(loc).Format(LocalTimeLayout)
	payload.TimeZoneID = bu.TimeZoneID
	payload.Source = data
	var reqs []delivery.Request
	for _, ch := range set.Channels {
		for _, r := range recipients {
			reqs = append(reqs, delivery.Request{SchedulerKey: row.SchedulerKey, BusinessUnitID: row.BusinessUnitID,
				Channel: ch, Recipient: r, Template: set.Template, Payload: payload, LocalDate: row.ScheduledLocalDate})
		}
	}
	jobs, msgs, err := delivery.Build(reqs)
	if err != nil {
		return scheduler.Outcome{}, automation.Permanent(err)
	}
	out := scheduler.Outcome{Deliveries: jobs, Outbox: msgs, FollowUps: followUps, SourceEventID: snap.LastEventID}
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.DeliveryKey
	}
	out.DispatchResultJSON = mustJSON(map[string]any{"deliveryKeys": keys, "queue": topology.NotificationDispatchQueue})
	return out, nil
}

// revalidateDate recomputes a DateBased row (an offset occurrence or the overdue
// notification) from the reloaded setting and source. A reason means "deactivate".
func revalidateDate(set Setting, src Source, z Zone, row automation.SchedulerRow, now time.Time) (Payload, []automation.Candidate, automation.ReasonCode, error) {
	if set.TriggerType != automation.TriggerDateBased {
		return Payload{}, nil, automation.ReasonSuperseded, nil
	}
	ref, err := localtime.ParseDate(row.ScheduledLocalDate)
	if err != nil {
		return Payload{}, nil, "", automation.Permanent(fmt.Errorf("row local date: %w", err))
	}
	if c, target, ok, err := overdueCandidate(set, src, z, now); err == nil && ok && sameOccurrenceKey(row.SchedulerKey, c.SchedulerKey) {
		if c.InputHash != row.InputHash {
			return Payload{}, nil, automation.ReasonSuperseded, nil
		}
		return Payload{TargetDate: target.String(), Overdue: true}, nil, "", nil
	}
	occ, err := DateOccurrences(set, src, z, ref, now, false)
	if err != nil {
		// The stored source no longer yields a valid date: the row cannot be what it was.
		return Payload{}, nil, automation.ReasonSuperseded, nil
	}
	var mine *Occurrence
	for i := range occ {
		if sameOccurrenceKey(row.SchedulerKey, occ[i].SchedulerKey) && occ[i].InputHash == row.InputHash {
			mine = &occ[i]
		}
	}
	if mine == nil {
		return Payload{}, nil, automation.ReasonSuperseded, nil
	}
	var followUps []automation.Candidate
	if set.Annual {
		next, err := FollowingYear(set, src, z, *mine)
		if err != nil {
			return Payload{}, nil, "", automation.Permanent(err)
		}
		followUps = []automation.Candidate{next.Candidate}
	}
	return Payload{TargetDate: mine.Target.String(), OffsetDays: mine.OffsetDays}, followUps, "", nil
}

// revalidateThreshold recomputes a ThresholdCondition row at due time: the metric from the
// reloaded snapshot, the level the row fired for, and (FalseToTrue) the current edge.
func (h *Handler) revalidateThreshold(ctx context.Context, set Setting, src Source, z Zone, row automation.SchedulerRow) (Payload, automation.ReasonCode, error) {
	ev, err := evalThreshold(set, src.Data)
	if err != nil {
		return Payload{}, automation.ReasonSuperseded, nil
	}
	var wantKey string
	lvlText := ""
	switch set.Threshold.FiringPolicy {
	case OncePerSource:
		if !ev.anyReached() {
			return Payload{}, thresholdRowReason(set, src, z, ev, row), nil
		}
		c, err := thresholdCandidate(set, src, z, nil, "src", row.ScheduledOn)
		if err != nil {
			return Payload{}, automation.ReasonSuperseded, nil
		}
		wantKey, lvlText = c.SchedulerKey, ev.highest()
	default:
		// The level the row fired for: the level whose key, under the row's scope (its local
		// day, or the level's current rising edge), is the row's key. Whole keys are compared:
		// an over-long key is shortened with a hash (docs/architecture.md#scheduler-keys), so a prefix would not match.
		found, met := -1, false
		for i := range ev.levels {
			lvl := &ev.levels[i]
			scope, edgeMet := "src", true
			switch set.Threshold.FiringPolicy {
			case OncePerDay:
				scope = "d" + row.ScheduledLocalDate
			case FalseToTrue:
				e, err := h.Store.ThresholdEdgeGet(ctx, set.Guid, src.EntityType, src.EntityGuid, lvl.text)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return Payload{}, "", err
				}
				scope, edgeMet = "e"+strconv.FormatInt(e.EdgeCount, 10), e.IsMet
			}
			c, err := thresholdCandidate(set, src, z, lvl, scope, row.ScheduledOn)
			if err == nil && sameOccurrenceKey(row.SchedulerKey, c.SchedulerKey) {
				found, met = i, edgeMet
				break
			}
		}
		if found < 0 {
			// A level edited away, an older day or edge, or a level no longer reached.
			return Payload{}, thresholdRowReason(set, src, z, ev, row), nil
		}
		if !ev.reached[found] || !met {
			return Payload{}, automation.ReasonConditionNoLongerMet, nil
		}
		wantKey, lvlText = row.SchedulerKey, ev.levels[found].text
	}
	if !sameOccurrenceKey(row.SchedulerKey, wantKey) {
		return Payload{}, automation.ReasonSuperseded, nil
	}
	return Payload{MetricKey: set.Threshold.Metric.Key, MetricValue: metricText(ev.value), ThresholdLevel: lvlText,
		FiringPolicy: string(set.Threshold.FiringPolicy)}, "", nil
}

// ResolveRecipients resolves a recipient policy at execution time (docs/architecture.md#revalidation): the addresses in
// the source's data field (one address or an array), the business unit's role list, and the
// fixed list - in that order, blank entries dropped, duplicates removed. More than
// MaxRecipients, a non-string entry, or an address with control characters (header
// injection) is an error naming its origin: the row goes on support hold rather than
// silently sending to part of the list.
func ResolveRecipients(p RecipientPolicy, data map[string]any, roles map[string][]string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(list []string) error {
		for _, r := range list {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
		if len(out) > MaxRecipients {
			return fmt.Errorf("%d recipients, more than the %d one occurrence may send to", len(out), MaxRecipients)
		}
		return nil
	}
	if p.Field != "" {
		list, err := resolveRecipients("data."+p.Field, data[p.Field])
		if err != nil {
			return nil, err
		}
		if err := add(list); err != nil {
			return nil, fmt.Errorf("data.%s: %w", p.Field, err)
		}
	}
	for _, part := range []struct {
		name string
		list []string
	}{{"roles." + p.Role, roles[p.Role]}, {"recipients.fixed", p.Fixed}} {
		if len(part.list) == 0 {
			continue
		}
		items := make([]any, len(part.list))
		for i, a := range part.list {
			items[i] = a
		}
		list, err := resolveRecipients(part.name, items)
		if err != nil {
			return nil, err
		}
		if err := add(list); err != nil {
			return nil, fmt.Errorf("%s: %w", part.name, err)
		}
	}
	return out, nil
}

// resolveRecipients accepts one address or an array of addresses from one origin (a source
// field, a role list, the fixed list);
// blank entries are dropped. More than MaxRecipients, a non-string entry, an address with
// control characters (header injection) or longer than MaxRecipientChars is an error naming
// the field: the row goes on support hold rather than silently sending to part of the list.
func resolveRecipients(origin string, v any) ([]string, error) {
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
		return nil, fmt.Errorf("%s: %d recipients, more than the %d one occurrence may send to", origin, len(items), MaxRecipients)
	}
	out := make([]string, 0, len(items))
	for i, x := range items {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: recipient must be a string", origin, i)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return nil, fmt.Errorf("%s[%d]: recipient contains control characters", origin, i)
		}
		if n := len(utf16.Encode([]rune(s))); n > MaxRecipientChars {
			return nil, fmt.Errorf("%s[%d]: recipient is %d characters, more than %d", origin, i, n, MaxRecipientChars)
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

// sameOccurrenceKey reports whether a row with rowKey stands for the occurrence keyed
// wantKey: the same key, or a support retry of it (automation.SupportRetryKey: same input,
// new key, so new delivery keys).
func sameOccurrenceKey(rowKey, wantKey string) bool {
	return rowKey == wantKey || automation.IsSupportRetryOf(rowKey, wantKey)
}
