package support

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// The console's metrics history (docs/console.md#overview).
const (
	// DefaultSampleEvery is how often a Sampler samples at most: once a minute, the
	// resolution of the overview's charts.
	DefaultSampleEvery = time.Minute
	// DefaultHistoryRetention is how long samples are kept: 48 hours, twice the longest
	// window the overview shows (MaxThroughputHours), so the table stays bounded at about
	// 2,880 rows per business unit.
	DefaultHistoryRetention = 48 * time.Hour
	// DefaultMaxSampledUnits bounds the business units one sample covers (by id); units past
	// it are still in the platform row, not in rows of their own.
	DefaultMaxSampledUnits = 200
)

// Sampler writes the metrics history: at most once per Every, one store.MetricsSample per
// business unit (the first MaxUnits by id) and one for the platform (store.PlatformUnit:
// every unit together and the outbox), each the figures Metrics computes for that scope,
// stamped with the current whole minute. After sampling it deletes samples older than
// Retention, at most 10 batches of 500 rows a run. It runs on the OutboxRelay timer (every
// few seconds); the instant of its last run is kept in memory, so each instance samples at
// most once per Every, and two instances sampling the same minute write one row per unit
// (MetricsSamplePut ignores the second).
//
// Each run also persists the counts of its Counters (the gateway's ingest counts): it drains
// them, stamped with the run's minute, and adds them to MetricsCount (store.MetricsCountAdd,
// batches of store.MaxBatch, each a flush with its own random id, the flush's idempotency
// key). A batch whose add failed in the database may still have committed (an ambiguous
// commit: the connection dropped after COMMIT reached the server), so it is kept as it is,
// with its id, and the next run sends it again first: the store's flush ledger absorbs it
// when its commit had succeeded (nothing lost, nothing added twice). While a kept batch
// still fails, no new counts are drained (they wait in their bounded source), so at most one
// kept batch per source is held. A batch the store refused as invalid (nothing reached the
// database) and the batches after a failed one (never sent) go back to their source. The purge also deletes counters (and flush ledger rows) older than Retention.
//
// State: idle → (Every elapsed since the last run) sampling → flushing counts → purging → idle.
type Sampler struct {
	Service   *Service
	Every     time.Duration // 0: DefaultSampleEvery
	Retention time.Duration // 0: DefaultHistoryRetention
	MaxUnits  int           // 0: DefaultMaxSampledUnits; at most store.MaxBatch-1
	Counters  []CountSource // in-memory counters persisted each run (nil entries are skipped)

	mu      sync.Mutex
	lastRun time.Time
	// unsettled: batches whose add failed, kept with their flush id to be sent again as they
	// were (at most one per Counters entry).
	unsettled []flush
}

// flush is one batch of counts and its idempotency key (store.MetricsCountAdd's flushID).
type flush struct {
	id     string
	counts []store.MetricsCount
}

// CountSource is an in-memory counter a Sampler persists (gateway.Metrics): DrainCounts
// takes the counts not yet persisted, stamped with at's minute; RestoreCounts gives back
// those that could not be written.
type CountSource interface {
	DrainCounts(at time.Time) []store.MetricsCount
	RestoreCounts(counts []store.MetricsCount)
}

// SampleResult counts one Sampler run: samples written (units plus the platform row),
// counters added, samples and counters purged, and whether the run was skipped (the last
// one was less than Every ago).
type SampleResult struct {
	Samples int  `json:"samples"`
	Counts  int  `json:"counts,omitempty"`
	Purged  int  `json:"purged"`
	Skipped bool `json:"skipped,omitempty"`
}

// FlushCounts persists the Counters' counts now, outside the sampling schedule (the runtime's
// Close, so a stopping process keeps its last minute's counts), and returns how many counters
// it added. Errors as RunOnce's; counts not written go back to their source.
func (p *Sampler) FlushCounts(ctx context.Context) (int, error) {
	if p.Service == nil {
		return 0, errors.New("support.Sampler: a Service is required")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushCounts(ctx, utc(p.Service.clock.Now()))
}

// flushCounts first sends the unsettled batches again, each with its flush id (a retry the
// store absorbs if its earlier commit had succeeded); while one still fails, nothing new is
// drained. Then it persists each source's drained counts, a new flush id per batch; on an
// error the failed batch is kept unsettled, the source's later batches (never sent) go back
// to it, and the other sources are still flushed (one source's refused batch must not hold
// back the others' counts: the errors are joined).
func (p *Sampler) flushCounts(ctx context.Context, now time.Time) (int, error) {
	written := 0
	for len(p.unsettled) > 0 {
		f := p.unsettled[0]
		if err := p.Service.store.MetricsCountAdd(ctx, f.id, f.counts); err != nil {
			return written, err
		}
		written += len(f.counts)
		p.unsettled = p.unsettled[1:]
	}
	var errs []error
	for _, src := range p.Counters {
		if src == nil {
			continue
		}
		cs := src.DrainCounts(now)
		for i := 0; i < len(cs); i += store.MaxBatch {
			batch := cs[i:min(i+store.MaxBatch, len(cs))]
			id := rand.Text()
			if err := p.Service.store.MetricsCountAdd(ctx, id, batch); err != nil {
				if automation.IsInvalid(err) {
					// Refused before the database: certainly not written, so the batch goes
					// back to its source with the rest.
					src.RestoreCounts(cs[i:])
				} else {
					p.unsettled = append(p.unsettled, flush{id: id, counts: batch})
					src.RestoreCounts(cs[i+len(batch):])
				}
				errs = append(errs, err)
				break
			}
			written += len(batch)
		}
	}
	return written, errors.Join(errs...)
}

// RunOnce samples and purges as the type describes. Errors: a missing Service, the store's
// (a failed run is not remembered as a run: the next call tries again).
func (p *Sampler) RunOnce(ctx context.Context) (SampleResult, error) {
	var res SampleResult
	if p.Service == nil {
		return res, errors.New("support.Sampler: a Service is required")
	}
	every, keep, maxUnits := p.Every, p.Retention, p.MaxUnits
	if every <= 0 {
		every = DefaultSampleEvery
	}
	if keep <= 0 {
		keep = DefaultHistoryRetention
	}
	if maxUnits <= 0 {
		maxUnits = DefaultMaxSampledUnits
	}
	maxUnits = min(maxUnits, store.MaxBatch-1)
	p.mu.Lock()
	defer p.mu.Unlock()
	now := utc(p.Service.clock.Now())
	if !p.lastRun.IsZero() && now.Sub(p.lastRun) < every {
		res.Skipped = true
		return res, nil
	}
	s := p.Service
	units, err := s.store.BusinessUnitList(ctx, store.BusinessUnitListParams{Scope: automation.AllBusinessUnits(), Limit: maxUnits})
	if err != nil {
		return res, err
	}
	on := now.Truncate(time.Minute)
	sample := func(id string, sc automation.Scope) (store.MetricsSample, error) {
		m, err := s.store.SupportMetrics(ctx, store.SupportMetricsParams{Now: now, Since: now.Add(-24 * time.Hour), Scope: sc, Cap: s.cfg.MetricsCap})
		if err != nil {
			return store.MetricsSample{}, err
		}
		out := store.MetricsSample{BusinessUnitID: id, SampledOn: on, PendingDue: m.PendingDue, OutboxUnsent: m.OutboxUnsent,
			OldestDueAgeSeconds: ageSeconds(now, m.OldestDueOn), OutboxOldestAgeSeconds: ageSeconds(now, m.OutboxOldestOn)}
		for _, n := range m.HeldByReason {
			out.OnHold += n
		}
		return out, nil
	}
	samples := make([]store.MetricsSample, 0, len(units)+1)
	for _, u := range units {
		m, err := sample(u.ID, automation.BusinessUnits(u.ID))
		if err != nil {
			return res, err
		}
		samples = append(samples, m)
	}
	all, err := sample(store.PlatformUnit, automation.AllBusinessUnits())
	if err != nil {
		return res, err
	}
	samples = append(samples, all)
	if err := s.store.MetricsSamplePut(ctx, samples); err != nil {
		return res, err
	}
	res.Samples = len(samples)
	if res.Counts, err = p.flushCounts(ctx, now); err != nil {
		return res, err
	}
	p.lastRun = now
	const batch = 500
	for _, purge := range []func(context.Context, time.Time, int) (int, error){s.store.MetricsSamplePurge, s.store.MetricsCountPurge} {
		for range 10 {
			n, err := purge(ctx, now.Add(-keep), batch)
			res.Purged += n
			if err != nil {
				return res, err
			}
			if n < batch {
				break
			}
		}
	}
	return res, nil
}

func ageSeconds(now time.Time, t *time.Time) int64 {
	if t == nil || !now.After(*t) {
		return 0
	}
	return int64(now.Sub(*t) / time.Second)
}

// MetricsPoint is one instant of the overview's history: the figures of Metrics at a sample.
// Outbox figures are nil for a caller that does not see every business unit.
type MetricsPoint struct {
	On                     time.Time `json:"on"`
	PendingDue             int       `json:"pendingDue"`
	OldestDueAgeSeconds    int64     `json:"oldestDueAgeSeconds"`
	OnHold                 int       `json:"onHold"`
	OutboxUnsent           *int      `json:"outboxUnsent,omitempty"`
	OutboxOldestAgeSeconds *int64    `json:"outboxOldestAgeSeconds,omitempty"`
}

// MetricsHistory is the metrics history over the last Hours hours, oldest first, for the business
// units the scope sees (their samples added up) or one of them; Platform says it is the
// platform-wide row (a caller that sees every unit and named none), the only one with
// outbox figures.
type MetricsHistory struct {
	Since    time.Time      `json:"since"`
	Hours    int            `json:"hours"`
	Platform bool           `json:"platform"`
	Points   []MetricsPoint `json:"points"`
}

// MetricsHistory reads the sampled figures of the last hours (1..MaxThroughputHours). Errors:
// CodeInvalidInput for hours out of range, CodeNotFound for a business unit outside the
// scope, the store's.
func (s *Service) MetricsHistory(ctx context.Context, sc automation.Scope, businessUnitID string, hours int) (MetricsHistory, error) {
	if hours < 1 || hours > MaxThroughputHours {
		return MetricsHistory{}, automation.Invalid("hours", "must be 1 to %d, got %d", MaxThroughputHours, hours)
	}
	if businessUnitID != "" {
		if err := s.knownUnit(ctx, sc, businessUnitID); err != nil {
			return MetricsHistory{}, err
		}
		sc = unitOnly(businessUnitID)
	}
	now := utc(s.clock.Now())
	h := MetricsHistory{Since: now.Add(-time.Duration(hours) * time.Hour), Hours: hours, Platform: sc.All(), Points: []MetricsPoint{}}
	ms, err := s.store.MetricsSampleSeries(ctx, store.MetricsSeriesParams{Scope: sc, Since: h.Since, Limit: min(store.MaxMetricsSeries, hours*60+1)})
	if err != nil {
		return MetricsHistory{}, err
	}
	for _, m := range ms {
		p := MetricsPoint{On: m.SampledOn.UTC(), PendingDue: m.PendingDue, OldestDueAgeSeconds: m.OldestDueAgeSeconds, OnHold: m.OnHold}
		if h.Platform {
			n, a := m.OutboxUnsent, m.OutboxOldestAgeSeconds
			p.OutboxUnsent, p.OutboxOldestAgeSeconds = &n, &a
		}
		h.Points = append(h.Points, p)
	}
	return h, nil
}
