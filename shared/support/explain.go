package support

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// Explanation answers "why did (or didn't) this source's reminder go out?": the source as
// the pipeline last saw it, every reminder setting that applies to it, and for each setting
// the occurrences it produced (or why none), each with its local and UTC times and what
// became of it.
type Explanation struct {
	AsOf         time.Time    `json:"asOf"`
	Source       SourceState  `json:"source"`
	BusinessUnit BusinessUnit `json:"businessUnit"`
	// IgnoredEvent is the latest event for this source that was ignored because its
	// revision was older than the stored one.
	IgnoredEvent *IgnoredEvent `json:"ignoredEvent,omitempty"`
	Settings     []Setting     `json:"settings"`
	// OtherRows are rows of this source whose setting no longer exists.
	OtherRows []Occurrence `json:"otherRows,omitempty"`
	// Summary is the answer in a few sentences, one per setting and per notable fact.
	Summary []string `json:"summary"`
}

// SourceState is the stored snapshot of the source (its latest accepted revision).
type SourceState struct {
	SourceType     string    `json:"sourceType"`
	SourceGuid     string    `json:"sourceGuid"`
	BusinessUnitID string    `json:"businessUnitId"`
	Revision       int64     `json:"revision"`
	LastEventID    string    `json:"lastEventId"`
	UpdatedOn      time.Time `json:"updatedOn"`
	Deleted        bool      `json:"deleted"`
	Active         bool      `json:"active"`
	// State is "active", "inactive" (data.isActive = false) or "deleted".
	State string `json:"state"`
}

// BusinessUnit is the source's business unit and its zone.
type BusinessUnit struct {
	ID         string `json:"id"`
	Name       string `json:"name,omitempty"`
	TimeZoneID string `json:"timeZoneId"`
	// LocalToday is today's date in the zone at AsOf (the late rule compares with it).
	LocalToday string `json:"localToday"`
}

// IgnoredEvent is an event dropped because the snapshot already held a newer revision.
type IgnoredEvent struct {
	EventID        string    `json:"eventId"`
	Revision       int64     `json:"revision"`
	StoredRevision int64     `json:"storedRevision"`
	StoredEventID  string    `json:"storedEventId"`
	ReceivedOn     time.Time `json:"receivedOn"`
	Explanation    string    `json:"explanation"`
}

// Setting is one reminder setting as it applies to the source.
type Setting struct {
	Guid             string `json:"guid"`
	Name             string `json:"name"`
	BusinessUnitID   string `json:"businessUnitId"`
	IsActive         bool   `json:"isActive"`
	TriggerKey       string `json:"triggerKey"`
	TriggerValue     any    `json:"triggerValue"`
	OffsetsDays      []int  `json:"offsetsDays"`
	SendLocalTime    string `json:"sendLocalTime"`
	Annual           bool   `json:"annual"`
	MaxLatenessHours int    `json:"maxLatenessHours"`
	// Recipients are the source's recipients for this setting now (masked); they are
	// resolved again when an occurrence comes due.
	Recipients []string `json:"recipients"`
	// Applies is true when the source, as stored, asks this setting for occurrences now;
	// otherwise Why says why none are wanted.
	Applies     bool         `json:"applies"`
	Why         string       `json:"why,omitempty"`
	Occurrences []Occurrence `json:"occurrences"`
}

// Occurrence is one occurrence: one row, or one the source and setting want without a row.
type Occurrence struct {
	SchedulerKey string `json:"schedulerKey"`
	TargetDate   string `json:"targetDate,omitempty"`
	OffsetDays   *int   `json:"offsetDays,omitempty"`
	// LocalDate, LocalTime and TimeZoneID are the business unit's local intent; ScheduledOn is
	// the UTC instant it resolves to and ScheduledLocal that instant with its local offset.
	LocalDate      string    `json:"localDate"`
	LocalTime      string    `json:"localTime"`
	TimeZoneID     string    `json:"timeZoneId"`
	ScheduledOn    time.Time `json:"scheduledOn"`
	ScheduledLocal string    `json:"scheduledLocal"`
	// DST notes a local time that did not exist (moved forward) or occurred twice (earlier).
	DST string `json:"dst,omitempty"`
	// Wanted is true when the source and setting, as stored now, ask for this occurrence.
	Wanted bool `json:"wanted"`
	// Row is the scheduler row (nil: none was created).
	Row *RowBrief `json:"row,omitempty"`
	// SupportRetryOf names the original row's key when this row is a support retry.
	SupportRetryOf string `json:"supportRetryOf,omitempty"`
	// Outcome is one word: Sent, Waiting, Due, Retrying, OnHold, Processing, Failed,
	// NotSent, Cancelled or NotCreated. Explanation says why, in a sentence.
	Outcome     string `json:"outcome"`
	ReasonCode  string `json:"reasonCode,omitempty"`
	Explanation string `json:"explanation"`
	// Deliveries notes the row's deliveries that a recipient's preference skipped or that
	// wait for quiet hours (a Sent row queued them; docs/channels.md#recipient-preferences).
	Deliveries []DeliveryNote `json:"deliveries,omitempty"`
}

// RowBrief is the part of a row an explanation needs.
type RowBrief struct {
	ID int64 `json:"id"`
	RowState
	CompletedOn *time.Time `json:"completedOn,omitempty"`
	CreatedOn   time.Time  `json:"createdOn"`
	UpdatedOn   time.Time  `json:"updatedOn"`
	Version     int64      `json:"version"`
}

// Explain explains one source entity (sourceType, sourceGuid). Errors: CodeMalformed when an
// argument is missing; CodeNotFound when no event for the source was ever accepted (events
// rejected as invalid are dead-lettered and have no rows) or its business unit is outside
// the scope.
func (s *Service) Explain(ctx context.Context, sc automation.Scope, sourceType, sourceGuid string) (Explanation, error) {
	if strings.TrimSpace(sourceType) == "" || strings.TrimSpace(sourceGuid) == "" {
		return Explanation{}, &automation.Error{Code: automation.CodeMalformed, Field: "sourceGuid", Message: "sourceType and sourceGuid are required"}
	}
	// One answer for "never accepted" and "outside your business units", word for word, so
	// that a caller cannot tell another business unit's source from a missing one.
	unknown := automation.Errorf(automation.CodeNotFound,
		"source %s/%s not found: no event for it was accepted (an event rejected as invalid is dead-lettered and creates nothing)", sourceType, sourceGuid)
	snap, snapErr := s.store.SourceSnapshotGet(ctx, sourceType, sourceGuid)
	if snapErr != nil && !errors.Is(snapErr, store.ErrNotFound) {
		return Explanation{}, snapErr
	}
	rows, err := s.store.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: sourceType, SourceEntityGuid: sourceGuid, Limit: store.MaxBatch})
	if err != nil {
		return Explanation{}, err
	}
	buID := snap.BusinessUnitID
	if snapErr != nil {
		if len(rows) == 0 {
			return Explanation{}, unknown
		}
		buID = rows[len(rows)-1].BusinessUnitID
	}
	if !sc.Allows(buID) {
		return Explanation{}, unknown
	}
	now := utc(s.clock.Now())
	x := Explanation{AsOf: now, Settings: []Setting{}, Summary: []string{}}
	// One read gives the zone and the role lists recipients resolve with.
	rec, err := s.store.BusinessUnitGetRecord(ctx, buID)
	bu, roles := rec.BusinessUnit, rec.Roles
	switch {
	case errors.Is(err, store.ErrNotFound):
		bu = store.BusinessUnit{ID: buID, TimeZoneID: "UTC"}
		x.Summary = append(x.Summary, "The business unit "+buID+" is unknown; times are shown in UTC.")
	case err != nil:
		return Explanation{}, err
	}
	loc, err := localtime.LoadZone(bu.TimeZoneID)
	if err != nil {
		loc, bu.TimeZoneID = time.UTC, "UTC"
	}
	z := businessunit.Zone{BusinessUnitID: bu.ID, TimeZoneID: bu.TimeZoneID, Loc: loc}
	today := localtime.DateOf(now, loc)
	x.BusinessUnit = BusinessUnit{ID: bu.ID, Name: bu.Name, TimeZoneID: bu.TimeZoneID, LocalToday: today.String()}

	src := reminder.Source{EntityType: sourceType, EntityGuid: sourceGuid, BusinessUnitID: buID, Data: map[string]any{}}
	if snapErr == nil {
		src.Deleted = snap.IsDeleted
		if snap.DataJSON != "" && snap.DataJSON != "null" {
			dec := json.NewDecoder(strings.NewReader(snap.DataJSON))
			dec.UseNumber()
			_ = dec.Decode(&src.Data) // a snapshot was stored only after its event parsed
			if src.Data == nil {
				src.Data = map[string]any{}
			}
		}
		x.Source = SourceState{SourceType: sourceType, SourceGuid: sourceGuid, BusinessUnitID: buID, Revision: snap.Revision,
			LastEventID: snap.LastEventID, UpdatedOn: snap.UpdatedOn, Deleted: snap.IsDeleted, Active: src.Active(), State: sourceState(src)}
		x.Summary = append(x.Summary, fmt.Sprintf("The source is %s as of revision %d (event %s, %s).", x.Source.State, snap.Revision, snap.LastEventID, stamp(snap.UpdatedOn)))
	} else {
		x.Source = SourceState{SourceType: sourceType, SourceGuid: sourceGuid, BusinessUnitID: buID, State: "unknown"}
		x.Summary = append(x.Summary, "No snapshot of the source is stored; only its rows explain it.")
	}
	if stale, err := s.store.SourceStaleEventGet(ctx, sourceType, sourceGuid); err == nil {
		ie := &IgnoredEvent{EventID: stale.EventID, Revision: stale.Revision, StoredRevision: stale.StoredRevision,
			StoredEventID: stale.StoredEventID, ReceivedOn: stale.ReceivedOn}
		ie.Explanation = fmt.Sprintf("Event %s (revision %d) arrived %s and was ignored: the stored snapshot was already at revision %d (event %s); "+
			"events older than the stored revision are out of order and never change reminders (docs/architecture.md#inputs).",
			stale.EventID, stale.Revision, stamp(stale.ReceivedOn), stale.StoredRevision, stale.StoredEventID)
		x.IgnoredEvent = ie
		x.Summary = append(x.Summary, ie.Explanation)
	} else if !errors.Is(err, store.ErrNotFound) {
		return Explanation{}, err
	}

	// Rows the caller may see, with their support audit.
	visible := rows[:0:0]
	for _, r := range rows {
		if sc.Allows(r.BusinessUnitID) {
			visible = append(visible, r)
		}
	}
	auditByRow := map[int64][]store.SupportAuditRecord{}
	if len(visible) > 0 {
		ids := make([]int64, len(visible))
		for i, r := range visible {
			ids[i] = r.ID
		}
		recs, err := s.store.SupportAuditList(ctx, ids, store.MaxBatch)
		if err != nil {
			return Explanation{}, err
		}
		for _, a := range recs {
			auditByRow[a.SchedulerID] = append(auditByRow[a.SchedulerID], a)
		}
	}

	settings, err := s.settingsFor(ctx, sc, buID, sourceType, visible)
	if err != nil {
		return Explanation{}, err
	}
	claimed := map[int64]bool{}
	for _, set := range settings {
		e := s.explainSetting(set, src, z, roles, today, now, visible, auditByRow, claimed)
		x.Settings = append(x.Settings, e)
		x.Summary = append(x.Summary, settingSummary(e))
	}
	for _, r := range visible {
		if claimed[r.ID] {
			continue
		}
		o := occurrenceFromRow(r, loc)
		explainRow(&o, r, auditByRow[r.ID], nil, src, now)
		o.Explanation = "Its setting " + r.SettingGuid + " no longer exists. " + o.Explanation
		x.OtherRows = append(x.OtherRows, o)
	}
	if len(x.Settings) == 0 {
		x.Summary = append(x.Summary, fmt.Sprintf("No reminder setting for %s exists in business unit %s: nothing is scheduled for this source.", sourceType, buID))
	}
	if err := s.addDeliveryNotes(ctx, &x); err != nil {
		return Explanation{}, err
	}
	return x, nil
}

func sourceState(src reminder.Source) string {
	switch {
	case src.Deleted:
		return "deleted"
	case !src.Active():
		return "inactive"
	}
	return "active"
}

// settingsFor returns the settings of the source's business unit and type, plus the
// settings its visible rows name (a source that moved business units keeps old rows).
func (s *Service) settingsFor(ctx context.Context, sc automation.Scope, buID, sourceType string, rows []automation.SchedulerRow) ([]reminder.Setting, error) {
	recs, err := s.store.ReminderSettingListBySource(ctx, buID, sourceType)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []reminder.Setting
	add := func(rec store.ReminderSettingRecord) {
		set, err := reminder.ParseSetting([]byte(rec.Body))
		if err != nil || seen[set.Guid] || !sc.Allows(set.BusinessUnitID) {
			return
		}
		seen[set.Guid] = true
		out = append(out, set)
	}
	for _, r := range recs {
		add(r)
	}
	for _, r := range rows {
		if r.SettingGuid == "" || seen[r.SettingGuid] {
			continue
		}
		rec, err := s.store.ReminderSettingGet(ctx, r.SettingGuid)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		add(rec)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || (out[i].Name == out[j].Name && out[i].Guid < out[j].Guid)
	})
	return out, nil
}

// explainSetting builds one setting's explanation: why it applies or not, then every
// occurrence it wants now and every row it produced.
func (s *Service) explainSetting(set reminder.Setting, src reminder.Source, z businessunit.Zone, roles map[string][]string, today localtime.Date, now time.Time,
	rows []automation.SchedulerRow, audit map[int64][]store.SupportAuditRecord, claimed map[int64]bool) Setting {
	e := Setting{Guid: set.Guid, Name: set.Name, BusinessUnitID: set.BusinessUnitID, IsActive: set.Active(), TriggerKey: set.TriggerKey,
		TriggerValue: maskValue(src.Data[set.TriggerKey]), OffsetsDays: set.OffsetsDays, Annual: set.Annual,
		MaxLatenessHours: set.MaxLatenessHoursOrDefault(), Recipients: settingRecipients(set, src, roles), Occurrences: []Occurrence{}}
	if set.SendLocalTime != nil {
		e.SendLocalTime = set.SendLocalTime.String()
	}
	var wanted []reminder.Occurrence
	date, hasDate, dateErr := reminder.TriggerDate(set, src.Data)
	switch {
	case !set.Active():
		e.Why = "The setting is inactive: it creates no occurrences, and its pending ones were deactivated (ReminderSettingInactive)."
	case set.BusinessUnitID != src.BusinessUnitID:
		e.Why = fmt.Sprintf("The setting belongs to business unit %s but the source is now in %s: its rows for this source were superseded.", set.BusinessUnitID, src.BusinessUnitID)
	case src.Deleted:
		e.Why = "The source was deleted: its reminders were deactivated (SourceNoLongerValid)."
	case !src.Active():
		e.Why = "The source is inactive (data.isActive is false): its reminders were deactivated (SourceNoLongerValid)."
	case dateErr != nil:
		e.Why = fmt.Sprintf("data.%s is not a usable date (%v): no occurrence can be computed.", set.TriggerKey, dateErr)
	case !hasDate:
		e.Why = fmt.Sprintf("data.%s is empty or missing: without a date there is no reminder.", set.TriggerKey)
	default:
		occ, err := reminder.DateOccurrences(set, src, z, today, now, true)
		if err != nil {
			e.Why = fmt.Sprintf("No occurrence can be computed from data.%s = %s: %v", set.TriggerKey, date, err)
			break
		}
		e.Applies = true
		wanted = occ
	}
	byKey := map[string]int{}
	for _, w := range wanted {
		o := occurrenceFromCandidate(w, z.Loc)
		o.Wanted = true
		byKey[o.SchedulerKey] = len(e.Occurrences)
		e.Occurrences = append(e.Occurrences, o)
	}
	for _, r := range rows {
		if r.SettingGuid != set.Guid {
			continue
		}
		claimed[r.ID] = true
		var o *Occurrence
		if i, ok := byKey[r.SchedulerKey]; ok {
			o = &e.Occurrences[i]
			o.ScheduledOn, o.ScheduledLocal = r.ScheduledOn, localString(r.ScheduledOn, r.TimeZoneID)
		} else {
			x := occurrenceFromRow(r, z.Loc)
			for _, w := range wanted {
				if automation.IsSupportRetryOf(r.SchedulerKey, w.SchedulerKey) {
					x.Wanted = true
				}
			}
			e.Occurrences = append(e.Occurrences, x)
			o = &e.Occurrences[len(e.Occurrences)-1]
		}
		explainRow(o, r, audit[r.ID], &set, src, now)
	}
	for i := range e.Occurrences {
		if e.Occurrences[i].Row == nil {
			explainMissingRow(&e.Occurrences[i], now)
		}
	}
	sort.SliceStable(e.Occurrences, func(i, j int) bool {
		a, b := e.Occurrences[i], e.Occurrences[j]
		if !a.ScheduledOn.Equal(b.ScheduledOn) {
			return a.ScheduledOn.Before(b.ScheduledOn)
		}
		return a.SchedulerKey < b.SchedulerKey
	})
	return e
}

func occurrenceFromCandidate(o reminder.Occurrence, loc *time.Location) Occurrence {
	off := o.OffsetDays
	x := Occurrence{SchedulerKey: o.SchedulerKey, TargetDate: o.Target.String(), OffsetDays: &off, LocalDate: o.ScheduledLocalDate,
		LocalTime: o.ScheduledLocalTime, TimeZoneID: o.TimeZoneID, ScheduledOn: o.ScheduledOn, ScheduledLocal: o.ScheduledOn.In(loc).Format(LocalLayout)}
	x.DST = dstNote(loc, o.ScheduledLocalDate, o.ScheduledLocalTime, o.TimeZoneID)
	return x
}

func occurrenceFromRow(r automation.SchedulerRow, fallback *time.Location) Occurrence {
	x := Occurrence{SchedulerKey: r.SchedulerKey, LocalDate: r.ScheduledLocalDate, LocalTime: r.ScheduledLocalTime,
		TimeZoneID: r.TimeZoneID, ScheduledOn: r.ScheduledOn, ScheduledLocal: localString(r.ScheduledOn, r.TimeZoneID)}
	if x.ScheduledLocal == "" {
		x.ScheduledLocal = r.ScheduledOn.In(fallback).Format(LocalLayout)
	}
	key := r.SchedulerKey
	if i := strings.LastIndex(key, ":support-retry:v"); i > 0 {
		if _, ok := automation.SupportRetryVersion(key); ok && !strings.Contains(key, "#sha256=") {
			key = key[:i]
		}
	}
	if target, off, ok := dateKeyParts(key); ok {
		x.TargetDate, x.OffsetDays = target, &off
	}
	if loc, err := localtime.LoadZone(r.TimeZoneID); err == nil {
		x.DST = dstNote(loc, r.ScheduledLocalDate, r.ScheduledLocalTime, r.TimeZoneID)
	}
	return x
}

// dateKeyParts reads {targetDate}:{offsetDays} from the end of a date-based reminder key.
func dateKeyParts(key string) (string, int, bool) {
	parts := strings.Split(key, ":")
	if len(parts) < 7 || parts[0] != "reminder" || strings.Contains(key, "#sha256=") {
		return "", 0, false
	}
	target, offText := parts[len(parts)-2], parts[len(parts)-1]
	if _, err := localtime.ParseDate(target); err != nil {
		return "", 0, false
	}
	off, err := strconv.Atoi(offText)
	if err != nil {
		return "", 0, false
	}
	return target, off, true
}

// dstNote says when the local wall time fell in a DST gap or overlap (the DST product rule,
// docs/architecture.md#date-based-reminders).
func dstNote(loc *time.Location, date, tod, zone string) string {
	d, err := localtime.ParseDate(date)
	if err != nil {
		return ""
	}
	t, err := localtime.ParseTimeOfDay(tod)
	if err != nil {
		return ""
	}
	at, res := localtime.ResolveDetail(loc, d, t)
	switch res {
	case localtime.Gap:
		return fmt.Sprintf("%s %s does not exist in %s (the clocks jump forward): it is sent at %s, moved forward by the gap.", date, tod, zone, at.In(loc).Format("15:04 MST"))
	case localtime.Overlap:
		return fmt.Sprintf("%s %s occurs twice in %s (the clocks go back): the earlier one, %s, is used.", date, tod, zone, at.In(loc).Format("15:04 MST"))
	}
	return ""
}

func brief(r automation.SchedulerRow) *RowBrief {
	return &RowBrief{ID: r.ID, RowState: rowState(r), CompletedOn: r.CompletedOn,
		CreatedOn: r.CreatedOn, UpdatedOn: r.UpdatedOn, Version: r.Version}
}

// explainRow fills o's outcome and explanation from its row (set may be nil: the setting is
// gone).
func explainRow(o *Occurrence, r automation.SchedulerRow, audit []store.SupportAuditRecord, set *reminder.Setting, src reminder.Source, now time.Time) {
	o.Row = brief(r)
	o.ReasonCode = string(r.ReasonCode)
	local := o.ScheduledLocal
	var text string
	switch r.Status {
	case automation.StatusCompleted:
		o.Outcome = "Sent"
		text = "Sent: the delivery was queued"
		if r.CompletedOn != nil {
			text += " at " + stamp(*r.CompletedOn)
		}
		text += " (due " + local + ")."
	case automation.StatusProcessing:
		o.Outcome = "Processing"
		text = "Being processed now (lease until " + leaseText(r) + "); its outcome follows shortly."
	case automation.StatusPending, automation.StatusFailed:
		switch {
		case r.IsOnSupportHold:
			o.Outcome = "OnHold"
			o.ReasonCode = string(r.FailureReasonCode)
			if r.FailureReasonCode == automation.ReasonInputHashConflict {
				text = fmt.Sprintf("On support hold: the same key arrived with different input (InputHash %.12s… kept, %.12s… rejected). Release it to send it as it is, or cancel it.", r.InputHash, r.ConflictInputHash)
			} else {
				text = fmt.Sprintf("On support hold after %d failed attempt(s) (%s): nothing is retried until support releases or retries it.", r.RetryCount, r.FailureReasonCode)
			}
		case r.Status == automation.StatusFailed:
			o.Outcome = "Failed"
			o.ReasonCode = string(r.FailureReasonCode)
			text = fmt.Sprintf("Failed after %d attempt(s) (%s).", r.RetryCount, r.FailureReasonCode)
		case r.NextRetryOn != nil && r.NextRetryOn.After(now):
			o.Outcome = "Retrying"
			o.ReasonCode = string(r.FailureReasonCode)
			text = fmt.Sprintf("Retrying: attempt %d failed (%s); the next attempt is at %s.", r.RetryCount, r.FailureReasonCode, stamp(*r.NextRetryOn))
		case r.ScheduledOn.After(now):
			o.Outcome = "Waiting"
			text = "Waiting: due at " + local + " (" + stamp(r.ScheduledOn) + ")."
		default:
			o.Outcome = "Due"
			text = "Due since " + local + ": the next due-work poll sends it."
			if set != nil && now.Sub(r.ScheduledOn) > time.Duration(set.MaxLatenessHoursOrDefault())*time.Hour {
				text += fmt.Sprintf(" It is already more than %d h late, so when it runs it is recorded TooLate and not sent.", set.MaxLatenessHoursOrDefault())
			}
		}
	case automation.StatusDeactivated:
		o.Outcome = "NotSent"
		text = "Not sent (" + string(r.ReasonCode) + "): " + deactivationText(r, set, src, o)
	case automation.StatusCancelled:
		o.Outcome = "Cancelled"
		text = "Cancelled (" + string(r.ReasonCode) + ")."
		if r.ReasonCode == automation.ReasonSupportCancelled {
			text = "Cancelled by support"
			for i := len(audit) - 1; i >= 0; i-- {
				if audit[i].Action == store.SupportCancel {
					text += fmt.Sprintf(" (%s, %s: %q)", audit[i].Operator, stamp(audit[i].CreatedOn), audit[i].Reason)
					break
				}
			}
			text += "; it stays cancelled when the same event or an unchanged source arrives again."
		}
	}
	if base := retryBase(r.SchedulerKey); base != "" {
		o.SupportRetryOf = base
		text = "Support retry of " + base + ". " + text
	}
	for _, a := range audit {
		if a.Action == store.SupportRetry && a.RetrySchedulerKey != "" {
			text += fmt.Sprintf(" Support retried it as %s (%s, %s).", a.RetrySchedulerKey, a.Operator, stamp(a.CreatedOn))
		}
		if a.Action == store.SupportRelease {
			text += fmt.Sprintf(" Support released its hold %s (%s).", stamp(a.CreatedOn), a.Operator)
		}
	}
	o.Explanation = text
}

// retryBase returns the original key of a support-retry key when it can be read back
// (not shortened), else "".
func retryBase(key string) string {
	if _, ok := automation.SupportRetryVersion(key); !ok {
		return ""
	}
	i := strings.LastIndex(key, ":support-retry:v")
	base := key[:i]
	if strings.Contains(base, "#sha256=") && len(key) == automation.MaxSchedulerKeyLength {
		return "(a shortened key)"
	}
	return base
}

// deactivationText explains a Deactivated row by its reason code.
func deactivationText(r automation.SchedulerRow, set *reminder.Setting, src reminder.Source, o *Occurrence) string {
	switch r.ReasonCode {
	case automation.ReasonMissedWindow:
		return fmt.Sprintf("its send time (%s) had already passed when the event that created it arrived (%s), and it was not that local day any more; "+
			"a late occurrence is only sent on its own local day (the late rule, docs/architecture.md#late-rule).", o.ScheduledLocal, stamp(r.CreatedOn))
	case automation.ReasonSuperseded:
		msg := "a later change made this occurrence unwanted"
		switch {
		case src.BusinessUnitID != "" && src.BusinessUnitID != r.BusinessUnitID:
			msg = fmt.Sprintf("the source moved from business unit %s to %s", r.BusinessUnitID, src.BusinessUnitID)
		case set != nil:
			if v, ok := src.Data[set.TriggerKey]; !ok || v == nil {
				msg = fmt.Sprintf("data.%s was removed from the source, so there is no date any more", set.TriggerKey)
			} else if o.TargetDate != "" {
				msg = fmt.Sprintf("data.%s changed from %s to %v", set.TriggerKey, o.TargetDate, maskValue(v))
			}
		}
		return msg + " (deactivated " + stamp(r.UpdatedOn) + ")."
	case automation.ReasonSourceNoLongerValid:
		if src.Deleted {
			return "the source was deleted (deactivated " + stamp(r.UpdatedOn) + ")."
		}
		return "the source became inactive (data.isActive is false; deactivated " + stamp(r.UpdatedOn) + ")."
	case automation.ReasonReminderSettingInactive:
		return "the reminder setting was deactivated (or removed) before it was due."
	case automation.ReasonTooLate:
		h := reminder.DefaultMaxLatenessHours
		if set != nil {
			h = set.MaxLatenessHoursOrDefault()
		}
		return fmt.Sprintf("it was picked up more than %d h after its time (%s): the pipeline was behind, and a stale reminder is not sent.", h, stamp(r.ScheduledOn))
	case reminder.ReasonNoRecipients:
		field := "the recipients field"
		if set != nil {
			field = "data." + set.Recipients.Field
		}
		return "when it came due the source had no recipient in " + field + "."
	case automation.ReasonConditionNoLongerMet:
		return "the threshold condition was no longer met."
	}
	return "deactivated " + stamp(r.UpdatedOn) + "."
}

// explainMissingRow explains an occurrence the source and setting want but that has no row.
func explainMissingRow(o *Occurrence, now time.Time) {
	o.Outcome = "NotCreated"
	if o.ScheduledOn.Before(now) {
		o.Explanation = "No row: its send time has passed and no event created it in time; if one arrives now it is recorded MissedWindow unless it is still that local day."
		return
	}
	o.Explanation = "No row yet: the last event for this source was processed before this setting or offset existed; the next event for the source (or reconciliation) creates it."
}

// settingSummary is one sentence per setting.
func settingSummary(e Setting) string {
	if len(e.Occurrences) == 0 {
		if e.Why != "" {
			return e.Name + ": no reminders. " + e.Why
		}
		return e.Name + ": no reminders."
	}
	counts := map[string]int{}
	var order []string
	for _, o := range e.Occurrences {
		k := o.Outcome
		if o.Outcome == "NotSent" && o.ReasonCode != "" {
			k = "not sent (" + o.ReasonCode + ")"
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[k], outcomeWords(k))
	}
	s := e.Name + ": " + strings.Join(parts, ", ") + "."
	if !e.Applies && e.Why != "" {
		s += " " + e.Why
	}
	return s
}

// outcomeWords writes an occurrence's outcome as words for a sentence: "OnHold" → "on hold",
// "NotCreated" → "not created" (issue 35: the summary read "1 onhold"). A label that is
// already words ("not sent (Expired)") is kept.
func outcomeWords(k string) string {
	if strings.ContainsAny(k, " (") {
		return k
	}
	var b strings.Builder
	for i, r := range k {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// maskValue masks personal data in a JSON value's strings.
func maskValue(v any) any {
	switch t := v.(type) {
	case string:
		return logmask.String(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = maskValue(x)
		}
		return out
	}
	return v
}

// settingRecipients lists, masked, whom the setting would send to now: the source field, the
// business unit's role list and the fixed list, resolved as at execution (docs/architecture.md#revalidation). When the
// policy cannot be resolved (a bad address in the data), the source field's entries as they are.
func settingRecipients(set reminder.Setting, src reminder.Source, roles map[string][]string) []string {
	all, err := reminder.ResolveRecipients(set.Recipients, src.Data, roles)
	if err != nil {
		return recipients(src.Data[set.Recipients.Field])
	}
	out := make([]string, 0, len(all))
	for _, r := range all {
		out = append(out, logmask.String(r))
	}
	return out
}

// recipients lists the masked recipient addresses of a source field (one or an array).
func recipients(v any) []string {
	out := []string{}
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) != "" {
			out = append(out, logmask.String(strings.TrimSpace(t)))
		}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, logmask.String(strings.TrimSpace(s)))
			}
		}
	}
	return out
}
