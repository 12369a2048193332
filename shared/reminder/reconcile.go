package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

// Reconciler runs the maintenance services once per Reconciliation timer invocation (see
// RunOnce); each service can also be run on its own.
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
	// Services reports each maintenance service of the run, in the order they ran.
	Services []ServiceReport `json:"services"`
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

// Reconciliation's maintenance services, by the name a run reports them under.
const (
	ServiceSettingsPropagation = "settings-propagation"
	ServiceTZDataResync        = "tzdata-resync"
	ServiceSourceSweeps        = "source-sweeps"
	ServiceIdempotencyPurge    = "idempotency-purge"
)

// ServiceReport is one maintenance service's part of a Reconciliation run.
type ServiceReport struct {
	Service string `json:"service"` // one of the Service* names
	// Skipped: the service did not run (the run's batch budget was spent before its turn,
	// or the Idempotency-Key purge is disabled).
	Skipped bool   `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"` // its failure; its position stays at its last successful batch
	// Result is the service's counts: SettingsPropagationResult, TZDataResyncResult,
	// SourceSweepResult or IdempotencyPurgeResult (nil when Skipped).
	Result any `json:"result,omitempty"`
}

// RunOnce runs every maintenance service once, in this order, sharing the batch budget
// (Config.MaxBatches): settings propagation (SettingsPropagator), tzdata resync
// (TZDataResyncer), source sweeps (SourceSweeper); then the Idempotency-Key purge
// (IdempotencyPurger, bounded on its own). A service that fails keeps its last saved
// position and is retried at the next run; the run goes on with the other services (one
// failing domain-app endpoint or one broken setting must not starve every other business
// unit, source type and the Idempotency-Key purge) and returns the counts, one ServiceReport
// per service, with the failures joined (Complete is then false).
func (r *Reconciler) RunOnce(ctx context.Context) (ReconcileResult, error) {
	cfg := r.Config.withDefaults()
	svc := r.Service
	var res ReconcileResult
	var errs []error
	budget := func() int { return cfg.MaxBatches - res.Batches }
	res.Complete = true
	report := func(name string, result any, err error) {
		rep := ServiceReport{Service: name, Result: result}
		if err != nil {
			rep.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		res.Services = append(res.Services, rep)
	}
	skip := func(name string) { res.Services = append(res.Services, ServiceReport{Service: name, Skipped: true}) }

	// 1. Settings changes not yet fully applied.
	sp := &SettingsPropagator{Service: svc, Clock: svc.Clock, Log: r.Log,
		Config: SettingsPropagatorConfig{BatchSize: cfg.BatchSize, MaxBatches: budget()}}
	pr, err := sp.runOnce(ctx)
	res.addSweeps(SweepResult(pr), &res.SettingSweeps)
	report(ServiceSettingsPropagation, pr, err)

	// 2. tzdata resync of pending rows' ScheduledOn from their local intent.
	if budget() > 0 {
		tz := &TZDataResyncer{Store: svc.Store, Clock: svc.Clock,
			Config: TZDataResyncConfig{BatchSize: cfg.BatchSize, MaxBatches: budget()}}
		tr, err := tz.runOnce(ctx)
		res.Rescheduled += tr.Rescheduled
		res.Batches += tr.Batches
		if err == nil && !tr.Complete {
			res.Complete = false
		}
		report(ServiceTZDataResync, tr, err)
	} else {
		skip(ServiceTZDataResync)
	}

	// 3. Source sweeps, round robin over the (business unit, source type) pairs.
	if budget() > 0 {
		ss := &SourceSweeper{Service: svc, Clock: svc.Clock, Log: r.Log,
			Config: SourceSweepConfig{BatchSize: cfg.BatchSize, MaxBatches: budget(), DueDays: cfg.DueDays,
				BusinessUnits: cfg.BusinessUnits, Listers: cfg.Listers}}
		sr, err := ss.runOnce(ctx)
		res.addSweeps(SweepResult(sr), &res.SourceSweeps)
		report(ServiceSourceSweeps, sr, err)
	} else {
		skip(ServiceSourceSweeps)
	}

	// 4. Old Idempotency-Key records (bounded deletes, outside the batch budget).
	if cfg.IdempotencyRetention > 0 {
		ip := &IdempotencyPurger{Store: svc.Store, Clock: svc.Clock, Config: IdempotencyPurgeConfig{Retention: cfg.IdempotencyRetention}}
		ir, err := ip.runOnce(ctx)
		res.Purged += ir.Purged
		report(ServiceIdempotencyPurge, ir, err)
	} else {
		skip(ServiceIdempotencyPurge)
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

// --- shared by the maintenance services ------------------------------------------------

// Defaults of the maintenance services' configurations.
const (
	defaultBatchSize  = 100
	defaultMaxBatches = 50
	defaultDueDays    = 14
)

// SweepResult counts one pass of a service that re-syncs sources (SettingsPropagationResult,
// SourceSweepResult say what its Sweeps and Complete mean).
type SweepResult struct {
	Sweeps      int  `json:"sweeps"`      // sweeps worked on
	Batches     int  `json:"batches"`     // batches saved or attempted
	Sources     int  `json:"sources"`     // sources applied and re-synced
	Deactivated int  `json:"deactivated"` // rows deactivated
	Ensured     int  `json:"ensured"`     // rows inserted, reactivated, updated or recorded missed
	Complete    bool `json:"complete"`
}

// add counts one sweep's run.
func (res *SweepResult) add(run sweepRun) {
	res.Batches += run.Batches
	res.Sources += run.Sources
	res.Deactivated += run.Deactivated
	res.Ensured += run.ensured()
}

// addSweeps adds a sweeping service's pass s to res; sweeps is res's counter of that
// service's sweeps (SettingSweeps, SourceSweeps).
func (res *ReconcileResult) addSweeps(s SweepResult, sweeps *int) {
	res.Batches += s.Batches
	*sweeps += s.Sweeps
	res.SourcesProcessed += s.Sources
	res.Deactivated += s.Deactivated
	res.Ensured += s.Ensured
	if !s.Complete {
		res.Complete = false
	}
}

// PassConfig bounds one pass of a maintenance service; a zero field takes its default.
type PassConfig struct {
	// BatchSize is the items (sources, rows) per batch: 1..store.MaxBatch, default 100.
	BatchSize int
	// MaxBatches bounds the batches of one pass: at least 1, default 50.
	MaxBatches int
}

// check refuses a negative or too large field, naming it under config
// ("TZDataResyncConfig.BatchSize -1 is outside 1..1000 (0 takes the default)").
func (c PassConfig) check(config string) error {
	return errors.Join(checkBatchSize(config, c.BatchSize), checkMaxBatches(config, c.MaxBatches))
}

func (c PassConfig) withDefaults() PassConfig {
	c.BatchSize = orDefault(c.BatchSize, defaultBatchSize)
	c.MaxBatches = orDefault(c.MaxBatches, defaultMaxBatches)
	return c
}

// preflight is what a maintenance pass checks before it starts: its config (Validate, so a
// bad field is refused naming it) and then its collaborators; have false is the error
// missing ("IdempotencyPurger: Store and Clock are required").
func preflight(cfg interface{ Validate() error }, have bool, missing string) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if !have {
		return errors.New(missing)
	}
	return nil
}

// orDefault is v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// checkBatchSize refuses a batch size outside 0..store.MaxBatch (0 takes the default).
func checkBatchSize(config string, n int) error {
	if n < 0 || n > store.MaxBatch {
		return fmt.Errorf("%s.BatchSize %d is outside 1..%d (0 takes the default)", config, n, store.MaxBatch)
	}
	return nil
}

// checkMaxBatches refuses a negative batch bound (0 takes the default).
func checkMaxBatches(config string, n int) error {
	if n < 0 {
		return fmt.Errorf("%s.MaxBatches %d is negative (0 takes the default)", config, n)
	}
	return nil
}

// testSignals lets a test watch a maintenance service's pass, like River's TestSignals:
// batchSaved is called with the sweep key after each batch whose position was saved. It is
// nil outside tests.
type testSignals struct {
	batchSaved func(sweepKey string)
}

func (s testSignals) saved(sweepKey string) {
	if s.batchSaved != nil {
		s.batchSaved(sweepKey)
	}
}

// ensured counts the rows a sweep inserted, reactivated, updated or recorded missed.
func (r sweepRun) ensured() int {
	n := 0
	for a, c := range r.Ensured {
		if a == automation.EnsureInserted || a == automation.EnsureReactivated || a == automation.EnsureUpdated || a == automation.EnsureRecordedMissed {
			n += c
		}
	}
	return n
}
