package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// relayStore opens a SQLite store for the relay tests and their clock.
func relayStore(t *testing.T) (*sqlstore.Store, *automation.ManualClock) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "relay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, automation.NewManualClock(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
}

// startWithOutbox starts the campaign execution exe with the outbox messages msgs (a
// transaction that writes outbox rows, as every producer's does).
func startWithOutbox(t *testing.T, st *sqlstore.Store, clock *automation.ManualClock, exe string, msgs []store.OutboxMessage) {
	t.Helper()
	if _, err := st.CampaignStart(context.Background(), store.CampaignStartParams{
		Execution: store.CampaignExecution{ExecutionID: exe, BusinessUnitID: "bu", CampaignID: "c", RunID: "r", RecipientID: "x", SourceEventID: exe, LocalDate: "2026-10-01", DefinitionJSON: "{}"},
		Command:   store.CampaignCommand{CommandID: exe + ":0:a", EffectKey: exe, ExecutionID: exe, BusinessUnitID: "bu", CampaignID: "c", RecipientID: "x", ActionKey: "a", ActionType: "T", Provider: "p", LocalDate: "2026-10-01"},
		Outbox:    msgs,
		Now:       clock.Now(),
	}); err != nil {
		t.Fatal(err)
	}
}

// settlingBus is the in-process bus as app.Open wires it to a MarkOnSettle relay: each
// settled message is noted (Relay.Settled) and each drain's are marked after it
// (Relay.FlushSettled). It becomes r's publisher.
func settlingBus(t *testing.T, r *delivery.Relay, opts bus.MemoryOptions) *bus.Memory {
	t.Helper()
	opts.OnSettled = func(ctx context.Context, m bus.Message) {
		if err := r.Settled(ctx, m.ID); err != nil {
			t.Error(err)
		}
	}
	opts.AfterDrain = func(ctx context.Context) {
		if err := r.FlushSettled(ctx); err != nil {
			t.Error(err)
		}
	}
	b := bus.NewMemory(&opts)
	r.Publisher = b
	return b
}

// onceEach fails t unless every message of counts (message id → times published or
// handled) counts once; format names the act, with the id and the count as its verbs.
func onceEach(t *testing.T, counts map[string]int, format string) {
	t.Helper()
	for id, n := range counts {
		if n != 1 {
			t.Fatalf(format, id, n)
		}
	}
}

// wantOutboxEmpty fails the test when a row of st's outbox is left unpublished.
func wantOutboxEmpty(t *testing.T, st store.DeliveryStore) {
	t.Helper()
	if n := unpublished(t, st); n != 0 {
		t.Fatalf("%d rows left unpublished", n)
	}
}

// unpublished counts the outbox rows not yet marked published (up to 100).
func unpublished(t *testing.T, st store.DeliveryStore) int {
	t.Helper()
	left, err := st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(left)
}

// countingPublisher counts the publishes of each message id across every relay of a test,
// notices two of one id at once (each publish stays in flight for hold), and fails the first
// publish of each id in fail. As a bus.Publisher it accepts what it does not fail (a durable
// broker); sharedCount counts through it to another publisher.
type countingPublisher struct {
	hold       time.Duration
	mu         sync.Mutex
	inFlight   map[string]bool
	published  map[string]int
	concurrent []string
	fail       map[string]bool
}

// newCountingPublisher holds each publish for hold and fails the first publish of each of
// failing.
func newCountingPublisher(hold time.Duration, failing ...string) *countingPublisher {
	p := &countingPublisher{hold: hold, inFlight: map[string]bool{}, published: map[string]int{}, fail: map[string]bool{}}
	for _, id := range failing {
		p.fail[id] = true
	}
	return p
}

func (p *countingPublisher) Publish(ctx context.Context, m bus.Message) error {
	return sharedCount{p, nil}.Publish(ctx, m)
}

// sharedCount publishes through p's count to next (nil: accepted there, a durable broker).
type sharedCount struct {
	p    *countingPublisher
	next bus.Publisher
}

func (s sharedCount) Publish(ctx context.Context, m bus.Message) error {
	p := s.p
	p.mu.Lock()
	if p.inFlight[m.ID] {
		p.concurrent = append(p.concurrent, m.ID)
	}
	p.inFlight[m.ID] = true
	failing := p.fail[m.ID]
	delete(p.fail, m.ID)
	p.mu.Unlock()
	time.Sleep(p.hold)
	var err error
	if failing {
		err = errors.New("broker unavailable")
	} else if s.next != nil {
		err = s.next.Publish(ctx, m)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inFlight, m.ID)
	if err == nil {
		p.published[m.ID]++
	}
	return err
}

// Done when: two relays never publish one row concurrently. Four relays run over one
// outbox at once: every row is published exactly once, never by two at the same time; a
// failed row is held until its RetryAt and then resent with the same id.
func TestTwoRelaysNeverPublishOneRowConcurrently(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	const rows = 120
	for i := range rows {
		exe := fmt.Sprintf("cx-%d", i)
		startWithOutbox(t, st, clock, exe, []store.OutboxMessage{{MessageID: exe, Destination: "q", Body: []byte("{}")}})
	}
	pub := newCountingPublisher(time.Millisecond, "cx-7")
	var wg sync.WaitGroup
	for range 4 {
		r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, Batch: 10}
		wg.Go(func() {
			for range 40 {
				if _, err := r.RunOnce(ctx); err != nil && !errors.Is(err, context.Canceled) {
					continue // the failed row: retried after RetryAt
				}
			}
		})
	}
	wg.Wait()
	if len(pub.concurrent) > 0 {
		t.Fatalf("published concurrently: %v", pub.concurrent)
	}
	if pub.published["cx-7"] != 0 {
		t.Fatal("the failed row was resent before its RetryAt")
	}
	clock.Advance(time.Second)
	r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if n := pub.published[fmt.Sprintf("cx-%d", i)]; n != 1 {
			t.Fatalf("cx-%d published %d times", i, n)
		}
	}
	if left, _ := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); len(left) != 0 {
		t.Fatalf("%d rows left unpublished", len(left))
	}
}

// The purge removes published rows past the retention and dedupe keys past the window, never
// an unpublished row or a key a source may still replay; a window under a day is refused.
func TestOutboxPurgerKeepsWhatASourceMayReplay(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "purge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	day := 24 * time.Hour
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	clock := automation.NewManualClock(start)
	for i, id := range []string{"old", "recent"} {
		_ = st.EventMarkProcessed(ctx, "/src", id, start.Add(time.Duration(i)*30*day))
	}
	p := &delivery.OutboxPurger{Store: st, Clock: clock, DedupeWindow: time.Hour}
	if _, err := p.RunOnce(ctx); err == nil {
		t.Fatal("a one-hour dedupe window was accepted")
	}
	clock.Set(start.Add(40 * day))
	p.DedupeWindow = 0 // the default, 35 days
	res, err := p.RunOnce(ctx)
	if err != nil || res.ProcessedEvents != 1 {
		t.Fatalf("purge = %+v, %v", res, err)
	}
	if ok, _ := st.EventProcessed(ctx, "/src", "recent"); !ok {
		t.Fatal("a key inside the window was removed")
	}
	if ok, _ := st.EventProcessed(ctx, "/src", "old"); ok {
		t.Fatal("a key past the window was kept")
	}
}

// On the in-process bus (MarkOnSettle), a row stays unpublished until the bus settles its
// message. A process that stops while the bus still holds the message (its memory lost, as
// after a crash) leaves the row under its lease; the next process's relay cannot take it
// before the lease expires on the clock, and publishes it once it has: the message is
// delivered, where marking at publish lost it for good (seed 278 of the simulator).
func TestRelayMarkOnSettleRepublishesWhatTheBusLost(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	for _, exe := range []string{"cx-1", "cx-2"} {
		startWithOutbox(t, st, clock, exe, []store.OutboxMessage{{MessageID: exe, Destination: "q", Body: []byte("{}")}})
	}
	// A process: the in-process bus settles into the relay, as app.Open wires it.
	process := func(handled map[string]int) (*delivery.Relay, *bus.Memory) {
		r := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true}
		b := settlingBus(t, r, bus.MemoryOptions{})
		b.Subscribe("q", func(_ context.Context, m bus.Message) error { handled[m.ID]++; return nil })
		return r, b
	}
	unpublished := func() int {
		left, err := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(left)
	}
	first := map[string]int{}
	r1, _ := process(first)
	if n, err := r1.RunOnce(ctx); err != nil || n != 2 {
		t.Fatalf("first relay: %d, %v", n, err)
	}
	if unpublished() != 2 {
		t.Fatal("rows marked published while the bus still holds their messages")
	}
	// The process stops before its bus delivered anything.
	second := map[string]int{}
	r2, b2 := process(second)
	clock.Advance(59 * time.Second)
	if n, err := r2.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("the next relay took leased rows before the lease expired: %d, %v", n, err)
	}
	clock.Advance(time.Second)
	if n, err := r2.RunOnce(ctx); err != nil || n != 2 {
		t.Fatalf("after the lease: %d, %v", n, err)
	}
	if _, err := b2.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if len(first) != 0 || second["cx-1"] != 1 || second["cx-2"] != 1 {
		t.Fatalf("handled by the lost bus %v, by the next %v", first, second)
	}
	if n := unpublished(); n != 0 {
		t.Fatalf("%d rows left unpublished after their messages were settled", n)
	}
}

type leasingStore interface {
	store.DeliveryStore
	store.OutboxLeaseStore
}

// markCounter counts the relay's OutboxMarkPublished calls and the rows they mark; it keeps
// the store's leases (without them the relay lists every unpublished row each run).
type markCounter struct {
	leasingStore
	mu          sync.Mutex
	calls, rows int
}

func (m *markCounter) OutboxMarkPublished(ctx context.Context, p store.OutboxMarkPublishedParams) error {
	m.mu.Lock()
	m.calls++
	m.rows += len(p.IDs)
	m.mu.Unlock()
	return m.leasingStore.OutboxMarkPublished(ctx, p)
}

var _ store.OutboxLeaseStore = (*markCounter)(nil)

// TestRelayMarksADrainsSettledMessagesTogether: on the in-process bus the rows of the
// messages one drain settled are marked together, after the drain (AfterDrain →
// FlushSettled) and as soon as store.MaxBatch of them wait, not one transaction per
// message: 1,500 messages settled in one drain are two marks (1,000, then 500), where each
// was a transaction of its own before. Every row ends published, each message handled once.
func TestRelayMarksADrainsSettledMessagesTogether(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	const execs, per = 15, 100
	for e := range execs {
		exe := fmt.Sprintf("cx-%d", e)
		var msgs []store.OutboxMessage
		for i := range per {
			msgs = append(msgs, store.OutboxMessage{MessageID: fmt.Sprintf("%s-%d", exe, i), Destination: "q", Body: []byte("{}")})
		}
		startWithOutbox(t, st, clock, exe, msgs)
	}
	marks := &markCounter{leasingStore: st}
	r := &delivery.Relay{Store: marks, Clock: clock, Batch: store.MaxBatch, MarkOnSettle: true}
	b := settlingBus(t, r, bus.MemoryOptions{MaxQueueLength: 2 * execs * per})
	handled := map[string]int{}
	b.Subscribe("q", func(_ context.Context, m bus.Message) error { handled[m.ID]++; return nil })
	published := 0
	for {
		n, err := r.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		published += n
	}
	if published != execs*per || marks.calls != 0 {
		t.Fatalf("published %d (want %d), %d marks before the bus delivered anything", published, execs*per, marks.calls)
	}
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if marks.calls != 2 || marks.rows != execs*per {
		t.Fatalf("%d mark transactions for %d rows, want 2 for %d", marks.calls, marks.rows, execs*per)
	}
	left, err := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if err != nil || len(left) != 0 {
		t.Fatalf("%d rows left unpublished (%v)", len(left), err)
	}
	onceEach(t, handled, "message %s handled %d times")
	if len(handled) != execs*per {
		t.Fatalf("%d messages handled, want %d", len(handled), execs*per)
	}
}

// The relay gives its lease back once its batch is marked: at once with a durable
// publisher, and on the in-process bus once every row it published was settled and marked
// (its run over): no OutboxLease row is left to hold a row that then waits for a RetryAt.
func TestRelayGivesItsLeaseBack(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	leases := func() int {
		var n int
		if err := st.DB().QueryRow(`SELECT COUNT(*) FROM OutboxLease`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{{MessageID: "a", Destination: "q", Body: []byte("{}")}, envelopeOf(t, "f", 2)})
	pub := &listPublisher{}
	if n, err := (&delivery.Relay{Store: st, Publisher: pub, Clock: clock}).RunOnce(ctx); err != nil || n != 3 || leases() != 0 {
		t.Fatalf("durable publisher: %d, %v, %d leases left", n, err, leases())
	}
	startWithOutbox(t, st, clock, "cx-2", []store.OutboxMessage{{MessageID: "b", Destination: "q", Body: []byte("{}")}, envelopeOf(t, "g", 2)})
	r := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true}
	b := settlingBus(t, r, bus.MemoryOptions{})
	for _, d := range []string{"q", "facts"} {
		b.Subscribe(d, func(context.Context, bus.Message) error { return nil })
	}
	if n, err := r.RunOnce(ctx); err != nil || n != 3 || leases() != 1 {
		t.Fatalf("in-process bus: %d, %v, %d leases (want 1 while the bus holds the messages)", n, err, leases())
	}
	if _, err := b.Drain(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.FlushSettled(ctx); err != nil || leases() != 1 {
		t.Fatalf("one of two rows marked: %v, %d leases (want 1)", err, leases())
	}
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := unpublished(t, st); n != 0 || leases() != 0 {
		t.Fatalf("after the drain: %d rows unpublished, %d leases", n, leases())
	}
}

// herdHandled records what the herd and facts subscriptions of startHerd handled, in order.
type herdHandled struct{ herd, facts []string }

// startHerd subscribes to "herd" and "facts" on b, recording what each handles, and commits n
// herd rows (h000, h001, …; one session, H) to the outbox; it returns the record and the
// herd's ids in their order.
func startHerd(t *testing.T, st *sqlstore.Store, clock *automation.ManualClock, b *bus.Memory, n int) (*herdHandled, []string) {
	t.Helper()
	got := &herdHandled{}
	b.Subscribe("herd", func(_ context.Context, m bus.Message) error { got.herd = append(got.herd, m.ID); return nil })
	b.Subscribe("facts", func(_ context.Context, m bus.Message) error { got.facts = append(got.facts, m.ID); return nil })
	var want []string
	var rows []store.OutboxMessage
	for i := range n {
		id := fmt.Sprintf("h%03d", i)
		want = append(want, id)
		rows = append(rows, store.OutboxMessage{MessageID: id, Destination: "herd", SessionID: "H", Body: []byte("{}")})
	}
	startWithOutbox(t, st, clock, "herd", rows)
	return got, want
}
