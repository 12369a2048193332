package delivery_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// claimRecorder records the AfterID of each claim the relay makes.
type claimRecorder struct {
	leasingStore
	mu     sync.Mutex
	afters []int64
}

func (c *claimRecorder) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]store.OutboxMessage, error) {
	c.mu.Lock()
	c.afters = append(c.afters, p.AfterID)
	c.mu.Unlock()
	return c.leasingStore.OutboxClaim(ctx, p)
}

func (c *claimRecorder) last() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.afters[len(c.afters)-1]
}

var _ store.OutboxLeaseStore = (*claimRecorder)(nil)

// TestRelayClaimsPastItsRowsInFlight: between two rescans a claim starts past the highest
// row the relay claimed (its rows in flight are not walked again), and a row below that
// point which another relay held and let go (its process died: the lease ran out) is still
// published, by the next rescan, once; every row ends marked.
func TestRelayClaimsPastItsRowsInFlight(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	handled := map[string]int{}
	rec := &claimRecorder{leasingStore: st}
	r1 := &delivery.Relay{Store: rec, Clock: clock, MarkOnSettle: true}
	b1 := settlingBus(t, r1, bus.MemoryOptions{})
	b1.Subscribe("q", func(_ context.Context, m bus.Message) error { handled[m.ID]++; return nil })
	msg := func(id string) []store.OutboxMessage {
		return []store.OutboxMessage{{MessageID: id, Destination: "q", SessionID: id, Body: []byte("{}")}}
	}

	startWithOutbox(t, st, clock, "a", msg("a"))
	if n, err := r1.RunOnce(ctx); err != nil || n != 1 || rec.last() != 0 {
		t.Fatalf("first claim: %d, %v, after %d; want 1 from the oldest row", n, err, rec.last())
	}
	aID := lastRow(t, st)
	// Another process's relay claims b and dies before its bus delivers it.
	startWithOutbox(t, st, clock, "b", msg("b"))
	r2 := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true}
	settlingBus(t, r2, bus.MemoryOptions{})
	if n, err := r2.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("the other relay: %d, %v", n, err)
	}
	startWithOutbox(t, st, clock, "c", msg("c"))
	if n, err := r1.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("second claim: %d, %v; want c", n, err)
	}
	if got := rec.last(); got != aID {
		t.Fatalf("second claim after %d, want %d (past a, still in flight)", got, aID)
	}
	if _, err := b1.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// b's lease runs out; the clock passed RescanEvery, so the next claim walks from the
	// oldest row and finds b below the rows r1 claimed.
	clock.Advance(time.Minute)
	if n, err := r1.RunOnce(ctx); err != nil || n != 1 || rec.last() != 0 {
		t.Fatalf("after the other lease: %d, %v, after %d; want b from the oldest row", n, err, rec.last())
	}
	if _, err := b1.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if handled["a"] != 1 || handled["b"] != 1 || handled["c"] != 1 || len(handled) != 3 {
		t.Fatalf("handled %v, want a, b and c once each", handled)
	}
	wantOutboxEmpty(t, st)
}

// TestRelayRescansWhatItGaveBack: rows the relay handed back after a failed publish are
// below the highest row it claimed, so the next claim walks from the oldest row, and the
// failed row, set to retry, is claimed at its RetryAt however long RescanEvery is (claims
// walk from the oldest row until then).
func TestRelayRescansWhatItGaveBack(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	rec := &claimRecorder{leasingStore: st}
	pub := newCountingPublisher(time.Millisecond, "m-1")
	r := &delivery.Relay{Store: rec, Clock: clock, Publisher: pub, RescanEvery: time.Hour, RetryDelay: 2 * time.Second}
	var msgs []store.OutboxMessage
	for _, id := range []string{"m-0", "m-1", "m-2", "m-3"} {
		msgs = append(msgs, store.OutboxMessage{MessageID: id, Destination: "q", Body: []byte("{}")})
	}
	startWithOutbox(t, st, clock, "x", msgs)
	if _, err := r.RunOnce(ctx); err == nil {
		t.Fatal("the failed publish was not reported")
	}
	// m-2 and m-3 were handed back: the next claim starts from the oldest row.
	if n, err := r.RunOnce(ctx); err != nil || n != 2 || rec.last() != 0 {
		t.Fatalf("after the hand-back: %d, %v, after %d; want m-2 and m-3 from the oldest row", n, err, rec.last())
	}
	clock.Advance(time.Second) // m-1's RetryAt (RetryDelay, 2 s, after its first failure) has not come
	if n, err := r.RunOnce(ctx); err != nil || n != 0 || rec.last() != 0 {
		t.Fatalf("before RetryAt: %d, %v, after %d; want nothing, from the oldest row", n, err, rec.last())
	}
	clock.Advance(time.Second)
	if n, err := r.RunOnce(ctx); err != nil || n != 1 || rec.last() != 0 {
		t.Fatalf("at RetryAt: %d, %v, after %d; want m-1 from the oldest row", n, err, rec.last())
	}
	// Nothing waits any more: one more full claim, then claims past the relay's rows.
	for range 2 {
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if rec.last() == 0 {
		t.Fatal("claims still walk from the oldest row with no row handed back or waiting to retry")
	}
	onceEach(t, pub.published, "%s published %d times")
	if len(pub.published) != 4 || unpublished(t, st) != 0 {
		t.Fatalf("published %v, %d rows unpublished", pub.published, unpublished(t, st))
	}
}

// lastRow is the highest outbox row id.
func lastRow(t *testing.T, st store.DeliveryStore) int64 {
	t.Helper()
	rows, err := st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 100})
	if err != nil || len(rows) == 0 {
		t.Fatalf("unpublished rows: %d, %v", len(rows), err)
	}
	return rows[len(rows)-1].ID
}

// TestRelayLeavesGatheredMarksToTheirFlush: with MarksGathered true, RunOnce does not mark
// the settled rows before it claims (their flush does, on its timer); false (or unset), it
// marks them first, as before.
func TestRelayLeavesGatheredMarksToTheirFlush(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	var gathered atomicBool
	gathered.set(true)
	rec := &markCounter{leasingStore: st}
	r := &delivery.Relay{Store: rec, Clock: clock, MarkOnSettle: true, MarksGathered: gathered.get}
	b := settlingBus(t, r, bus.MemoryOptions{})
	b.Subscribe("q", func(context.Context, bus.Message) error { return nil })
	// The bus is never drained here (Settled is called directly), so only RunOnce marks.
	startWithOutbox(t, st, clock, "g", []store.OutboxMessage{{MessageID: "g", Destination: "q", Body: []byte("{}")}})
	if n, err := r.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("publish: %d, %v", n, err)
	}
	if err := r.Settled(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if rec.calls != 0 || unpublished(t, st) != 1 {
		t.Fatalf("gathered marks written by RunOnce: %d marks, %d unpublished", rec.calls, unpublished(t, st))
	}
	gathered.set(false)
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if rec.calls != 1 || unpublished(t, st) != 0 {
		t.Fatalf("without gathering RunOnce did not mark first: %d marks, %d unpublished", rec.calls, unpublished(t, st))
	}
}

// atomicBool is a switch a test flips while the relay reads it.
type atomicBool struct {
	mu sync.Mutex
	v  bool
}

func (a *atomicBool) set(v bool) { a.mu.Lock(); a.v = v; a.mu.Unlock() }
func (a *atomicBool) get() bool  { a.mu.Lock(); defer a.mu.Unlock(); return a.v }

// TestDrainStopsAfterAShortClaim: a claim that found fewer rows than a batch took every row
// free for it, so Drain stops there instead of claiming once more for nothing (a write
// transaction after every wake of the eager publisher): 250 rows in batches of 100 are three
// rounds, not four, and every row is published once.
func TestDrainStopsAfterAShortClaim(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	var msgs []store.OutboxMessage
	for i := range 250 {
		msgs = append(msgs, store.OutboxMessage{MessageID: fmt.Sprintf("d-%03d", i), Destination: "q", Body: []byte("{}")})
	}
	startWithOutbox(t, st, clock, "d", msgs)
	pub := newCountingPublisher(time.Millisecond)
	r := &delivery.Relay{Store: st, Clock: clock, Publisher: pub}
	res, err := r.Drain(ctx, time.Minute)
	if err != nil || res.Rounds != 3 || res.Published != 250 || !res.Empty {
		t.Fatalf("drain = %+v, %v; want 3 rounds, 250 published, empty", res, err)
	}
	if len(pub.published) != 250 || unpublished(t, st) != 0 {
		t.Fatalf("%d published, %d unpublished", len(pub.published), unpublished(t, st))
	}
	// An empty outbox: one round.
	if res, err := r.Drain(ctx, time.Minute); err != nil || res.Rounds != 1 || res.Published != 0 {
		t.Fatalf("idle drain = %+v, %v", res, err)
	}
}

// TestPumpGathersCommitsOfAWindow: with Gather, the wakes of many commits within the window
// are one drain (one claim), not one each, and every row is published once.
func TestPumpGathersCommitsOfAWindow(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	pub := &idCountPublisher{}
	p := delivery.NewPump(&delivery.Relay{Store: st, Publisher: pub, Clock: clock})
	p.Gather, p.Idle = 200*time.Millisecond, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for i := range 20 {
		startWithOutbox(t, st, clock, fmt.Sprintf("w-%d", i), []store.OutboxMessage{{MessageID: fmt.Sprintf("w-%d", i), Destination: "q", Body: []byte("{}")}})
		p.Notify()
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.Metrics.Published.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := p.Metrics.Published.Load(); got != 20 {
		t.Fatalf("%d published, want 20", got)
	}
	if d := p.Metrics.Drains.Load(); d > 2 {
		t.Fatalf("20 commits within the window took %d drains, want 1 (2 if the writes outlasted it)", d)
	}
	onceEach(t, pub.seen, "%s published %d times")
}
