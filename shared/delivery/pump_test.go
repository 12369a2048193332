package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// idCountPublisher counts each MessageId published.
type idCountPublisher struct {
	mu   sync.Mutex
	seen map[string]int
}

func (p *idCountPublisher) Publish(_ context.Context, m bus.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]int{}
	}
	p.seen[m.ID]++
	return nil
}

// TestRelayDrainEmptiesTheOutbox: one Drain publishes a backlog of many batches (the old
// timer stopped after 20 rounds of 100 rows), and stops at the first round that finds nothing.
func TestRelayDrainEmptiesTheOutbox(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	const rows = 2500 // 25 batches of 100: more than the 20 rounds the timer used to run
	for i := 0; i < rows; i += store.MaxBatch {
		var msgs []store.OutboxMessage
		for j := i; j < min(i+store.MaxBatch, rows); j++ {
			msgs = append(msgs, store.OutboxMessage{MessageID: fmt.Sprintf("m%05d", j), Destination: "q", Body: []byte("{}")})
		}
		startWithOutbox(t, st, clock, fmt.Sprintf("cx-%d", i), msgs)
	}
	pub := &idCountPublisher{}
	r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock}
	res, err := r.Drain(context.Background(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Published != rows || !res.Empty || res.Budget {
		t.Fatalf("Drain = %+v, want %d published and the outbox empty", res, rows)
	}
	if n, _ := st.OutboxBacklog(context.Background()); n != 0 {
		t.Fatalf("%d rows left unpublished", n)
	}
	onceEach(t, pub.seen, "%s published %d times")
}

// TestPumpAndTimerShareTheWork: the eager publisher (woken by the store's commit hook) and
// the timer's relay drain the same outbox at once, under the relay's leases: every message
// is published, and none twice (the leases keep them apart; nothing here fails).
func TestPumpAndTimerShareTheWork(t *testing.T) {
	t.Parallel()
	st, _ := relayStore(t)
	clock := automation.SystemClock{}
	pub := &idCountPublisher{}
	pump := delivery.NewPump(&delivery.Relay{Store: st, Publisher: pub, Clock: clock, Batch: 10})
	pump.Idle = 10 * time.Millisecond
	st.OnOutboxCommit(pump.NotifyRows)
	timer := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, Batch: 10}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = pump.Run(ctx) }()
	const commits, per = 40, 5
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; i < 20; i++ {
			if _, err := timer.Drain(ctx, time.Second); err != nil {
				t.Error(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	mc := automation.NewManualClock(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	for i := 0; i < commits; i++ {
		var msgs []store.OutboxMessage
		for j := 0; j < per; j++ {
			msgs = append(msgs, store.OutboxMessage{MessageID: fmt.Sprintf("c%d-%d", i, j), Destination: "q", Body: []byte("{}")})
		}
		startWithOutbox(t, st, mc, fmt.Sprintf("cx-%d", i), msgs)
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := st.OutboxBacklog(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows still unpublished", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if len(pub.seen) != commits*per {
		t.Fatalf("%d messages published, want %d", len(pub.seen), commits*per)
	}
	onceEach(t, pub.seen, "%s published %d times")
	if pump.Metrics.Published.Load() == 0 {
		t.Fatal("the eager publisher published nothing: the commit hook did not wake it")
	}
}

// TestBacklogRefusesPastItsBound: at or past Max waiting messages Admit refuses with a
// RetryAfter error that the HTTP layer answers 503 with Retry-After; under it, it admits;
// the counters say so. Nothing is written by the gate.
func TestBacklogRefusesPastItsBound(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	pending := 0
	b := &delivery.Backlog{Store: st, Clock: clock, Max: 3, Pending: func() int { return pending }, RetryAfter: 2 * time.Second}
	ctx := context.Background()
	if err := b.Admit(ctx); err != nil {
		t.Fatalf("empty outbox refused: %v", err)
	}
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{{MessageID: "a", Destination: "q", Body: []byte("{}")}, {MessageID: "b", Destination: "q", Body: []byte("{}")}})
	pending = 1
	if err := b.Admit(ctx); err != nil {
		t.Fatalf("a read younger than Every must be reused, got %v", err)
	}
	clock.Advance(time.Second)
	err := b.Admit(ctx)
	if !errors.Is(err, delivery.ErrBacklog) {
		t.Fatalf("2 rows + 1 pending with bound 3: %v, want ErrBacklog", err)
	}
	if d, ok := automation.RetryAfterOf(err); !ok || d != 2*time.Second {
		t.Fatalf("RetryAfterOf = %v, %v", d, ok)
	}
	if p := httpapi.ProblemOf(err); p.Status != http.StatusServiceUnavailable {
		t.Fatalf("answered %d, want 503", p.Status)
	}
	if s := b.Stats(); s.Refused != 1 || s.Admitted != 2 || s.Waiting != 3 || s.Max != 3 {
		t.Fatalf("Stats = %+v", s)
	}
	pending = 0
	clock.Advance(time.Second)
	if err := b.Admit(ctx); err != nil {
		t.Fatalf("under the bound again: %v", err)
	}
}
