package telemetry

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// maxCachedLabelSets bounds each instrument's cache of pre-built label sets. The labels are
// bounded by construction (enums and configured names: docs/operations.md#opentelemetry-metrics),
// so a real process stays far below it; past it a recording builds its set per call, as the
// OTel API does, and nothing is dropped.
const maxCachedLabelSets = 1024

// labelValues are the values of an instrument's labels, in the instrument's label order
// (at most three; unused ones empty): the key of its cached label set.
type labelValues [3]string

// labelOpts are one label set's options, pre-built: metric.WithAttributeSet of an
// attribute.Set made once, in the slices Add and Record take (passed with "...", so a
// recording allocates no variadic slice either).
type labelOpts struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// labelSets caches, per label values, the measurement options of one instrument, so a
// recording neither builds, sorts nor allocates a set. Lookups read an immutable map through an atomic pointer (no lock on the hot
// path); a miss copies the map under mu with the new entry (at most maxCachedLabelSets
// times per instrument).
type labelSets struct {
	keys []attribute.Key // the instrument's label names, in order
	m    atomic.Pointer[map[labelValues]labelOpts]
	mu   sync.Mutex
}

func newLabelSets(keys ...attribute.Key) *labelSets { return &labelSets{keys: keys} }

// opts returns the options recording v's labels: metric.WithAttributeSet of the set
// {keys[i]: v[i]}.
func (c *labelSets) opts(v labelValues) labelOpts {
	if m := c.m.Load(); m != nil {
		if o, ok := (*m)[v]; ok {
			return o
		}
	}
	kv := make([]attribute.KeyValue, len(c.keys))
	for i, k := range c.keys {
		kv[i] = k.String(v[i])
	}
	set := metric.WithAttributeSet(attribute.NewSet(kv...))
	o := labelOpts{add: []metric.AddOption{set}, record: []metric.RecordOption{set}}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil && len(*old) >= maxCachedLabelSets {
		return o
	}
	next := make(map[labelValues]labelOpts, 1+mapLen(old))
	if old != nil {
		for k, e := range *old {
			next[k] = e
		}
	}
	next[v] = o
	c.m.Store(&next)
	return o
}

func mapLen(m *map[labelValues]labelOpts) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
