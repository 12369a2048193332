package delivery_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// TestRelayFullDestinationStopsOnlyItsOwnRows (issue 39): while one destination's consumers
// hold their share (Relay.FullDestinations), the relay still publishes the other
// destinations' rows committed among and after that destination's; the left-out rows stay in
// the outbox, unpublished, and once the destination has room they go out under their own
// MessageIds, before the destination's rows committed later (one session's order kept), each
// handled once and every row marked once settled.
func TestRelayFullDestinationStopsOnlyItsOwnRows(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	r := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true}
	b := settlingBus(t, r, bus.MemoryOptions{})
	const share = 2
	r.FullDestinations = func() []string {
		if b.Len("slow") >= share {
			return []string{"slow"}
		}
		return nil
	}
	var slow, fast []string
	b.Subscribe("slow", func(_ context.Context, m bus.Message) error { slow = append(slow, m.ID); return nil })
	b.Subscribe("fast", func(_ context.Context, m bus.Message) error { fast = append(fast, m.ID); return nil })
	commit := func(ids ...string) {
		t.Helper()
		var msgs []store.OutboxMessage
		for _, id := range ids {
			dst, session := "fast", id
			if id[0] == 's' {
				dst, session = "slow", "S" // one session: its order must hold
			}
			msgs = append(msgs, store.OutboxMessage{MessageID: id, Destination: dst, SessionID: session, Body: []byte("{}")})
		}
		startWithOutbox(t, st, clock, ids[0], msgs)
	}
	unpublished := func() []string {
		t.Helper()
		rows, err := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range rows {
			ids = append(ids, m.MessageID)
		}
		return ids
	}

	commit("s1", "s2")
	if n, err := r.RunOnce(ctx); err != nil || n != 2 {
		t.Fatalf("first run: %d, %v; want s1, s2", n, err)
	}
	// slow now holds its share; fast rows committed among slow ones still go out.
	commit("f1", "s3", "f2")
	if n, err := r.RunOnce(ctx); err != nil || n != 2 || b.Len("fast") != 2 || b.Len("slow") != share {
		t.Fatalf("run with slow full: %d, %v, fast %d, slow %d; want f1, f2 published and s3 left out", n, err, b.Len("fast"), b.Len("slow"))
	}
	if _, err := b.DrainDestination(ctx, "fast", 0); err != nil {
		t.Fatal(err)
	}
	if got := unpublished(); !slices.Equal(got, []string{"s1", "s2", "s3"}) {
		t.Fatalf("unpublished after fast settled = %v; want s1, s2 (in flight) and s3 (left out)", got)
	}
	// slow drains; a later slow row is committed before the relay runs again (no rescan is
	// due by the clock): s3 must still go first.
	if _, err := b.DrainDestination(ctx, "slow", 0); err != nil {
		t.Fatal(err)
	}
	commit("s4", "f3")
	// One drain: the claim that takes slow back takes its left-out row (s3) alone, the next
	// the rows past the ones claimed before (s4, f3).
	if res, err := r.Drain(ctx, 0); err != nil || res.Published != 3 {
		t.Fatalf("drain with slow room again: %+v, %v; want s3, s4, f3", res, err)
	}
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slow, []string{"s1", "s2", "s3", "s4"}) || !slices.Equal(fast, []string{"f1", "f2", "f3"}) {
		t.Fatalf("handled slow %v, fast %v; want s1..s4 in order and f1..f3, each once", slow, fast)
	}
	if got := unpublished(); len(got) != 0 {
		t.Fatalf("unpublished at the end = %v; want none", got)
	}
}

// TestRelayTakingAHeldDestinationBackIsNotARescan (issue 39, the herd behind serve): a
// backlog of one destination ("herd", notification-dispatch) held at its share, and after
// each of its sends a row of another destination ("facts") committed and claimed past the
// herd's left-out rows. Each time the herd has room again the relay takes it back with a
// claim from the oldest row, cut short by its batch below the rows claimed before; that
// claim must not make the next one a claim from the oldest row too, which, with the herd
// full again, leaves it out and walks every one of its left-out rows (before the fix: one
// such claim after nearly every take-back). Every row is still published once, the herd's in
// Id order (one session), the facts' too.
func TestRelayTakingAHeldDestinationBackIsNotARescan(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	const batch, share, herd = 4, 4, 60
	r := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true, Batch: batch, RescanEvery: time.Hour}
	b := settlingBus(t, r, bus.MemoryOptions{})
	r.FullDestinations = func() []string {
		if b.Len("herd") >= share {
			return []string{"herd"}
		}
		return nil
	}
	got, herdWant := startHerd(t, st, clock, b, herd)
	var factsWant []string
	if _, err := r.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	start := r.Claims.HeldWalks.Load()
	for i := 0; len(got.herd) < herd && i < 10*herd; i++ {
		// One send of the herd, then its delivery fact committed and claimed.
		if _, err := b.DrainDestination(ctx, "herd", 1); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("f%03d", i)
		factsWant = append(factsWant, id)
		startWithOutbox(t, st, clock, id, []store.OutboxMessage{{MessageID: id, Destination: "facts", Body: []byte("{}")}})
		if _, err := r.Drain(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := b.DrainDestination(ctx, "facts", 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.herd, herdWant) || !slices.Equal(got.facts, factsWant) {
		t.Fatalf("handled herd %v\nfacts %v\nwant each once, in order (facts %v)", got.herd, got.facts, factsWant)
	}
	if walks := r.Claims.HeldWalks.Load() - start; walks != 0 {
		t.Fatalf("%d claims left the herd out from below its left-out rows (each walks them all); want 0 with no rescan due (claims %d, taken back %d)",
			walks, r.Claims.Claims.Load(), r.Claims.TakenBack.Load())
	}
	if r.Claims.TakenBack.Load() == 0 {
		t.Fatal("the herd was never taken back: the scenario did not hold it")
	}
}

// stepCounter counts, for each claim that leaves destinations out, the unpublished rows of
// those destinations inside the Id range the claim walks (past its AfterID, below its
// BeforeID, and up to its last row when it found a full batch): each is a row the claim
// steps over, a table read, in the outbox's Id order. A claim of one destination's rows
// (Destination) walks that destination's own rows and steps over none. steps maps a row's
// Id to the claims that stepped over it.
type stepCounter struct {
	leasingStore
	mu    sync.Mutex
	steps map[int64]int
}

func (c *stepCounter) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]store.OutboxMessage, error) {
	var skipped []store.OutboxMessage
	if len(p.SkipDestinations) > 0 {
		rows, err := c.leasingStore.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, m := range rows {
			if slices.Contains(p.SkipDestinations, m.Destination) && m.ID > p.AfterID && (p.BeforeID <= 0 || m.ID < p.BeforeID) {
				skipped = append(skipped, m)
			}
		}
	}
	msgs, err := c.leasingStore.OutboxClaim(ctx, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.steps == nil {
		c.steps = map[int64]int{}
	}
	for _, m := range skipped {
		if len(msgs) < p.Limit || m.ID < msgs[len(msgs)-1].ID {
			c.steps[m.ID]++
		}
	}
	return msgs, err
}

// TestRelayTakingAHeldDestinationBackStepsOverNoOtherBacklog (issue 39, the herd behind
// serve): two destinations held at once, "herd" (notification-dispatch, a backlog committed
// first) and "facts" (the delivery facts, committed one after each send, so past every herd
// row). When facts has room again while the herd is full, the claim that takes facts back must
// not walk the herd's left-out rows to reach them (before the fix it started from facts'
// floor, which a take-back of the herd had set below the herd's backlog, and stepped over
// every herd row left out, once per take-back); nor the other way round. The herd's rows are
// stepped over once in all (the first fact's claim past them). Every row is published once,
// each destination's in Id order (one session each).
func TestRelayTakingAHeldDestinationBackStepsOverNoOtherBacklog(t *testing.T) {
	t.Parallel()
	// No rescan due, then a rescan (a claim from the oldest row) every round: a rescan
	// leaving the herd out must not walk its left-out rows either.
	t.Run("takebacks", func(t *testing.T) { t.Parallel(); heldDestinationsScenario(t, 0) })
	t.Run("rescans", func(t *testing.T) { t.Parallel(); heldDestinationsScenario(t, 2*time.Second) })
}

// heldDestinationsScenario runs TestRelayTakingAHeldDestinationBackStepsOverNoOtherBacklog's
// herd and facts, the clock moved by step each round (RescanEvery 1 s; 0: no rescan due).
func heldDestinationsScenario(t *testing.T, step time.Duration) {
	st, clock := relayStore(t)
	ctx := context.Background()
	const batch, herdShare, factsShare, herd = 4, 4, 2, 60
	rec := &stepCounter{leasingStore: st}
	every := time.Hour
	if step > 0 {
		every = time.Second
	}
	r := &delivery.Relay{Store: rec, Clock: clock, MarkOnSettle: true, Batch: batch, RescanEvery: every}
	b := settlingBus(t, r, bus.MemoryOptions{})
	r.FullDestinations = func() []string {
		var full []string
		if b.Len("facts") >= factsShare {
			full = append(full, "facts")
		}
		if b.Len("herd") >= herdShare {
			full = append(full, "herd")
		}
		return full
	}
	got, herdWant := startHerd(t, st, clock, b, herd)
	var factsWant []string
	herdFirst := lastRow(t, st) - herd + 1
	if _, err := r.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; len(got.herd) < herd && i < 10*herd; i++ {
		// One send of the herd, then its delivery fact committed; the facts' consumer takes
		// its messages only every third send, so facts is full in between.
		if _, err := b.DrainDestination(ctx, "herd", 1); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("f%03d", i)
		factsWant = append(factsWant, id)
		startWithOutbox(t, st, clock, id, []store.OutboxMessage{{MessageID: id, Destination: "facts", SessionID: "F", Body: []byte("{}")}})
		if i%3 == 2 {
			if _, err := b.DrainDestination(ctx, "facts", 0); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(step)
		if _, err := r.Drain(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; len(got.facts) < len(factsWant) && i < 10*herd; i++ {
		if _, err := b.Drain(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Drain(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got.herd, herdWant) || !slices.Equal(got.facts, factsWant) {
		t.Fatalf("handled herd %v\nfacts %v\nwant each once, in order (facts %v)", got.herd, got.facts, factsWant)
	}
	if r.Claims.TakenBack.Load() == 0 {
		t.Fatal("no destination was taken back: the scenario did not hold them")
	}
	// Without rescans each herd row is stepped over by the claims past it that first left the
	// herd out (one that found nothing, the next that took the first fact beyond the herd),
	// and by none after (before the fix: up to 11 claims). With a rescan every round, the
	// rescans that leave out a destination held from the oldest row (floor 0: facts, left
	// out by a rescan) still walk the herd (at most 9 claims a row, 409 steps in all; before
	// the fix up to 57 claims a row, 1,813 steps).
	limit := 2
	if step > 0 {
		limit = 10
	}
	worst, walks := 0, 0
	for i := range herd {
		n := rec.steps[herdFirst+int64(i)]
		worst, walks = max(worst, n), walks+n
	}
	if worst > limit {
		t.Fatalf("a herd row was stepped over by %d claims (%d steps over herd rows in all); want at most %d", worst, walks, limit)
	}
}
