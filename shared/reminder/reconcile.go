package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
)

// Bounded reconciliation (docs/architecture.md#reconciliation). There is no automation outbox: events are
// the fast path and these sweeps repair what they missed, each bounded, resumable and using
// the same sync (same key helpers) as the event path:
//
//	sweep              key                   pages                          advances
//	setting change     setting:{guid}        the setting's sources (or its  after each successful batch; a
//	                                         open rows when inactive)       new request restarts the pass
//	source             source:{bu}:{type}    a SourceLister (snapshots, or  changed-since watermark + cursor,
//	                                         the domain app over HTTP)      only after a successful batch
//	tzdata resync      tzdata                Pending rows due in the future  marker = tzdata version when done
//	idempotency purge  -                     Idempotency-Key records        bounded deletes
//
// A run spends at most MaxBatches batches in total, settings first, so one huge sweep
// cannot starve the others; source sweeps resume from a rotation pointer.

// Sweep keys.
const (
	sweepSettingPrefix = "setting:"
	sweepSourcePrefix  = "source:"
	sweepTZData        = "tzdata"
	sweepRotation      = "source-rotation"
)

func settingSweepKey(guid string) string { return sweepSettingPrefix + guid }

func sourceSweepKey(bu, sourceType string) string {
	return sweepSourcePrefix + bu + ":" + sourceType
}

// sweepRun counts one sweep's work.
type sweepRun struct {
	Batches     int
	Sources     int
	Deactivated int
	Ensured     map[automation.EnsureAction]int
	Done        bool // the pass completed
}

func (r *sweepRun) addSync(s syncResult) {
	if r.Ensured == nil {
		r.Ensured = map[automation.EnsureAction]int{}
	}
	for k, v := range s.Ensured {
		r.Ensured[k] += v
	}
	r.Deactivated += s.Deactivated
}

// snapshotCursor is the keyset position of a snapshot page.
type snapshotCursor struct {
	On   int64  `json:"on"` // UpdatedOn, Unix ms
	Guid string `json:"g"`
	ID   int64  `json:"id,omitempty"` // rows by Id (inactive-setting phase, tzdata resync)
	// TZ is the tzdata version a resync in progress recomputes with: a position of another
	// version is not resumed (the rows before it were not resynced with this one).
	TZ string `json:"tz,omitempty"`
}

func parseCursor(s string) (snapshotCursor, error) {
	var c snapshotCursor
	if s == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return c, fmt.Errorf("sweep cursor %q: %w", s, err)
	}
	return c, nil
}

func (c snapshotCursor) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// sourceFromSnapshot decodes a stored snapshot.
func sourceFromSnapshot(sn store.SourceSnapshot) (Source, error) {
	var data map[string]any
	dec := json.NewDecoder(strings.NewReader(sn.DataJSON))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		return Source{}, fmt.Errorf("snapshot %s/%s is not JSON: %w", sn.EntityType, sn.EntityGuid, err)
	}
	if data == nil {
		data = map[string]any{}
	}
	return Source{EntityType: sn.EntityType, EntityGuid: sn.EntityGuid, BusinessUnitID: sn.BusinessUnitID,
		Deleted: sn.IsDeleted, Data: data, Revision: sn.Revision}, nil
}

// runSettingSweep continues the owed pass of "setting:{guid}" for at most maxBatches
// batches of batchSize: an active setting re-syncs its sources (its own rows only); an
// inactive one deactivates its open rows. Progress is saved after each successful batch,
// guarded by the state's Version (a newer request restarts the pass; this run then stops).
func runSettingSweep(ctx context.Context, svc *Service, guid string, batchSize, maxBatches int, now time.Time) (sweepRun, error) {
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

// ignoreLost: another runner (or a new request) moved the sweep on; not an error.
func ignoreLost(err error) error {
	if errors.Is(err, store.ErrLeaseLost) {
		return nil
	}
	return err
}

// --- source listers ------------------------------------------------------------------

// SourceQuery asks a SourceLister for one page of sources of one business unit and type.
type SourceQuery struct {
	BusinessUnitID string
	SourceType     string
	// ChangedSince (UTC) is the pass's watermark: sources changed at or after it. Zero on a
	// first pass, which instead is bounded by ActiveOnly and the due window.
	ChangedSince time.Time
	// Cursor is the lister's position inside the pass ("" = the start).
	Cursor string
	// ActiveOnly asks for active sources only (first passes: no need to scan the inactive
	// history; later passes include inactive and deleted sources so deactivations repair).
	ActiveOnly bool
	// DueFrom..DueTo (BU-local dates) is the due window of a first pass: a lister that can
	// filter by due dates returns only sources with something due in it.
	DueFrom, DueTo localtime.Date
	Limit          int
}

// ListedSource is one source as a lister reports it.
type ListedSource struct {
	EntityGuid string
	Revision   int64
	Deleted    bool
	DataJSON   string    // the entity's current fields, a JSON object
	ChangedOn  time.Time // UTC; the watermark moves to the latest one seen
}

// SourcePage is one page; Cursor is the position after its last item.
type SourcePage struct {
	Items  []ListedSource
	Cursor string
}

// SourceLister is a trigger provider's declared sweep source (docs/architecture.md#reconciliation): sources changed since
// a watermark, in a stable order, resumable by cursor, at most Limit per page.
type SourceLister interface {
	ListSources(ctx context.Context, q SourceQuery) (SourcePage, error)
}

// SnapshotLister lists the pipeline's own source snapshots. It repairs rows of sources the
// pipeline has seen (an event whose processing died after its snapshot was stored and was
// never redelivered, a lost row, a setting created after its sources' events); a source
// whose events were all dropped needs the domain app's lister (HTTPSourceLister).
type SnapshotLister struct{ Store store.LifecycleStore }

// ListSources implements SourceLister.
func (l SnapshotLister) ListSources(ctx context.Context, q SourceQuery) (SourcePage, error) {
	cur, err := parseCursor(q.Cursor)
	if err != nil {
		return SourcePage{}, err
	}
	snaps, err := l.Store.SourceSnapshotList(ctx, store.SourceSnapshotListParams{BusinessUnitID: q.BusinessUnitID, EntityType: q.SourceType,
		ChangedSince: q.ChangedSince, AfterUpdatedOn: time.UnixMilli(cur.On).UTC(), AfterGuid: cur.Guid, IncludeDeleted: !q.ActiveOnly, Limit: q.Limit})
	if err != nil {
		return SourcePage{}, err
	}
	page := SourcePage{Cursor: q.Cursor}
	for _, sn := range snaps {
		page.Items = append(page.Items, ListedSource{EntityGuid: sn.EntityGuid, Revision: sn.Revision, Deleted: sn.IsDeleted, DataJSON: sn.DataJSON, ChangedOn: sn.UpdatedOn})
		page.Cursor = snapshotCursor{On: sn.UpdatedOn.UnixMilli(), Guid: sn.EntityGuid}.String()
	}
	return page, nil
}

// --- the reconciler ------------------------------------------------------------------

// ReconcileConfig tunes the Reconciler; zero values take the defaults.
type ReconcileConfig struct {
	// BatchSize is the sources or rows per batch (default 100, at most store.MaxBatch).
	BatchSize int
	// MaxBatches bounds the batches of one run across every sweep (default 50).
	MaxBatches int
	// DueDays is the due window of a first source pass: today..today+DueDays (default 14).
	DueDays int
	// BusinessUnits is the allowlist of source sweeps (nil: every business unit).
	BusinessUnits *automation.Scope
	// Listers are the source listers by source type; a type without one uses SnapshotLister.
	Listers map[string]SourceLister
	// IdempotencyRetention: Idempotency-Key records older than this are purged (default 7
	// days; negative disables the purge).
	IdempotencyRetention time.Duration
}

// Reconciler runs the bounded sweeps (the Reconciliation timer function).
type Reconciler struct {
	Service *Service
	Config  ReconcileConfig
	Log     *slog.Logger
}

// ReconcileResult counts one run.
type ReconcileResult struct {
	Batches          int  `json:"batches"`
	SettingSweeps    int  `json:"settingSweeps"`
	SourceSweeps     int  `json:"sourceSweeps"`
	SourcesProcessed int  `json:"sourcesProcessed"`
	Deactivated      int  `json:"deactivated"`
	Ensured          int  `json:"ensured"`
	Rescheduled      int  `json:"rescheduled"` // tzdata resync
	Purged           int  `json:"purged"`      // Idempotency-Key records
	Complete         bool `json:"complete"`    // nothing owed was left for the next run
}

func (c ReconcileConfig) withDefaults() ReconcileConfig {
	if c.BatchSize <= 0 || c.BatchSize > store.MaxBatch {
		c.BatchSize = 100
	}
	if c.MaxBatches <= 0 {
		c.MaxBatches = 50
	}
	if c.DueDays <= 0 {
		c.DueDays = 14
	}
	if c.IdempotencyRetention == 0 {
		c.IdempotencyRetention = 7 * 24 * time.Hour
	}
	return c
}

func (r *Reconciler) logger() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// RunOnce runs every sweep within the batch budget. A sweep that fails keeps its last saved
// position and is retried at the next run; the run goes on with the other sweeps (one
// failing domain-app endpoint or one broken setting must not starve every other business
// unit, source type and the Idempotency-Key purge) and returns the counts with the failures
// joined (Complete is then false).
func (r *Reconciler) RunOnce(ctx context.Context) (ReconcileResult, error) {
	cfg := r.Config.withDefaults()
	svc := r.Service
	now := svc.Clock.Now()
	var res ReconcileResult
	var errs []error
	budget := func() int { return cfg.MaxBatches - res.Batches }
	res.Complete = true

	// 1. Settings changes not yet fully applied.
	owed, err := svc.Store.ReconcileStateListRequested(ctx, sweepSettingPrefix, store.MaxBatch)
	if err != nil {
		errs = append(errs, err)
	}
	for _, st := range owed {
		if budget() <= 0 {
			res.Complete = false
			break
		}
		guid := strings.TrimPrefix(st.SweepKey, sweepSettingPrefix)
		run, err := runSettingSweep(ctx, svc, guid, cfg.BatchSize, budget(), now)
		res.add(run)
		res.SettingSweeps++
		if err != nil {
			errs = append(errs, fmt.Errorf("setting sweep %s: %w", guid, err))
			continue
		}
		if !run.Done {
			res.Complete = false
		}
	}

	// 2. tzdata resync of pending rows' ScheduledOn from their local intent.
	if budget() > 0 {
		n, batches, done, err := r.resyncTZData(ctx, cfg, now, budget())
		res.Rescheduled += n
		res.Batches += batches
		if err != nil {
			errs = append(errs, fmt.Errorf("tzdata resync: %w", err))
		} else if !done {
			res.Complete = false
		}
	}

	// 3. Source sweeps, round robin over the (business unit, source type) pairs.
	if budget() > 0 {
		done, err := r.sourceSweeps(ctx, cfg, now, &res)
		if err != nil {
			errs = append(errs, err)
		}
		if !done {
			res.Complete = false
		}
	}

	// 4. Old Idempotency-Key records (bounded deletes).
	if cfg.IdempotencyRetention > 0 {
		for i := 0; i < 10; i++ {
			n, err := svc.Store.IdempotencyPurge(ctx, now.Add(-cfg.IdempotencyRetention), store.MaxBatch)
			res.Purged += n
			if err != nil {
				errs = append(errs, fmt.Errorf("idempotency purge: %w", err))
				break
			}
			if n < store.MaxBatch {
				break
			}
		}
	}
	if len(errs) > 0 {
		res.Complete = false
		err := errors.Join(errs...)
		r.logger().Error("reconciliation: sweeps failed; they resume from their saved positions at the next run", "step", "reconcile",
			"batches", res.Batches, "error", err)
		return res, err
	}
	r.logger().Info("reconciliation", "step", "reconcile", "batches", res.Batches, "settingSweeps", res.SettingSweeps,
		"sourceSweeps", res.SourceSweeps, "sources", res.SourcesProcessed, "deactivated", res.Deactivated, "ensured", res.Ensured,
		"rescheduled", res.Rescheduled, "purged", res.Purged, "complete", res.Complete)
	return res, nil
}

func (res *ReconcileResult) add(run sweepRun) {
	res.Batches += run.Batches
	res.SourcesProcessed += run.Sources
	res.Deactivated += run.Deactivated
	for a, n := range run.Ensured {
		if a == automation.EnsureInserted || a == automation.EnsureReactivated || a == automation.EnsureUpdated || a == automation.EnsureRecordedMissed {
			res.Ensured += n
		}
	}
}

// resyncTZData recomputes ScheduledOn of Pending rows due in the future from their stored
// local intent (ScheduledLocalDate, ScheduledLocalTime, TimeZoneId) with the embedded tzdata
// (docs/architecture.md#date-based-reminders), once per tzdata version; rows already right are left alone.
func (r *Reconciler) resyncTZData(ctx context.Context, cfg ReconcileConfig, now time.Time, budget int) (rescheduled, batches int, done bool, err error) {
	st := r.Service.Store
	state, err := st.ReconcileStateGet(ctx, sweepTZData)
	if errors.Is(err, store.ErrNotFound) {
		state = store.ReconcileState{SweepKey: sweepTZData}
	} else if err != nil {
		return 0, 0, false, err
	}
	if state.Marker == localtime.TZDataVersion {
		return 0, 0, true, nil
	}
	cur, _ := parseCursor(state.Cursor)
	if cur.TZ != localtime.TZDataVersion {
		cur = snapshotCursor{}
	}
	for batches < budget {
		rows, err := st.SchedulerListFuturePending(ctx, store.SchedulerListFuturePendingParams{Now: now, AfterID: cur.ID, Limit: cfg.BatchSize})
		if err != nil {
			return rescheduled, batches, false, err
		}
		var fix []automation.Candidate
		for _, row := range rows {
			cur = snapshotCursor{ID: row.ID, TZ: localtime.TZDataVersion}
			if row.AutomationType != automation.TypeReminder {
				// Only reminder keys are free of instants. A report run's key holds its period
				// start in UTC (docs/architecture.md#scheduler-keys), so moving its ScheduledOn would make the row disagree with
				// its own key; report schedules are recomputed from the RRULE when the next run
				// is ensured.
				continue
			}
			at, ok := resolveIntent(row)
			if !ok || at.Equal(row.ScheduledOn) {
				continue
			}
			fix = append(fix, automation.Candidate{AutomationType: row.AutomationType, TriggerType: row.TriggerType,
				SchedulerKey: row.SchedulerKey, InputHash: row.InputHash, SettingGuid: row.SettingGuid,
				SourceEntityType: row.SourceEntityType, SourceEntityGuid: row.SourceEntityGuid, BusinessUnitID: row.BusinessUnitID,
				ScheduledOn: at, ScheduledLocalDate: row.ScheduledLocalDate, ScheduledLocalTime: row.ScheduledLocalTime, TimeZoneID: row.TimeZoneID})
		}
		if len(fix) > 0 {
			results, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: fix})
			if err != nil {
				return rescheduled, batches, false, err
			}
			for _, x := range results {
				if x.Action == automation.EnsureUpdated {
					rescheduled++
				}
			}
		}
		batches++
		state.Cursor, state.UpdatedOn = cur.String(), now
		if len(rows) < cfg.BatchSize {
			state.Marker, state.Cursor = localtime.TZDataVersion, ""
		}
		if state, err = st.ReconcileStateSave(ctx, state); err != nil {
			return rescheduled, batches, false, ignoreLost(err)
		}
		if state.Marker == localtime.TZDataVersion {
			return rescheduled, batches, true, nil
		}
	}
	return rescheduled, batches, false, nil
}

// resolveIntent recomputes a row's instant from its local intent; ok is false when the row
// has none in the "HH:MM" form.
func resolveIntent(row automation.SchedulerRow) (time.Time, bool) {
	d, err := localtime.ParseDate(row.ScheduledLocalDate)
	if err != nil {
		return time.Time{}, false
	}
	t, err := localtime.ParseTimeOfDay(row.ScheduledLocalTime)
	if err != nil {
		return time.Time{}, false
	}
	loc, err := localtime.LoadZone(row.TimeZoneID)
	if err != nil {
		return time.Time{}, false
	}
	return localtime.Resolve(loc, d, t), true
}

// sourceSweeps runs the source sweeps of allowed (business unit, source type) pairs with an
// active setting, starting after the pair the previous run stopped at.
func (r *Reconciler) sourceSweeps(ctx context.Context, cfg ReconcileConfig, now time.Time, res *ReconcileResult) (bool, error) {
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
			res.add(run)
			res.SourceSweeps++
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
func (r *Reconciler) sourceSweep(ctx context.Context, cfg ReconcileConfig, p store.SettingSourcePair, now time.Time, maxBatches int) (sweepRun, error) {
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
	z, err := zoneOf(bu)
	if err != nil {
		return run, err
	}
	settings, versions, err := svc.loadSettingsVersions(ctx, p.BusinessUnitID, p.SourceType)
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
		if run.Done {
			return run, nil
		}
	}
	return run, nil
}

// resyncListed syncs the stored state of items again when the settings of the pair changed
// since versions were read (bounded, like the event path's resyncIfSettingsChanged), and
// returns the settings to go on with.
func (r *Reconciler) resyncListed(ctx context.Context, p store.SettingSourcePair, z Zone, items []ListedSource, settings []Setting, versions map[string]int64, now time.Time) ([]Setting, map[string]int64, error) {
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
func (r *Reconciler) applyListed(ctx context.Context, settings []Setting, p store.SettingSourcePair, z Zone, item ListedSource, now time.Time) (syncResult, error) {
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
