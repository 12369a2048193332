package campaign

import (
	"math"

	"context"
	"encoding/json"
	"fmt"
	"golang.org/x/time/rate"
	"sort"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// Call is what a provider is asked to do: one command, once.
type Call struct {
	CommandID      string
	EffectKey      string // the idempotency key: the same on every retry
	BusinessUnitID string
	CampaignID     string
	RecipientID    string
	ActionType     string
	Params         json.RawMessage // frozen on the first claim
}

// Result is a provider's answer to a call that took effect.
type Result struct {
	Reference string          // the provider's id of the effect (may be "")
	Body      json.RawMessage // a small JSON answer kept with the command (may be nil)
}

// Traits is what a provider declares.
type Traits struct {
	// Dedupe: the provider deduplicates by EffectKey, so a resend after an UNKNOWN outcome or
	// a crash is safe (it applies once).
	Dedupe bool
}

// Provider carries out actions. Call errors use the intents of shared/automation:
// automation.Permanent (can never succeed: FAILED), automation.Unknown (it may have taken
// effect: UNKNOWN, never FAILED), automation.RetryAfter or unmarked (nothing happened:
// retry on the ladder).
type Provider interface {
	Traits() Traits
	// Serves reports whether the provider carries out actionType.
	Serves(actionType string) bool
	Call(ctx context.Context, c Call) (Result, error)
}

// LookupStatus is a provider's answer about an earlier call.
type LookupStatus string

// Lookup statuses.
const (
	LookupApplied    LookupStatus = "Applied"    // it took effect: SUCCEEDED
	LookupNotApplied LookupStatus = "NotApplied" // it never did: calling again is safe
	LookupUnknown    LookupStatus = "Unknown"    // cannot tell yet: ask later
)

// Looker is implemented by providers that can say, by EffectKey, what became of a call.
type Looker interface {
	Lookup(ctx context.Context, c Call) (LookupStatus, Result, error)
}

// ProviderConfig bounds one provider (docs/campaigns.md#providers).
type ProviderConfig struct {
	// Concurrency is the most calls in flight at once (default 4).
	Concurrency int
	// RatePerSecond is the most calls started per second, as a token bucket of one second's
	// burst, at least 1 (golang.org/x/time/rate, read at the injected clock's instants;
	// 0: unlimited).
	RatePerSecond float64
	// Timeout bounds one call (default 10 s); a call that reaches it is UNKNOWN.
	Timeout time.Duration
	// AdmitWait is how long a worker waits for a concurrency slot before sending the command
	// back to QUEUED (default 2 s): the backpressure bound.
	AdmitWait time.Duration
}

func (c ProviderConfig) withDefaults() ProviderConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.AdmitWait <= 0 {
		c.AdmitWait = 2 * time.Second
	}
	return c
}

// ProviderStats are one provider's counters since start (docs/campaigns.md#metrics).
type ProviderStats struct {
	Name         string        `json:"name"`
	Calls        int64         `json:"calls"`
	Errors       int64         `json:"errors"`   // Permanent and retryable errors
	Unknown      int64         `json:"unknown"`  // UNKNOWN outcomes (timeouts, lost answers)
	Rejected     int64         `json:"rejected"` // admissions refused (busy or over rate)
	TotalLatency time.Duration `json:"totalLatencyNs"`
	MaxLatency   time.Duration `json:"maxLatencyNs"`
	InFlight     int           `json:"inFlight"`
}

type providerEntry struct {
	name string
	Provider
	cfg   ProviderConfig
	slots chan struct{}

	// limit is the rate's token bucket (nil: unlimited).
	limit *rate.Limiter

	mu    sync.Mutex
	stats ProviderStats
}

// Providers is the registry of named providers with their limits. Safe for concurrent use
// once built.
type Providers struct {
	clock   automation.Clock
	entries map[string]*providerEntry
}

// NewProviders returns an empty registry whose rate limits read clock.
func NewProviders(clock automation.Clock) *Providers {
	return &Providers{clock: clock, entries: map[string]*providerEntry{}}
}

// Add registers p under name with cfg (defaults filled in). It panics on a duplicate name:
// registries are built once, at start.
func (r *Providers) Add(name string, p Provider, cfg ProviderConfig) {
	if _, dup := r.entries[name]; dup {
		panic(fmt.Sprintf("campaign: provider %q registered twice", name))
	}
	cfg = cfg.withDefaults()
	e := &providerEntry{name: name, Provider: p, cfg: cfg, slots: make(chan struct{}, cfg.Concurrency)}
	if cfg.RatePerSecond > 0 {
		e.limit = rate.NewLimiter(rate.Limit(cfg.RatePerSecond), max(int(math.Floor(cfg.RatePerSecond)), 1))
	}
	r.entries[name] = e
}

// Get returns the provider called name.
func (r *Providers) Get(name string) (Provider, bool) {
	e, ok := r.entries[name]
	if !ok {
		return nil, false
	}
	return e.Provider, true
}

// Stats returns every provider's counters, by name.
func (r *Providers) Stats() []ProviderStats {
	out := make([]ProviderStats, 0, len(r.entries))
	for _, e := range r.entries {
		e.mu.Lock()
		s := e.stats
		e.mu.Unlock()
		s.Name = e.name
		s.InFlight = len(e.slots)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// admit takes a concurrency slot (waiting at most AdmitWait) and a rate token. ok false:
// the provider is busy; retryIn says when to try again. release must be called after the
// call when ok.
func (e *providerEntry) admit(ctx context.Context, now time.Time) (release func(), retryIn time.Duration, ok bool) {
	if e.limit != nil {
		// A reservation at now, given back at once when it would have to wait: the command is
		// sent back to wait that long instead of holding a worker.
		res := e.limit.ReserveN(now, 1)
		if wait := res.DelayFrom(now); !res.OK() || wait > 0 {
			res.CancelAt(now)
			e.mu.Lock()
			e.stats.Rejected++
			e.mu.Unlock()
			return nil, max(wait, time.Millisecond), false
		}
	}
	timer := time.NewTimer(e.cfg.AdmitWait)
	defer timer.Stop()
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots }, 0, true
	case <-timer.C:
	case <-ctx.Done():
	}
	e.mu.Lock()
	e.stats.Rejected++
	e.mu.Unlock()
	return nil, time.Second, false
}

func (e *providerEntry) record(latency time.Duration, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats.Calls++
	e.stats.TotalLatency += latency
	e.stats.MaxLatency = max(e.stats.MaxLatency, latency)
	switch automation.IntentOf(err) {
	case automation.IntentNone:
	case automation.IntentUnknown:
		e.stats.Unknown++
	default:
		e.stats.Errors++
	}
}
