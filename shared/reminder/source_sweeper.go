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
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
)

// SourceSweeper is the maintenance service that repairs what dropped events missed: one
// source sweep per (business unit, source type) with an active setting (sweep keys
// "source:{bu}:{type}", docs/architecture.md#reconciliation). Each sweep pages a
// SourceLister from its changed-since watermark and cursor, applies every source like an
// event and syncs it with the same key helpers; the pairs are taken round robin from a
// rotation pointer ("source-rotation") so that a run's budget reaches every pair in turn.
type SourceSweeper struct {
	Service *Service
	Config  SourceSweepConfig
	Clock   automation.Clock
	Log     *slog.Logger

	testSignals testSignals
}

// SourceSweepConfig tunes a SourceSweeper; a zero field takes its default.
type SourceSweepConfig struct {
	// BatchSize is the sources per page: 1..store.MaxBatch, default 100.
	BatchSize int
	// MaxBatches bounds the pages of one pass across every pair: at least 1, default 50.
	MaxBatches int
	// DueDays is the due window of a first pass: today..today+DueDays in the business
	// unit's zone, at least 1, default 14.
	DueDays int
	// BusinessUnits is the allowlist of business units swept (nil: every one).
	BusinessUnits *automation.Scope
	// Listers are the source listers by source type; a type without one uses
	// SnapshotLister (the pipeline's own snapshots). A nil lister is refused.
	Listers map[string]SourceLister
}

// Validate refuses a negative or too large field (zero means the default) and a nil lister.
func (c SourceSweepConfig) Validate() error {
	errs := []error{checkBatchSize("SourceSweepConfig", c.BatchSize), checkMaxBatches("SourceSweepConfig", c.MaxBatches)}
	if c.DueDays < 0 {
		errs = append(errs, fmt.Errorf("SourceSweepConfig.DueDays %d is negative (0 takes the default %d)", c.DueDays, defaultDueDays))
	}
	for typ, l := range c.Listers {
		if l == nil {
			errs = append(errs, fmt.Errorf("SourceSweepConfig.Listers: the lister of source type %q is nil", typ))
		}
	}
	return errors.Join(errs...)
}

func (c SourceSweepConfig) withDefaults() SourceSweepConfig {
	c.BatchSize = orDefault(c.BatchSize, defaultBatchSize)
	c.MaxBatches = orDefault(c.MaxBatches, defaultMaxBatches)
	c.DueDays = orDefault(c.DueDays, defaultDueDays)
	return c
}

// SourceSweepResult counts one pass: Sweeps are the (business unit, source type) pairs
// worked on, Batches the pages saved or attempted; Complete says a full round ended within
// the budget, without failures.
type SourceSweepResult SweepResult

func (r *SourceSweeper) logger() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// runOnce runs the source sweeps within Config.MaxBatches pages. A sweep whose page fails
// keeps its saved watermark and cursor (those of its last successful page) and the round
// goes on with the next pair; the failures are returned joined and Complete is then false.
func (r *SourceSweeper) runOnce(ctx context.Context) (SourceSweepResult, error) {
	var res SourceSweepResult
	if err := preflight(r.Config, r.Service != nil && r.Clock != nil, "SourceSweeper: Service and Clock are required"); err != nil {
		return res, err
	}
	done, err := r.sourceSweeps(ctx, r.Config.withDefaults(), r.Clock.Now().UTC(), &res)
	res.Complete = done && err == nil
	return res, err
}

// sourceSweeps runs the source sweeps of allowed (business unit, source type) pairs with an
// active setting, starting after the pair the previous run stopped at.
func (r *SourceSweeper) sourceSweeps(ctx context.Context, cfg SourceSweepConfig, now time.Time, res *SourceSweepResult) (bool, error) {
	st := r.Service.Store
	rot, err := st.ReconcileStateGet(ctx, sweepRotation)
	if errors.Is(err, store.ErrNotFound) {
		rot = store.ReconcileState{SweepKey: sweepRotation}
	} else if err != nil {
		return false, err
	}
	var after store.SettingSourcePair
	if rot.Cursor != "" {
		_ = json.Unmarshal([]byte(rot.Cursor), &after)
	}
	// One round at most: after the last pair swept (the rotation point) to the end, then
	// from the beginning up to and including that pair.
	var errs []error
	begin := after
	wrapped := false
	for cfg.MaxBatches-res.Batches > 0 {
		pairs, err := st.ReminderSettingListPairs(ctx, after, store.MaxBatch)
		if err != nil {
			return false, err
		}
		if len(pairs) == 0 {
			if wrapped || begin == (store.SettingSourcePair{}) {
				break
			}
			wrapped, after = true, store.SettingSourcePair{}
			continue
		}
		stop := false
		for _, p := range pairs {
			if cfg.MaxBatches-res.Batches <= 0 {
				stop = true
				break
			}
			if wrapped && pairLess(begin, p) {
				stop = true // past where this run began: a full round is done
				break
			}
			prev := after
			after = p
			if cfg.BusinessUnits != nil && !cfg.BusinessUnits.Allows(p.BusinessUnitID) {
				continue
			}
			run, err := r.sourceSweep(ctx, cfg, p, now, cfg.MaxBatches-res.Batches)
			(*SweepResult)(res).add(run)
			res.Sweeps++
			if err != nil {
				// The pair keeps its saved position; the rotation moves on so the pairs
				// after it are not starved by one that keeps failing.
				errs = append(errs, fmt.Errorf("source sweep %s/%s: %w", p.BusinessUnitID, p.SourceType, err))
				continue
			}
			if !run.Done {
				after = prev // the budget ran out inside this pair: resume with it next time
				stop = true
				break
			}
		}
		if stop {
			break
		}
	}
	b, _ := json.Marshal(after)
	rot.Cursor, rot.UpdatedOn = string(b), now
	if _, err := st.ReconcileStateSave(ctx, rot); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		errs = append(errs, err)
	}
	return cfg.MaxBatches-res.Batches > 0 && len(errs) == 0, errors.Join(errs...)
}

// sourceSweep runs one pass (or part of one) of source:{bu}:{type}: pages from the lister,
// each source applied like an event (a newer revision is stored as the snapshot) and synced;
// the watermark and cursor advance only after a successful batch.
func (r *SourceSweeper) sourceSweep(ctx context.Context, cfg SourceSweepConfig, p store.SettingSourcePair, now time.Time, maxBatches int) (sweepRun, error) {
	var run sweepRun
	svc := r.Service
	key := sourceSweepKey(p.BusinessUnitID, p.SourceType)
	st, err := svc.Store.ReconcileStateGet(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		st = store.ReconcileState{SweepKey: key}
	} else if err != nil {
		return run, err
	}
	bu, err := svc.Store.BusinessUnitGet(ctx, p.BusinessUnitID)
	if err != nil {
		return run, err
	}
	z, settings, versions, err := svc.unitSettings(ctx, bu, p.SourceType)
	if err != nil {
		return run, err
	}
	lister := cfg.Listers[p.SourceType]
	if lister == nil {
		lister = SnapshotLister{Store: svc.Store}
	}
	today := localtime.DateOf(now, z.Loc)
	for run.Batches < maxBatches {
		q := SourceQuery{BusinessUnitID: p.BusinessUnitID, SourceType: p.SourceType, Cursor: st.Cursor, Limit: cfg.BatchSize}
		if st.WatermarkOn != nil {
			q.ChangedSince = *st.WatermarkOn
		} else {
			q.ActiveOnly, q.DueFrom, q.DueTo = true, today, today.AddDays(cfg.DueDays)
		}
		page, err := lister.ListSources(ctx, q)
		if err != nil {
			return run, err
		}
		if len(page.Items) > cfg.BatchSize {
			return run, fmt.Errorf("lister returned %d sources for a page of %d", len(page.Items), cfg.BatchSize)
		}
		for _, item := range page.Items {
			sr, err := r.applyListed(ctx, settings, p, z, item, now)
			run.addSync(sr)
			if err != nil {
				return run, fmt.Errorf("source %s: %w", item.EntityGuid, err)
			}
			run.Sources++
			if st.PassHighOn == nil || item.ChangedOn.After(*st.PassHighOn) {
				c := item.ChangedOn.UTC()
				st.PassHighOn = &c
			}
		}
		// Settings changed while the batch ran: their propagation may have reached these
		// sources first and the batch undone it; sync them again with the current settings.
		if settings, versions, err = r.resyncListed(ctx, p, z, page.Items, settings, versions, now); err != nil {
			return run, err
		}
		run.Batches++
		st.Cursor, st.UpdatedOn = page.Cursor, now
		if len(page.Items) < cfg.BatchSize {
			// Pass complete: the next pass starts at the latest change seen (inclusive, so
			// a change recorded at that very instant is read again, harmlessly).
			// A pass that saw nothing keeps its watermark (an empty first pass stays a first
			// pass, cheap while there is nothing).
			if st.PassHighOn != nil {
				st.WatermarkOn = st.PassHighOn
			}
			st.PassHighOn, st.Cursor = nil, ""
			st.DoneGeneration = st.Generation
			run.Done = true
		}
		if st, err = svc.Store.ReconcileStateSave(ctx, st); err != nil {
			return run, ignoreLost(err)
		}
		r.testSignals.saved(key)
		if run.Done {
			return run, nil
		}
	}
	return run, nil
}

// resyncListed syncs the stored state of items again when the settings of the pair changed
// since versions were read (bounded, like the event path's resyncIfSettingsChanged), and
// returns the settings to go on with.
func (r *SourceSweeper) resyncListed(ctx context.Context, p store.SettingSourcePair, z Zone, items []ListedSource, settings []Setting, versions map[string]int64, now time.Time) ([]Setting, map[string]int64, error) {
	svc := r.Service
	for i := 0; i < maxSettingsResyncs; i++ {
		current, cv, err := svc.loadSettingsVersions(ctx, p.BusinessUnitID, p.SourceType)
		if err != nil {
			return settings, versions, err
		}
		if maps.Equal(cv, versions) {
			return settings, versions, nil
		}
		settings, versions = current, cv
		for _, item := range items {
			sn, err := svc.Store.SourceSnapshotGet(ctx, p.SourceType, item.EntityGuid)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return settings, versions, err
			}
			if sn.BusinessUnitID != p.BusinessUnitID {
				continue
			}
			src, err := sourceFromSnapshot(sn)
			if err != nil {
				return settings, versions, err
			}
			if _, err := svc.syncSource(ctx, settings, src, z, now, syncOptions{ReadOnlyEdges: true}); err != nil && !automation.IsInvalid(err) {
				return settings, versions, err
			}
		}
	}
	return settings, versions, nil
}

func pairLess(a, b store.SettingSourcePair) bool {
	if a.BusinessUnitID != b.BusinessUnitID {
		return a.BusinessUnitID < b.BusinessUnitID
	}
	return a.SourceType < b.SourceType
}

// applyListed applies one listed source like an event: a revision newer than the stored
// snapshot is stored and synced (recording threshold crossings at that revision); otherwise
// the stored snapshot, the pipeline's truth, is synced.
func (r *SourceSweeper) applyListed(ctx context.Context, settings []Setting, p store.SettingSourcePair, z Zone, item ListedSource, now time.Time) (syncResult, error) {
	svc := r.Service
	stored, err := svc.Store.SourceSnapshotGet(ctx, p.SourceType, item.EntityGuid)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && item.Revision > stored.Revision):
		sn := store.SourceSnapshot{EntityType: p.SourceType, EntityGuid: item.EntityGuid, BusinessUnitID: p.BusinessUnitID, Revision: item.Revision,
			IsDeleted: item.Deleted, DataJSON: item.DataJSON, LastEventID: fmt.Sprintf("reconciliation:%d", item.Revision), UpdatedOn: now}
		src, err := sourceFromSnapshot(sn)
		if err != nil {
			return syncResult{}, automation.Invalid("data", "%v", err)
		}
		if err := validateSource(settings, src, z, now); err != nil {
			// The domain app's data is bad: skip the source (an event would be rejected too).
			r.logger().Warn("reconciliation skipped an invalid source", "businessUnitId", p.BusinessUnitID, "entityType", p.SourceType, "entityGuid", item.EntityGuid, "error", err)
			return syncResult{}, nil
		}
		if _, err := svc.Store.SourceSnapshotApply(ctx, sn); err != nil {
			return syncResult{}, err
		}
		return svc.syncSource(ctx, settings, src, z, now, syncOptions{})
	case err != nil:
		return syncResult{}, err
	}
	if stored.BusinessUnitID != p.BusinessUnitID {
		return syncResult{}, nil // the source moved; its own unit's sweep covers it
	}
	src, err := sourceFromSnapshot(stored)
	if err != nil {
		return syncResult{}, err
	}
	sr, err := svc.syncSource(ctx, settings, src, z, now, syncOptions{ReadOnlyEdges: true})
	if automation.IsInvalid(err) {
		// The stored data is bad input under the current settings: skip it (its next event
		// is rejected the same way) rather than stop the sweep here on every run.
		r.logger().Warn("reconciliation skipped a stored source with bad data", "businessUnitId", p.BusinessUnitID, "entityType", p.SourceType,
			"entityGuid", item.EntityGuid, "step", "reconcile", "error", err)
		return sr, nil
	}
	return sr, err
}
