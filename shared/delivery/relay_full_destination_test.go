package delivery_test

import (
	"context"
	"slices"
	"testing"

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
	if n, err := r.RunOnce(ctx); err != nil || n != 3 {
		t.Fatalf("run with slow room again: %d, %v; want s3, s4, f3", n, err)
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
