package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/store"
)

// Store is what the reminder service and handler need.
type Store interface {
	store.SchedulerStore
	store.ReminderStore
}

// Service is the reminder trigger/invalidation provider for domain events (stage ①):
// it never sends anything, it only ensures and deactivates scheduler rows (§4.2).
type Service struct {
	Store Store
	Clock automation.Clock
	// Channels lists the channel names settings may use (nil: any).
	Channels map[string]bool
	Log      *slog.Logger
}

var _ events.Handler = (*Service)(nil)

// EventOutcome says what happened to one event.
type EventOutcome string

// Event outcomes.
const (
	EventApplied   EventOutcome = "Applied"
	EventDuplicate EventOutcome = "Duplicate" // same source+id processed before: no-op
	EventStale     EventOutcome = "Stale"     // older revision than stored: ignored
)

// EventResult reports what HandleEvent did.
type EventResult struct {
	Outcome     EventOutcome
	Ensured     map[automation.EnsureAction]int
	Deactivated int
}

// HandleEvent implements events.Handler.
func (s *Service) HandleEvent(ctx context.Context, ev events.Event) error {
	_, err := s.Process(ctx, ev)
	return err
}

// maxRowsPerSource bounds the rows one event may inspect for invalidation.
const maxRowsPerSource = store.MaxBatch

// Process runs the flow of one event (§4.2): dedupe by id → resolve the business unit
// and its zone → load the settings for the source type → compute every occurrence (bad
// input is rejected here, before anything is stored) → store the snapshot (older revisions
// ignored) → deactivate rows that are no longer valid → ensure the occurrences → mark the
// event processed. Every step is idempotent, so a crash anywhere is repaired by redelivery.
// Errors: automation.Invalid for bad input (nothing stored); others are retryable.
func (s *Service) Process(ctx context.Context, ev events.Event) (EventResult, error) {
	res := EventResult{Ensured: map[automation.EnsureAction]int{}}
	ctx = logctx.With(ctx, logctx.SourceEventID, ev.ID, logctx.BusinessUnitID, ev.BusinessUnitID, logctx.Step, "event")
	done, err := s.Store.EventProcessed(ctx, ev.Source, ev.ID)
	if err != nil {
		return res, err
	}
	if done {
		res.Outcome = EventDuplicate
		return res, nil
	}
	bu, err := s.Store.BusinessUnitGet(ctx, ev.BusinessUnitID)
	switch {
	case errors.Is(err, store.ErrNotFound) && ev.Deleted:
		// A deletion needs no time zone: it only deactivates, so it is applied even when the
		// business unit is unknown (never let a deletion be lost).
		bu = store.BusinessUnit{ID: ev.BusinessUnitID, TimeZoneID: "UTC"}
	case errors.Is(err, store.ErrNotFound):
		return res, automation.Invalid("businessunitid", "unknown business unit %q", ev.BusinessUnitID)
	case err != nil:
		return res, err
	}
	loc, err := localtime.LoadZone(bu.TimeZoneID)
	if err != nil {
		return res, automation.Invalid("businessunitid", "business unit %q has an unusable time zone: %v", bu.ID, err)
	}
	z := Zone{BusinessUnitID: bu.ID, TimeZoneID: bu.TimeZoneID, Loc: loc}
	settings, err := s.loadSettings(ctx, bu.ID, ev.EntityType)
	if err != nil {
		return res, err
	}
	now := s.Clock.Now()
	src := Source{EntityType: ev.EntityType, EntityGuid: ev.EntityGuid, BusinessUnitID: bu.ID, Deleted: ev.Deleted, Data: ev.Data}
	if v, ok := ev.Data["isActive"]; ok && v != nil {
		if _, isBool := v.(bool); !isBool {
			return res, automation.Invalid("data.isActive", "must be true or false, got %s", jsonText(v))
		}
	}
	var want []automation.Candidate
	if src.Active() {
		today := localtime.DateOf(now, loc)
		for _, set := range settings {
			if !set.Active() {
				continue
			}
			occ, err := DateOccurrences(set, src, z, today, now, true)
			if err != nil {
				return res, err
			}
			for _, o := range occ {
				want = append(want, o.Candidate)
			}
		}
	}

	outcome, err := s.Store.SourceSnapshotApply(ctx, store.SourceSnapshot{
		EntityType: ev.EntityType, EntityGuid: ev.EntityGuid, BusinessUnitID: bu.ID, Revision: ev.Revision,
		IsDeleted: ev.Deleted, DataJSON: ev.DataJSON, LastEventID: ev.ID, UpdatedOn: now,
	})
	if err != nil {
		return res, err
	}
	if outcome == store.SnapshotStale {
		res.Outcome = EventStale
		s.logger().InfoContext(ctx, "older revision ignored", "sourceEventId", ev.ID, "businessUnitId", bu.ID, "entityType", ev.EntityType, "revision", ev.Revision)
		return res, s.Store.EventMarkProcessed(ctx, ev.Source, ev.ID, now)
	}
	res.Outcome = EventApplied

	// Deactivate first (§4.2): rows of this source that the current state no longer wants.
	if res.Deactivated, err = s.invalidate(ctx, src, settings, want, now); err != nil {
		return res, err
	}
	for start := 0; start < len(want); start += store.MaxBatch {
		end := min(start+store.MaxBatch, len(want))
		results, err := s.Store.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: want[start:end]})
		if err != nil {
			return res, err
		}
		for _, r := range results {
			res.Ensured[r.Action]++
			if r.Action == automation.EnsureConflict {
				s.logger().WarnContext(ctx, "scheduler key conflict: row put on support hold", "schedulerKey", r.Row.SchedulerKey, "sourceEventId", ev.ID,
					"businessUnitId", bu.ID, "step", "ensure", "errorCode", string(automation.ReasonInputHashConflict))
			}
		}
	}
	return res, s.Store.EventMarkProcessed(ctx, ev.Source, ev.ID, now)
}

func (s *Service) loadSettings(ctx context.Context, buID, sourceType string) ([]Setting, error) {
	recs, err := s.Store.ReminderSettingListBySource(ctx, buID, sourceType)
	if err != nil {
		return nil, err
	}
	out := make([]Setting, 0, len(recs))
	for _, r := range recs {
		set, err := ParseSetting([]byte(r.Body))
		if err != nil {
			return nil, fmt.Errorf("stored setting %s is invalid: %w", r.Guid, err)
		}
		out = append(out, set)
	}
	return out, nil
}

// invalidate deactivates this source's Pending/Failed reminder rows whose keys are not
// wanted any more, with the reason that explains why. Rows of settings of other business
// units are left alone.
func (s *Service) invalidate(ctx context.Context, src Source, settings []Setting, want []automation.Candidate, now time.Time) (int, error) {
	rows, err := s.Store.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: src.EntityType, SourceEntityGuid: src.EntityGuid, Limit: maxRowsPerSource})
	if err != nil {
		return 0, err
	}
	wanted := make(map[string]bool, len(want))
	for _, c := range want {
		wanted[c.SchedulerKey] = true
	}
	byGuid := make(map[string]*Setting, len(settings))
	for i := range settings {
		byGuid[settings[i].Guid] = &settings[i]
	}
	n := 0
	for _, r := range rows {
		if r.AutomationType != automation.TypeReminder || wanted[r.SchedulerKey] || supportRetryOfWanted(r.SchedulerKey, want) {
			continue
		}
		if r.Status != automation.StatusPending && r.Status != automation.StatusFailed {
			continue
		}
		reason := deactivationReason(src, r, byGuid[r.SettingGuid])
		err := s.Store.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r.ID, Token: r.Version, Now: now, Reason: reason})
		if err != nil {
			// ErrLeaseLost: the row changed since we read it (claimed by a poller, or another
			// event); the event is retried and the executor's revalidation covers the claim.
			return n, fmt.Errorf("deactivate %s: %w", r.SchedulerKey, err)
		}
		n++
	}
	return n, nil
}

// supportRetryOfWanted reports whether key is a support retry (automation.SupportRetryKey)
// of an occurrence still wanted: an operator's retry survives events that keep its
// occurrence, and is deactivated with it when the occurrence goes.
func supportRetryOfWanted(key string, want []automation.Candidate) bool {
	if _, ok := automation.SupportRetryVersion(key); !ok {
		return false
	}
	for _, c := range want {
		if automation.IsSupportRetryOf(key, c.SchedulerKey) {
			return true
		}
	}
	return false
}

// deactivationReason explains why a row of src is no longer wanted.
func deactivationReason(src Source, row automation.SchedulerRow, set *Setting) automation.ReasonCode {
	switch {
	case !src.Active():
		return automation.ReasonSourceNoLongerValid
	case row.BusinessUnitID != src.BusinessUnitID:
		return automation.ReasonSuperseded // the entity moved to another business unit
	case set == nil || !set.Active():
		return automation.ReasonReminderSettingInactive
	default:
		return automation.ReasonSuperseded
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// SettingRecord converts a validated setting to its stored form.
func SettingRecord(set Setting, version int64, updatedOn time.Time) (store.ReminderSettingRecord, error) {
	body, err := json.Marshal(set)
	if err != nil {
		return store.ReminderSettingRecord{}, err
	}
	return store.ReminderSettingRecord{Guid: set.Guid, BusinessUnitID: set.BusinessUnitID, SourceType: set.SourceType,
		TriggerType: string(set.TriggerType), IsActive: set.Active(), Body: string(body), Version: version, UpdatedOn: updatedOn}, nil
}
