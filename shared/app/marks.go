package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// settledMarkDelay is how long, at most, the marks of the messages the in-process bus
// settled wait while the eager publisher runs (settledMarks): the bus drains many times a
// second under load, and a mark transaction after each drain was one write transaction in
// eight of W6's (docs/performance.md, "Marks after settlement, together").
const settledMarkDelay = 100 * time.Millisecond

// settledMarks gathers the marks of settled messages (delivery.Relay.FlushSettled) while it
// is on (StartPublisher turns it on, its stop turns it off): instead of a mark transaction
// after every drain of the in-process bus, one at most every settledMarkDelay, on a runtime
// timer (the clock of the business logic is not involved: a mark is bookkeeping, and the
// simulator and Tick, which never start the publisher, keep one mark after each drain).
// Delaying a mark only keeps the row unpublished and leased a little longer: the relay
// claims past its own rows (delivery.Relay.RescanEvery), the relay marks by itself once
// store.MaxBatch rows wait (delivery.Relay.Settled), and a process that dies before the
// mark republishes the row after its lease with the same MessageId, which every consumer
// absorbs. Safe for concurrent use.
type settledMarks struct {
	mu      sync.Mutex
	on      bool
	timer   *time.Timer
	running sync.WaitGroup
	flush   func(context.Context) // the mark (Relay.FlushSettled with its log)
}

// defer schedules a flush within settledMarkDelay and reports true when gathering is on;
// false tells the caller to flush now.
func (m *settledMarks) deferFlush() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on {
		return false
	}
	if m.timer == nil {
		m.running.Add(1)
		m.timer = time.AfterFunc(settledMarkDelay, func() {
			defer m.running.Done()
			m.mu.Lock()
			m.timer = nil
			m.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), closeFlushTimeout)
			defer cancel()
			m.flush(ctx)
		})
	}
	return true
}

// gathering reports whether gathering is on (delivery.Relay.MarksGathered).
func (m *settledMarks) gathering() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on
}

// start turns gathering on.
func (m *settledMarks) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.on = true
}

// stop turns gathering off, waits for a flush under way, and flushes what waits, so no timer
// outlives it (the store may close next).
func (m *settledMarks) stop() {
	m.mu.Lock()
	m.on = false
	if m.timer != nil && m.timer.Stop() {
		m.timer = nil
		m.running.Done()
	}
	m.mu.Unlock()
	m.running.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), closeFlushTimeout)
	defer cancel()
	m.flush(ctx)
}

// markSettled is the mark of the settled messages' rows with its failure logged (a failed
// mark is retried at the next flush or relay run).
func (r *Runtime) markSettled(log *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		if err := r.Relay.FlushSettled(ctx); err != nil {
			log.Warn("outbox rows not marked after settlement; retried", "error", err)
		}
	}
}
