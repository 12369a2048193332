package reminder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// SettingsPropagator is the maintenance service that finishes settings changes still owed
// (sweep keys "setting:{guid}", docs/architecture.md#settings-changes): the settings API and
// replay run the first batches of a change inline and request the pass before the change is
// stored; whatever did not fit is applied here, with the same sync as the event path.
type SettingsPropagator struct {
	Service *Service
	Config  SettingsPropagatorConfig
	Clock   automation.Clock
	Log     *slog.Logger

	testSignals testSignals
}

// SettingsPropagatorConfig tunes a SettingsPropagator (PassConfig): a batch is BatchSize
// sources (or, for an inactive setting, open rows); MaxBatches bounds the batches of one
// pass across every owed setting.
type SettingsPropagatorConfig PassConfig

// Validate refuses a negative or too large field (zero means the default).
func (c SettingsPropagatorConfig) Validate() error {
	return PassConfig(c).check("SettingsPropagatorConfig")
}

// SettingsPropagationResult counts one pass: Sweeps are the owed settings worked on;
// Complete says no settings change is owed any more.
type SettingsPropagationResult SweepResult

// runOnce works through the owed settings changes, oldest request first, within
// Config.MaxBatches batches. A sweep that fails keeps its saved position (its last
// successful batch) and the pass goes on with the next owed setting; the failures are
// returned joined and Complete is then false.
func (p *SettingsPropagator) runOnce(ctx context.Context) (SettingsPropagationResult, error) {
	res := SettingsPropagationResult{}
	if err := preflight(p.Config, p.Service != nil && p.Clock != nil, "SettingsPropagator: Service and Clock are required"); err != nil {
		return res, err
	}
	cfg := PassConfig(p.Config).withDefaults()
	now := p.Clock.Now().UTC()
	owed, err := p.Service.Store.ReconcileStateListRequested(ctx, sweepSettingPrefix, store.MaxBatch)
	if err != nil {
		return res, err
	}
	res.Complete = true
	var errs []error
	for _, st := range owed {
		budget := cfg.MaxBatches - res.Batches
		if budget <= 0 {
			res.Complete = false
			break
		}
		guid := strings.TrimPrefix(st.SweepKey, sweepSettingPrefix)
		run, err := settingSweep(ctx, p.Service, guid, cfg.BatchSize, budget, now, p.testSignals)
		res.Sweeps++
		(*SweepResult)(&res).add(run)
		if err != nil {
			errs = append(errs, fmt.Errorf("setting sweep %s: %w", guid, err))
			continue
		}
		if !run.Done {
			res.Complete = false
		}
	}
	if len(errs) > 0 {
		res.Complete = false
	}
	return res, errors.Join(errs...)
}

// runSettingSweep continues the owed pass of "setting:{guid}" for at most maxBatches
// batches of batchSize: an active setting re-syncs its sources (its own rows only); an
// inactive one deactivates its open rows. Progress is saved after each successful batch,
// guarded by the state's Version (a newer request restarts the pass; this run then stops).
func runSettingSweep(ctx context.Context, svc *Service, guid string, batchSize, maxBatches int, now time.Time) (sweepRun, error) {
	return settingSweep(ctx, svc, guid, batchSize, maxBatches, now, testSignals{})
}

// settingSweep is runSettingSweep with the test hook sig.
func settingSweep(ctx context.Context, svc *Service, guid string, batchSize, maxBatches int, now time.Time, sig testSignals) (sweepRun, error) {
	var run sweepRun
	key := settingSweepKey(guid)
	st, err := svc.Store.ReconcileStateGet(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		run.Done = true
		return run, nil
	}
	if err != nil {
		return run, err
	}
	rec, err := svc.Store.ReminderSettingGet(ctx, guid)
	if errors.Is(err, store.ErrNotFound) {
		st.DoneGeneration, st.Cursor, st.UpdatedOn = st.Generation, "", now
		_, err = svc.Store.ReconcileStateSave(ctx, st)
		run.Done = err == nil
		return run, ignoreLost(err)
	}
	if err != nil {
		return run, err
	}
	set, err := ParseSetting([]byte(rec.Body))
	if err != nil {
		return run, fmt.Errorf("stored setting %s is invalid: %w", guid, err)
	}
	var z Zone
	if set.Active() {
		bu, err := svc.Store.BusinessUnitGet(ctx, set.BusinessUnitID)
		if err != nil {
			return run, fmt.Errorf("business unit %s: %w", set.BusinessUnitID, err)
		}
		if z, err = zoneOf(bu); err != nil {
			return run, err
		}
	}
	// Only this setting is evaluated (its own rows are the only ones touched): a source whose
	// data is bad for another setting does not stop this one.
	settings := []Setting{set}
	for run.Batches < maxBatches {
		if st.Generation <= st.DoneGeneration {
			run.Done = true
			return run, nil
		}
		cur, err := parseCursor(st.Cursor)
		if err != nil {
			cur = snapshotCursor{} // an unreadable cursor restarts the pass (idempotent)
		}
		n := 0
		var touched []sourceRef
		if set.Active() {
			snaps, err := svc.Store.SourceSnapshotList(ctx, store.SourceSnapshotListParams{BusinessUnitID: set.BusinessUnitID, EntityType: set.SourceType,
				AfterUpdatedOn: time.UnixMilli(cur.On).UTC(), AfterGuid: cur.Guid, IncludeDeleted: true, Limit: batchSize})
			if err != nil {
				return run, err
			}
			for _, sn := range snaps {
				src, err := sourceFromSnapshot(sn)
				if err != nil {
					return run, err
				}
				sr, err := svc.syncSource(ctx, settings, src, z, now, syncOptions{OnlySetting: set.Guid, ReadOnlyEdges: true})
				run.addSync(sr)
				if automation.IsInvalid(err) {
					// The stored data is bad input for this setting (its event would be
					// rejected now): the source keeps its rows; the pass goes on.
					svc.logger().WarnContext(ctx, "setting propagation skipped a source with bad data", "settingGuid", guid,
						"businessUnitId", set.BusinessUnitID, "entityType", sn.EntityType, "entityGuid", sn.EntityGuid, "step", "reconcile", "error", err)
				} else if err != nil {
					return run, fmt.Errorf("setting %s, source %s/%s: %w", guid, sn.EntityType, sn.EntityGuid, err)
				}
				run.Sources++
				touched = append(touched, sourceRef{sn.EntityType, sn.EntityGuid})
				cur = snapshotCursor{On: sn.UpdatedOn.UnixMilli(), Guid: sn.EntityGuid}
			}
			n = len(snaps)
		} else {
			rows, err := svc.Store.SchedulerListBySetting(ctx, store.SchedulerListBySettingParams{SettingGuid: set.Guid, AfterID: cur.ID, Limit: batchSize})
			if err != nil {
				return run, err
			}
			for _, r := range rows {
				err := svc.Store.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r.ID, Token: r.Version, Now: now, Reason: automation.ReasonReminderSettingInactive})
				switch {
				case err == nil:
					run.Deactivated++
				case errors.Is(err, store.ErrLeaseLost):
					// Claimed meanwhile: the executor's revalidation finds the setting inactive.
				default:
					return run, err
				}
				touched = append(touched, sourceRef{r.SourceEntityType, r.SourceEntityGuid})
				cur = snapshotCursor{ID: r.ID}
			}
			n = len(rows)
		}
		run.Batches++
		// A newer version stored while this batch ran may already have been propagated to
		// these sources, and this batch undone it: sync them again with the newest version
		// and leave the rest of the pass to the newer version's own (it was requested with it).
		if newer, err := resyncWithNewest(ctx, svc, guid, rec.Version, touched, now); err != nil || newer {
			return run, err
		}
		st.Cursor, st.UpdatedOn = cur.String(), now
		if n < batchSize {
			st.DoneGeneration, st.Cursor = st.Generation, ""
		}
		if st, err = svc.Store.ReconcileStateSave(ctx, st); err != nil {
			return run, ignoreLost(err)
		}
		sig.saved(key)
	}
	run.Done = st.Generation <= st.DoneGeneration
	return run, nil
}

// sourceRef names one source.
type sourceRef struct{ entityType, entityGuid string }

// resyncWithNewest syncs touched again with the newest version of setting guid when it is
// newer than version (bounded: a version stored during the re-sync is handled the same
// way). newer reports whether there was one.
func resyncWithNewest(ctx context.Context, svc *Service, guid string, version int64, touched []sourceRef, now time.Time) (newer bool, err error) {
	for i := 0; i < maxSettingsResyncs; i++ {
		rec, err := svc.Store.ReminderSettingGet(ctx, guid)
		if errors.Is(err, store.ErrNotFound) {
			return true, nil
		}
		if err != nil || rec.Version == version {
			return newer, err
		}
		newer, version = true, rec.Version
		set, err := ParseSetting([]byte(rec.Body))
		if err != nil {
			return newer, fmt.Errorf("stored setting %s is invalid: %w", guid, err)
		}
		bu, err := svc.Store.BusinessUnitGet(ctx, set.BusinessUnitID)
		if err != nil {
			return newer, fmt.Errorf("business unit %s: %w", set.BusinessUnitID, err)
		}
		z, err := zoneOf(bu)
		if err != nil {
			return newer, err
		}
		for _, ref := range touched {
			sn, err := svc.Store.SourceSnapshotGet(ctx, ref.entityType, ref.entityGuid)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return newer, err
			}
			if sn.BusinessUnitID != set.BusinessUnitID {
				continue // moved away: revalidation supersedes its rows of this setting
			}
			src, err := sourceFromSnapshot(sn)
			if err != nil {
				return newer, err
			}
			if _, err := svc.syncSource(ctx, []Setting{set}, src, z, now, syncOptions{OnlySetting: guid, ReadOnlyEdges: true}); err != nil && !automation.IsInvalid(err) {
				return newer, err
			}
		}
	}
	return newer, nil
}
