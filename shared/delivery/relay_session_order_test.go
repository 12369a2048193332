package delivery_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// TestRelayFailedPublishHoldsItsSession (issue 39 item 4, order per session): a row whose
// publish failed waits for its RetryAt, and the later rows of its session (same destination
// and SessionID) wait behind it, in the relay's claim, whichever relay claims next; another
// session's rows keep flowing, and a row without a session is not held. Before, the rest of
// the claim was handed back and the next claim published a customer's later rows before the
// retried one. Each message goes out once, under its own MessageId, in Id order per session.
func TestRelayFailedPublishHoldsItsSession(t *testing.T) {
	t.Parallel()
	for _, eager := range []bool{false, true} {
		st, clock := relayStore(t)
		ctx := context.Background()
		row := func(id, session string) store.OutboxMessage {
			return store.OutboxMessage{MessageID: id, Destination: "events", SessionID: session, Body: []byte("{}")}
		}
		startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{row("a1", "A"), row("b1", "B"), row("a2", "A"), row("n1", ""), row("b2", "B")})
		pub := &listPublisher{fail: map[string]bool{"a1": true}}
		r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, RetryDelay: time.Second, RescanEvery: time.Hour}
		run := func() {
			t.Helper()
			if eager {
				delivery.NewPump(r).DrainOnce(ctx)
				return
			}
			_, _ = r.RunOnce(ctx)
		}
		run() // a1 fails: the claim's rest is handed back
		run() // before a1's RetryAt
		if !eager {
			run()
		}
		startWithOutbox(t, st, clock, "cx-2", []store.OutboxMessage{row("a3", "A"), row("b3", "B")})
		// A second relay (another instance, or this one after a restart) must hold A back too.
		other := &delivery.Relay{Store: st, Publisher: pub, Clock: clock}
		if _, err := other.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got := pub.ids(); got != "b1,n1,b2,b3" {
			t.Fatalf("eager=%v: published before a1's retry = %q; want b1,n1,b2,b3 (A's rows held behind a1)", eager, got)
		}
		clock.Advance(2 * time.Second)
		run()
		run()
		var a []string
		for _, m := range pub.got {
			if m.SessionID == "A" {
				a = append(a, m.ID)
			}
		}
		if !slices.Equal(a, []string{"a1", "a2", "a3"}) || len(pub.got) != 7 {
			t.Fatalf("eager=%v: published %q; want A's a1,a2,a3 in order and every row once", eager, pub.ids())
		}
		rows, err := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
		if err != nil || len(rows) != 0 {
			t.Fatalf("eager=%v: unpublished at the end: %d, %v; want none", eager, len(rows), err)
		}
	}
}

// TestRelayCatchUpCutShortKeepsSessionOrder: the rows a failed publish held back lie below
// the highest row the relay claimed; once the retried row's RetryAt came, the claims from the
// oldest row take them, a batch at a time. A claim from the oldest row cut short by the
// batch limit below the rows claimed before must be followed by another from the oldest row,
// not one past the rows claimed (AfterID), or a later row of the session goes first.
func TestRelayCatchUpCutShortKeepsSessionOrder(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	row := func(id, session string) store.OutboxMessage {
		return store.OutboxMessage{MessageID: id, Destination: "events", SessionID: session, Body: []byte("{}")}
	}
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{row("a1", "A"), row("a2", "A"), row("a3", "A"), row("a4", "A"), row("a5", "A"), row("a6", "A"), row("b1", "B")})
	pub := &listPublisher{fail: map[string]bool{"a1": true}}
	r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, Batch: 2, RetryDelay: time.Second, RescanEvery: time.Hour}
	for range 3 {
		_, _ = r.RunOnce(ctx) // a1 fails; then b1 (A held behind a1)
	}
	startWithOutbox(t, st, clock, "cx-2", []store.OutboxMessage{row("a7", "A")})
	clock.Advance(2 * time.Second)
	for range 6 {
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var a []string
	for _, m := range pub.got {
		if m.SessionID == "A" {
			a = append(a, m.ID)
		}
	}
	if !slices.Equal(a, []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}) {
		t.Fatalf("published %q; want A's a1..a7 in order, each once", pub.ids())
	}
}
