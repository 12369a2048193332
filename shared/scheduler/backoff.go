package scheduler

import "time"

// DefaultBackoff is the retry ladder of docs/seeds.md#seed-000: 5 min → 15 min → 1 h, then support hold
// (docs/architecture.md#failure-backoff-and-rescue).
var DefaultBackoff = []time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour}

// LongRunningRetry is the retry interval of handlers marked long-running once the ladder is
// exhausted (docs/architecture.md#failure-backoff-and-rescue: "only handlers marked long-running retry daily after that").
const LongRunningRetry = 24 * time.Hour

// Backoff computes when a failed row is retried.
type Backoff struct {
	// Steps is the delay after the 1st, 2nd, … failure; after the last step the row is held.
	Steps []time.Duration
	// JitterFraction adds up to this fraction of the delay (default 0.10), never subtracts,
	// so a failed herd does not retry in lockstep and nobody retries early.
	JitterFraction float64
	// Rand returns a value in [0,1); injected so tests and replay are deterministic.
	Rand func() float64
}

// OrDefault returns b, with DefaultBackoff as its Steps when it has none (a ladder left
// unset by the caller's configuration; its jitter is kept as set).
func (b Backoff) OrDefault() Backoff {
	if b.Steps == nil {
		b.Steps = DefaultBackoff
	}
	return b
}

// Next returns the UTC instant of the next attempt after a failure at now, for a row that
// had failed priorCount times before (its RetryCount before this failure). hold is true when
// the ladder is exhausted and the row must go on support hold — unless longRunning, in
// which case it retries daily (no jitter cap is exceeded: up to +10 % as well).
func (b Backoff) Next(now time.Time, priorCount int, longRunning bool) (next time.Time, hold bool) {
	var d time.Duration
	switch {
	case priorCount < len(b.Steps):
		d = b.Steps[priorCount]
	case longRunning:
		d = LongRunningRetry
	default:
		return time.Time{}, true
	}
	if b.Rand != nil && b.JitterFraction > 0 {
		d += time.Duration(float64(d) * b.JitterFraction * b.Rand())
	}
	return now.UTC().Add(d).Truncate(time.Millisecond), false
}
