package gateway

import (
	"sort"
	"sync"

	"github.com/automation-platform/automation/shared/automation"
)

// Metrics counts ingested events per business unit, event type and status since the
// process started (docs/gateway.md#metrics). A nil *Metrics counts nothing. Safe for
// concurrent use.
type Metrics struct {
	mu     sync.Mutex
	counts map[metricKey]int64
}

type metricKey struct{ bu, typ, status string }

// NewMetrics returns empty counters.
func NewMetrics() *Metrics { return &Metrics{counts: map[metricKey]int64{}} }

func (m *Metrics) count(r Result) {
	if m == nil {
		return
	}
	typ := r.Type
	if r.Status == StatusRejected && r.RegistryVersion == 0 {
		typ = "" // an unregistered or unreadable type is not a label anyone chose: counted under ""
	}
	m.mu.Lock()
	m.counts[metricKey{r.businessUnit, typ, r.Status}]++
	m.mu.Unlock()
}

// TypeCount is one event type's counters.
type TypeCount struct {
	EventType string `json:"eventType"` // "" = unregistered or unreadable events
	Accepted  int64  `json:"accepted"`
	Duplicate int64  `json:"duplicate"`
	Rejected  int64  `json:"rejected"`
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
