package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/store"
)

// Store is what the reminder service, handler, settings service and reconciler need.
type Store interface {
	store.SchedulerStore
	store.ReminderStore
	store.LifecycleStore
	store.IdempotencyStore
}

// Service is the reminder trigger/invalidation provider for domain events (stage ①):
// it never sends anything, it only ensures and deactivates scheduler rows (docs/architecture.md#event-flow).
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

// Process runs the flow of one event (docs/architecture.md#event-flow): dedupe by id → resolve the business unit
// and its zone → load the settings for the source type → compute every occurrence (bad
// input is rejected here, before anything is stored) → store the snapshot (older revisions
// ignored) → deactivate rows that are no longer valid → ensure the occurrences (trigger
// providers, the immediate-notification provider, threshold levels with their rising-edge
// state) → mark the event processed. Every step is idempotent, so a crash anywhere is
// repaired by redelivery.
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
		events.MarkDuplicate(ctx) // the caller answers "duplicate" (events.WithOutcome)
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
	z, settings, versions, err := s.unitSettings(ctx, bu, ev.EntityType)
	if err != nil {
		return res, err
	}
	now := s.Clock.Now()
	src := Source{EntityType: ev.EntityType, EntityGuid: ev.EntityGuid, BusinessUnitID: bu.ID, Deleted: ev.Deleted, Data: ev.Data, Revision: ev.Revision}
	if v, ok := ev.Data["isActive"]; ok && v != nil {
		if _, isBool := v.(bool); !isBool {
			return res, automation.Invalid("data.isActive", "must be true or false, got %s", jsonText(v))
		}
	}
	if err := validateSource(settings, src, z, now); err != nil {
		return res, err
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
	sr, err := s.syncSource(ctx, settings, src, z, now, syncOptions{})
	res.Ensured, res.Deactivated = sr.Ensured, sr.Deactivated
	if err != nil {
		return res, err
	}
	if err := s.resyncIfSettingsChanged(ctx, bu.ID, src, z, now, versions, &res); err != nil {
		return res, err
	}
	return res, s.Store.EventMarkProcessed(ctx, ev.Source, ev.ID, now)
}

// maxSettingsResyncs bounds the re-syncs of one source after a concurrent settings change.
const maxSettingsResyncs = 3

// resyncIfSettingsChanged closes the race between an event and a settings change (docs/architecture.md#settings-changes) or a
// business unit's zone change: a change stored after the event read the settings (or the
// zone) may have been propagated to this source before the event's sync wrote the older
// state over it. Once the settings and zone read after the sync are the ones it used, the
// state is right (a later change's propagation syncs this source after that read);
// otherwise the source is synced again with the new ones. New settings under which the stored data is bad input are logged and left to their
// own propagation, which skips the source the same way.
func (s *Service) resyncIfSettingsChanged(ctx context.Context, buID string, src Source, z Zone, now time.Time, versions map[string]int64, res *EventResult) error {
	for i := 0; i < maxSettingsResyncs; i++ {
		settings, current, err := s.loadSettingsVersions(ctx, buID, src.EntityType)
		if err != nil {
			return err
		}
		// The business unit's zone too: a zone change re-times rows the same way.
		zone := z
		if bu, err := s.Store.BusinessUnitGet(ctx, buID); err == nil {
			if zone, err = zoneOf(bu); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if maps.Equal(current, versions) && zone.TimeZoneID == z.TimeZoneID {
			return nil
		}
		versions, z = current, zone
		sr, err := s.syncSource(ctx, settings, src, z, now, syncOptions{})
		for a, n := range sr.Ensured {
			res.Ensured[a] += n
		}
		res.Deactivated += sr.Deactivated
		if automation.IsInvalid(err) {
			s.logger().WarnContext(ctx, "changed settings find the event's data invalid; left to their propagation", "businessUnitId", buID,
				"entityType", src.EntityType, "entityGuid", src.EntityGuid, "error", err)
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// zoneOf loads a business unit's zone (businessunit.ZoneOf): an unusable zone is bad input
// naming the unit.
func zoneOf(bu store.BusinessUnit) (Zone, error) { return businessunit.ZoneOf(bu) }

// unitSettings is what syncing a business unit's sources of one type starts from (an event,
// a source sweep): the unit's zone (zoneOf) and its settings for the type with their
// Versions by guid (loadSettingsVersions).
func (s *Service) unitSettings(ctx context.Context, bu store.BusinessUnit, sourceType string) (Zone, []Setting, map[string]int64, error) {
	z, err := zoneOf(bu)
	if err != nil {
		return Zone{}, nil, nil, err
	}
	settings, versions, err := s.loadSettingsVersions(ctx, bu.ID, sourceType)
	return z, settings, versions, err
}

func (s *Service) loadSettings(ctx context.Context, buID, sourceType string) ([]Setting, error) {
	out, _, err := s.loadSettingsVersions(ctx, buID, sourceType)
	return out, err
}

// loadSettingsVersions loads the settings of one business unit and source type with their
// Versions by guid.
func (s *Service) loadSettingsVersions(ctx context.Context, buID, sourceType string) ([]Setting, map[string]int64, error) {
	recs, err := s.Store.ReminderSettingListBySource(ctx, buID, sourceType)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Setting, 0, len(recs))
	versions := make(map[string]int64, len(recs))
	for _, r := range recs {
		set, err := ParseSetting([]byte(r.Body))
		if err != nil {
			return nil, nil, fmt.Errorf("stored setting %s is invalid: %w", r.Guid, err)
		}
		out = append(out, set)
		versions[r.Guid] = r.Version
	}
	return out, versions, nil
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
