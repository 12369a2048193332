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

// A publish that fails at the last row of a batch leaves no rows after it to give back:
// the claim's lease must stay whole over the rows published before it until they are
// marked (durable publisher) or settled and marked (in-process bus, MarkOnSettle). Before,
// the empty rest was passed to OutboxRelease, whose empty ids mean "the whole claim": the
// lease was deleted while those rows were published and unmarked, and a second relay took
// and published them again at once.
func TestRelayKeepsItsLeaseWhenTheLastRowFails(t *testing.T) {
	t.Parallel()
	for _, onSettle := range []bool{false, true} {
		st, clock := relayStore(t)
		ctx := context.Background()
		startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{{MessageID: "a", Destination: "q", Body: []byte("{}")}, {MessageID: "b", Destination: "q", Body: []byte("{}")}})
		var stolen []store.OutboxMessage
		claimByAnother := func() []store.OutboxMessage {
			msgs, err := st.OutboxClaim(ctx, store.OutboxClaimParams{Now: clock.Now(), Lease: time.Minute, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			return msgs
		}
		// The durable path: the rows published are marked after AfterPublish; the in-process
		// bus path: the bus (this publisher) never settles them in this test.
		r := &delivery.Relay{Store: st, Publisher: &listPublisher{fail: map[string]bool{"b": true}}, Clock: clock, MarkOnSettle: onSettle,
			Hooks: &delivery.RelayHooks{AfterPublish: func(context.Context, []int64) error {
				stolen = append(stolen, claimByAnother()...)
				return nil
			}}}
		if _, err := r.RunOnce(ctx); err == nil {
			t.Fatalf("MarkOnSettle=%v: the failed publish of b was not reported", onSettle)
		}
		if onSettle {
			stolen = append(stolen, claimByAnother()...)
		}
		if len(stolen) != 0 {
			t.Fatalf("MarkOnSettle=%v: a second relay claimed %q while the first had published it and not marked it", onSettle, stolen[0].MessageID)
		}
	}
}

// Two processes on one SQLite file (two stores), four relays: two durable ones in the
// first, a durable one and one on its in-process bus (MarkOnSettle, its bus drained
// meanwhile) in the second; one row in nine fails its first publish and waits for its
// RetryAt while the clock moves (never past the lease). Every message is published exactly
// once, never two at once, and once the bus is drained no lease is left.
func TestRelaysOfTwoProcessesOnOneFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "two.db")
	open := func() *sqlstore.Store {
		st, err := sqlite.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	stA, stB := open(), open()
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()
	const rows = 150
	count := newCountingPublisher(100 * time.Microsecond)
	var want []string
	for i := range rows {
		exe := fmt.Sprintf("cx-%d", i)
		msg := store.OutboxMessage{MessageID: exe, Destination: "q", Body: []byte("{}")}
		want = append(want, exe)
		if i%5 == 0 {
			msg = envelopeOf(t, exe, 3)
			want = append(want[:len(want)-1], exe+"-0", exe+"-1", exe+"-2")
		}
		if i%9 == 0 && i%5 == 0 {
			// An envelope's first message (a later one fails after those before it were
			// published, which the retry publishes again, by design).
			count.fail[exe+"-0"] = true
		} else if i%9 == 0 {
			count.fail[exe] = true
		}
		startWithOutbox(t, stA, clock, exe, []store.OutboxMessage{msg})
	}
	onBus := &delivery.Relay{Store: stB, Clock: clock, MarkOnSettle: true, Batch: 6, Lease: time.Hour}
	b := settlingBus(t, onBus, bus.MemoryOptions{})
	for _, d := range []string{"q", "facts"} {
		b.Subscribe(d, func(context.Context, bus.Message) error { return nil })
	}
	onBus.Publisher = sharedCount{count, b}
	relays := []*delivery.Relay{onBus}
	for _, st := range []*sqlstore.Store{stA, stA, stB} {
		relays = append(relays, &delivery.Relay{Store: st, Clock: clock, Publisher: sharedCount{count, nil}, Batch: 7, Lease: time.Hour})
	}
	stop := make(chan struct{})
	var busy, wg sync.WaitGroup
	for _, r := range relays {
		busy.Go(func() {
			for range 60 {
				_, _ = r.RunOnce(ctx)
			}
		})
	}
	wg.Go(func() { // the bus drains, the clock moves a second at a time (30 minutes at most)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := b.Drain(ctx, 5); err != nil {
				t.Error(err)
			}
			if i < 1800 {
				clock.Advance(time.Second)
			}
			time.Sleep(time.Millisecond)
		}
	})
	busy.Wait()
	close(stop)
	wg.Wait()
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var leases int
	if err := stA.DB().QueryRow(`SELECT COUNT(*) FROM OutboxLease`).Scan(&leases); err != nil || leases != 0 {
		t.Fatalf("%d leases left once every relay stopped and the bus was drained (%v)", leases, err)
	}
	final := &delivery.Relay{Store: stA, Clock: clock, Publisher: sharedCount{count, nil}, Lease: time.Hour}
	for range 20 {
		clock.Advance(10 * time.Minute)
		if _, err := final.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := stA.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); len(left) != 0 {
		t.Fatalf("%d rows left unpublished", len(left))
	}
	if len(count.concurrent) > 0 {
		t.Fatalf("published concurrently: %v", count.concurrent)
	}
	for _, id := range want {
		if n := count.published[id]; n != 1 {
			t.Errorf("%s published %d times", id, n)
		}
	}
}

// On the in-process bus a row whose lease ran out while the bus still held its messages is
// published again, by the same relay (under a new claim; the bus drops the copy as a
// duplicate) or by another process's relay, which marks it. Over many such rounds the
// relay's bookkeeping stays bounded: once its bus is drained every map is empty and no
// lease is left, and each row was marked.
func TestRelayOnTheBusForgetsClaimsThatRanOut(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	newRelay := func() (*delivery.Relay, *bus.Memory) {
		r := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true, Batch: 3, Lease: time.Minute}
		b := settlingBus(t, r, bus.MemoryOptions{})
		for _, d := range []string{"q", "facts"} {
			b.Subscribe(d, func(context.Context, bus.Message) error { return nil })
		}
		return r, b
	}
	r, b := newRelay()
	other, otherBus := newRelay()
	for round := range 8 {
		for i := range 4 {
			exe := fmt.Sprintf("cx-%d-%d", round, i)
			msg := store.OutboxMessage{MessageID: exe, Destination: "q", Body: []byte("{}")}
			if i == 0 {
				msg = envelopeOf(t, exe, 2)
			}
			startWithOutbox(t, st, clock, exe, []store.OutboxMessage{msg})
		}
		// The relay publishes them; its bus holds them past the lease.
		for range 2 {
			if _, err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(61 * time.Second)
		if round%2 == 0 {
			// Taken again by the same relay under a new claim, then run out again.
			for range 2 {
				if _, err := r.RunOnce(ctx); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(61 * time.Second)
		}
		// Another process's relay takes them and its bus settles them: marked there.
		for range 2 {
			if _, err := other.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := otherBus.Drain(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); len(left) != 0 {
		t.Fatalf("%d rows unpublished", len(left))
	}
	if inflight, _, claimOf, claimRows, _ := delivery.RelayTracking(r); inflight == 0 || claimOf == 0 || claimRows == 0 {
		t.Fatalf("the first relay tracks nothing while its bus holds its messages: %d, %d, %d", inflight, claimOf, claimRows)
	}
	// The first relay's bus finally delivers what it held.
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for name, x := range map[string]*delivery.Relay{"first": r, "other": other} {
		if inflight, unsettled, claimOf, claimRows, settled := delivery.RelayTracking(x); inflight+unsettled+claimOf+claimRows+settled != 0 {
			t.Errorf("%s relay keeps %d in flight, %d rows unsettled, %d rows under a claim, %d claims, %d settled unmarked", name, inflight, unsettled, claimOf, claimRows, settled)
		}
	}
	var leases int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM OutboxLease`).Scan(&leases); err != nil || leases != 0 {
		t.Fatalf("%d leases left (%v)", leases, err)
	}
}

// releaseFails is a leasing store whose OutboxRelease always fails.
type releaseFails struct{ leasingStore }

func (releaseFails) OutboxRelease(context.Context, []int64, string) error {
	return errors.New("store unavailable")
}

// A failed OutboxRelease (giving back the rest after a failed publish, or the whole claim
// once its rows are marked) loses nothing and lets no row be taken early: the lease simply
// runs out. The row after the failed one waits for it, the failed one for its RetryAt and
// the lease; the published one stays marked; the run reports the failure.
func TestRelayOutlivesAFailedRelease(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{{MessageID: "a", Destination: "q", Body: []byte("{}")},
		{MessageID: "b", Destination: "q", Body: []byte("{}")}, {MessageID: "c", Destination: "q", Body: []byte("{}")}})
	pub := &listPublisher{fail: map[string]bool{"b": true}}
	r := &delivery.Relay{Store: releaseFails{st}, Publisher: pub, Clock: clock, Lease: time.Minute}
	if n, err := r.RunOnce(ctx); n != 1 || err == nil {
		t.Fatalf("run: %d, %v (want a published, b's and the releases' failures reported)", n, err)
	}
	next := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, Lease: time.Minute}
	clock.Advance(59 * time.Second)
	if n, err := next.RunOnce(ctx); n != 0 || err != nil {
		t.Fatalf("before the lease ran out another relay published %d (%v)", n, err)
	}
	clock.Advance(time.Second)
	if n, err := next.RunOnce(ctx); n != 2 || err != nil || pub.ids() != "a,b,c" {
		t.Fatalf("after the lease: %d, %v, published %s", n, err, pub.ids())
	}
}
