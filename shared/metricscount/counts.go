package metricscount

import (
	"sort"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/automation-platform/automation/shared/store"
)

// MaxKeys bounds the pending (business unit, label, outcome) keys of a Counts.
const MaxKeys = 10_000

// Flows of the overview counted with Counts (store.MetricsCount.Flow); the gateway's
// ingest counts are store.FlowIngest.
const (
	// FlowTrigger: the attribute engine's trigger events (a threshold crossed). Label is
	// the trigger event's name, Outcome OutcomeFired.
	FlowTrigger = "trigger"
	// FlowReport: report runs. Label is the report type, Outcome OutcomeDelivered,
	// OutcomeSkipped or OutcomeFailed.
	FlowReport = "report"
)

// Outcomes of FlowTrigger and FlowReport.
const (
	OutcomeFired     = "fired"     // a trigger event written with its source event's changes
	OutcomeDelivered = "delivered" // a report rendered and its deliveries recorded (once per run: the ownership fence)
	OutcomeSkipped   = "skipped"   // a report run deactivated (subscription paused or deleted, superseded, shadow only)
	OutcomeFailed    = "failed"    // a report run refused permanently (on support hold)
)

type key struct{ bu, label, outcome string }

// Counts is one flow's pending counts. A nil *Counts counts nothing. Safe for concurrent
// use.
type Counts struct {
	flow    string
	mu      sync.Mutex
	pending map[key]int64
}

// New returns the empty counts of flow.
func New(flow string) *Counts {
	return &Counts{flow: flow, pending: map[key]int64{}}
}

// Flow is the flow counted.
func (c *Counts) Flow() string {
	if c == nil {
		return ""
	}
	return c.flow
}

// Add counts n (> 0) of outcome for a business unit and a label.
func (c *Counts) Add(businessUnitID, label, outcome string, n int64) {
	if c == nil || n <= 0 {
		return
	}
	c.mu.Lock()
	c.add(key{businessUnitID, label, outcome}, n)
	c.mu.Unlock()
}

// add adds n to k (mu held); beyond MaxKeys keys it counts in the ("", "", outcome) bucket.
// A business unit or label wider than MetricsCount's column (store.MaxMetricsCountUnit,
// MaxMetricsCountLabel: a trigger's event name is not bounded where it is configured) counts
// under "" (unknown): the store refuses a wider member, and one such row would fail its
// whole batch at every flush.
func (c *Counts) add(k key, n int64) {
	if tooWide(k.bu, store.MaxMetricsCountUnit) {
		k.bu = ""
	}
	if tooWide(k.label, store.MaxMetricsCountLabel) {
		k.label = ""
	}
	if _, ok := c.pending[k]; !ok && len(c.pending) >= MaxKeys {
		k = key{outcome: k.outcome}
	}
	c.pending[k] += n
}

// DrainCounts takes the pending counts as store.MetricsCount rows of the flow stamped with
// the minute of at (UTC), sorted by unit, label and outcome, and forgets them (the
// support.CountSource contract).
func (c *Counts) DrainCounts(at time.Time) []store.MetricsCount {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	on := at.UTC().Truncate(time.Minute)
	out := make([]store.MetricsCount, 0, len(c.pending))
	for k, n := range c.pending {
		out = append(out, store.MetricsCount{MinuteOn: on, Flow: c.flow, BusinessUnitID: k.bu, Label: k.label, Outcome: k.outcome, N: n})
	}
	clear(c.pending)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.BusinessUnitID != b.BusinessUnitID {
			return a.BusinessUnitID < b.BusinessUnitID
		}
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		return a.Outcome < b.Outcome
	})
	return out
}

// RestoreCounts gives back drained counts that could not be persisted (rows of another
// flow are ignored); the next drain returns them again, with anything counted since.
func (c *Counts) RestoreCounts(counts []store.MetricsCount) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range counts {
		if m.Flow == c.flow && m.N > 0 {
			c.add(key{m.BusinessUnitID, m.Label, m.Outcome}, m.N)
		}
	}
}

// Len is the number of pending keys (at most MaxKeys plus the overflow buckets).
func (c *Counts) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// tooWide reports whether s is longer than max UTF-16 code units (how SQL Server's nvarchar
// counts).
func tooWide(s string, max int) bool {
	if len(s) <= max { // at most one code unit per byte
		return false
	}
	return len(utf16.Encode([]rune(s))) > max
}
