package gateway

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/topology"
)

// Metrics counts ingested events per business unit, event type and status since the
// process started (docs/gateway.md#metrics). A nil *Metrics counts nothing. Safe for
// concurrent use.
//
// Bounded: only a business unit that exists and is in the caller's scope labels a count
// (an unknown, unreadable or out-of-scope unit counts in the one "" bucket, seen by callers
// of every unit), only a registered type labels one (others count under ""), and the map
// holds at most MaxMetricKeys keys: a key beyond it counts in the ("", "", status) bucket.
// So made-up units or types cannot grow it (issue 33, item 4).
//
// Besides the counts since start it keeps the counts not yet persisted, which the metrics
// sampler takes once a minute (DrainCounts) and adds to the MetricsCount table, so the
// console's ingest figures survive restarts and add up across instances; the hot ingest
// path itself writes nothing more to SQL. The pending counts are a metricscount.Counts
// of flow store.FlowIngest, with its bound (metricscount.MaxKeys).
type Metrics struct {
	mu     sync.Mutex
	counts map[metricKey]int64
	// pending holds the counts not yet persisted, as store.FlowIngest rows (label: the
	// event type, outcome: the status), with metricscount's bound and overflow bucket.
	pending *metricscount.Counts
}

// MaxMetricKeys bounds the (unit, type, status) keys Metrics keeps: registered types × the
// units that send them × 3 statuses stays far below it in practice; beyond it, counts go
// to the ("", "", status) overflow bucket instead of growing the map.
const MaxMetricKeys = 10_000

type metricKey struct{ bu, typ, status string }

// NewMetrics returns empty counters.
func NewMetrics() *Metrics {
	return &Metrics{counts: map[metricKey]int64{}, pending: metricscount.New(store.FlowIngest)}
}

func (m *Metrics) count(r Result) {
	if m == nil {
		return
	}
	typ := r.Type
	if r.Status == StatusRejected && r.RegistryVersion == 0 {
		typ = "" // an unregistered or unreadable type is not a label anyone chose: counted under ""
	}
	k := metricKey{r.businessUnit, typ, r.Status}
	m.mu.Lock()
	if _, ok := m.counts[k]; !ok && len(m.counts) >= MaxMetricKeys {
		k = metricKey{status: r.Status}
	}
	m.counts[k]++
	m.mu.Unlock()
	m.pending.Add(k.bu, k.typ, k.status, 1)
	// The OTel counter takes the same bounded key, so /metrics and the JSON route agree.
	telemetry.CountIngest(context.Background(), k.bu, k.typ, k.status)
}

// DrainCounts takes the counts not yet persisted, as store.MetricsCount rows of flow
// store.FlowIngest stamped with the minute of at (UTC), and forgets them: the caller adds
// them to the store (support.Sampler) and gives them back with RestoreCounts if that fails,
// so none is lost or counted twice. At most MaxMetricKeys rows plus the overflow buckets.
func (m *Metrics) DrainCounts(at time.Time) []store.MetricsCount {
	if m == nil {
		return nil
	}
	return m.pending.DrainCounts(at)
}

// RestoreCounts gives back counts DrainCounts returned that could not be persisted; the
// next drain returns them again (with anything counted since).
func (m *Metrics) RestoreCounts(counts []store.MetricsCount) {
	if m == nil {
		return
	}
	m.pending.RestoreCounts(counts)
}

// Len is the number of keys held (at most MaxMetricKeys plus the overflow buckets).
func (m *Metrics) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.counts)
}

// TypeCount is one event type's counters.
type TypeCount struct {
	EventType string `json:"eventType"` // "" = unregistered or unreadable events
	Accepted  int64  `json:"accepted"`
	Duplicate int64  `json:"duplicate"`
	Rejected  int64  `json:"rejected"`
	// RegistryVersion is the version of the type's definition in force in this process: the
	// same meaning as an ingest result's registryVersion (the version that routed the event).
	// 0 (omitted) for "" and for a type no longer registered.
	RegistryVersion int64 `json:"registryVersion,omitempty"`
}

// Snapshot returns the counters of the business units scope sees, summed per event type
// and sorted by type. Events whose business unit is unknown (unreadable, or missing the
// extension) count only for callers that see every business unit.
func (m *Metrics) Snapshot(scope automation.Scope) []TypeCount {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	by := map[string]*TypeCount{}
	for k, n := range m.counts {
		if k.bu == "" && !scope.All() || k.bu != "" && !scope.Allows(k.bu) {
			continue
		}
		c := by[k.typ]
		if c == nil {
			c = &TypeCount{EventType: k.typ}
			by[k.typ] = c
		}
		switch k.status {
		case StatusAccepted:
			c.Accepted += n
		case StatusDuplicate:
			c.Duplicate += n
		case StatusRejected:
			c.Rejected += n
		}
	}
	out := make([]TypeCount, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EventType < out[j].EventType })
	return out
}

// MetricsView is the gateway's figures for a scope (GET /api/events/metrics and the console's
// Events page, docs/gateway.md#metrics).
type MetricsView struct {
	// RegistrySeq is the registry's save sequence in force in this process (the highest
	// EventRegistry.Seq it loaded, 0 when empty): it changes whenever any type is saved.
	// EventTypes is how many types the registry holds.
	RegistrySeq int64
	EventTypes  int
	// Counts per event type since the process started, each with the version of the type's
	// definition in force (TypeCount.RegistryVersion).
	Counts []TypeCount
	// Lags are each gateway topic's unpublished outbox rows; platform-wide, so only for a
	// scope of every business unit (nil otherwise).
	Lags []TopicLag
}

// TopicLag is one gateway topic's unpublished backlog and the oldest row's age in seconds.
type TopicLag struct {
	Topic            string
	Unpublished      int
	OldestAgeSeconds float64
}

// ReadMetrics returns the figures the scope may see. Errors: the registry's when none was
// ever loaded, the store's.
func (s *Service) ReadMetrics(ctx context.Context, scope automation.Scope) (MetricsView, error) {
	reg, err := s.Registry.Current(ctx)
	if err != nil && reg == nil {
		return MetricsView{}, err
	}
	out := MetricsView{Counts: s.Metrics.Snapshot(scope), EventTypes: reg.Len()}
	if reg != nil {
		out.RegistrySeq = reg.Version
	}
	if out.Counts == nil {
		out.Counts = []TypeCount{}
	}
	for i, c := range out.Counts {
		if def, ok := reg.Lookup(c.EventType); ok && c.EventType != "" {
			out.Counts[i].RegistryVersion = def.Version
		}
	}
	if scope.All() {
		lags, err := s.Store.OutboxLagGet(ctx, []string{topology.EventsTopic, topology.TrackingTopic, topology.NotiTopic})
		if err != nil {
			return MetricsView{}, err
		}
		now := s.Clock.Now()
		for _, l := range lags {
			x := TopicLag{Topic: l.Destination, Unpublished: l.Unpublished}
			if l.OldestOn != nil {
				x.OldestAgeSeconds = max(0, now.Sub(*l.OldestOn).Seconds())
			}
			out.Lags = append(out.Lags, x)
		}
	}
	return out, nil
}
