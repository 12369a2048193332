package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
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
