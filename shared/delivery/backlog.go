package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Backlog is ingest's backpressure gate (docs/gateway.md#backpressure): when the outbox's
// unpublished rows, plus what Pending reports (the in-process bus's waiting messages: a
// consumer's lag), reach Max, Admit refuses new work with automation.RetryAfter, which the
// HTTP layer answers 503 with Retry-After in the API's problem shape, before anything is
// written. Work already accepted is never dropped: the gate only refuses what is not yet
// accepted, and the caller sends it again later.
//
// The backlog is read at most once per Every (default 500 ms; the count walks the index of
// unpublished rows), so a burst between two reads can pass the bound by what it admits in
// that time; the bound is a threshold, not an exact cap. Safe for concurrent use.
type Backlog struct {
	Store store.OutboxBacklogReader
	Clock automation.Clock
	Max   int // refuse at or above this many waiting messages; 0 admits everything
	// Pending, when set, adds messages waiting past the outbox (the in-process bus's queues).
	Pending func() int
	Every   time.Duration // how long a read is reused; default 500 ms
	// RetryAfter is the wait a refusal asks for (default 1 s).
	RetryAfter time.Duration

	mu     sync.Mutex
	readAt time.Time
	last   int
	// Refused counts refused calls (each a request of one or more events); Admitted the
	// calls let through.
	Refused, Admitted atomic.Int64
}

// BacklogStats is what the gate last saw, for the metrics route.
type BacklogStats struct {
	Waiting  int   `json:"waiting"`  // unpublished outbox rows plus pending bus messages, at the last read
	Max      int   `json:"max"`      // the bound (0: off)
	Refused  int64 `json:"refused"`  // requests answered 503 since the process started
	Admitted int64 `json:"admitted"` // requests let through since the process started
}

// Admit returns nil when the backlog is under Max, else an automation.RetryAfter error
// naming the backlog and the bound. A failed read of the backlog admits
// (the gate must not turn a store hiccup into refusals; the write that follows reports a
// real failure itself).
func (b *Backlog) Admit(ctx context.Context) error {
	if b == nil || b.Max <= 0 {
		return nil
	}
	n := b.waiting(ctx)
	if n < b.Max {
		b.Admitted.Add(1)
		return nil
	}
	b.Refused.Add(1)
	wait := b.RetryAfter
	if wait <= 0 {
		wait = time.Second
	}
	return automation.RetryAfter(wait, fmt.Errorf("%w: %d messages wait to be published or consumed (bound %d, AUTOMATION_INGEST_MAX_BACKLOG); send again later",
		ErrBacklog, n, b.Max))
}

// ErrBacklog is the error Admit wraps when it refuses.
var ErrBacklog = errors.New("ingest paused by backpressure")

// Stats returns the last reading and the counters.
func (b *Backlog) Stats() BacklogStats {
	if b == nil {
		return BacklogStats{}
	}
	b.mu.Lock()
	n := b.last
	b.mu.Unlock()
	return BacklogStats{Waiting: n, Max: b.Max, Refused: b.Refused.Load(), Admitted: b.Admitted.Load()}
}

// waiting returns the backlog, read again when the last read is older than Every.
func (b *Backlog) waiting(ctx context.Context) int {
	every := b.Every
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.Clock.Now()
	if !b.readAt.IsZero() && now.Sub(b.readAt) < every && now.After(b.readAt.Add(-every)) {
		return b.last
	}
	n, err := b.Store.OutboxBacklog(ctx)
	if err != nil {
		return 0
	}
	if b.Pending != nil {
		n += b.Pending()
	}
	b.readAt, b.last = now, n
	return n
}
