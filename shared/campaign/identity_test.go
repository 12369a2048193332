package campaign_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
)

// Two producers' events with the same id are two events: each starts its own execution
// (ExecutionID takes events.Identity(source, id)), each runs its actions once, and a
// redelivery of either starts nothing. The fat payload (source, event_id) reads the same.
func TestSameIDFromTwoSourcesStartsTwoExecutions(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	r.save("welcome", threeSteps("sim"), "r1")
	ctx := context.Background()
	app := event("1", "cust-1")
	pos := bytes.Replace(event("1", "cust-1"), []byte(`"source":"/app"`), []byte(`"source":"/pos"`), 1)
	fat := []byte(`{"event_id":"1","source":"/fat","source_event":"SignedUp","customer_id":"cust-1","business_unit_id":"bu-1"}`)
	for i, body := range [][]byte{app, pos, fat} {
		if n, err := r.dispatcher.HandleEvent(ctx, body); n != 1 || err != nil {
			t.Fatalf("event %d: created %d, %v; want 1", i, n, err)
		}
	}
	for i, body := range [][]byte{app, pos, fat} {
		if n, err := r.dispatcher.HandleEvent(ctx, body); n != 0 || err != nil {
			t.Fatalf("redelivered event %d: created %d, %v; want 0", i, n, err)
		}
	}
	r.pump()
	for _, src := range []string{"/app", "/pos", "/fat"} {
		exe := campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", events.Identity(src, "1"))
		if x := r.execution(exe); x.Status != store.ExecutionCompleted || x.SourceEventID != "1" {
			t.Fatalf("%s: execution %+v, want COMPLETED for source event 1", src, x)
		}
		cs := r.commands(exe)
		if len(cs) != 3 {
			t.Fatalf("%s: %d commands, want 3", src, len(cs))
		}
		for _, c := range cs[1:] { // the sim provider's two; the first is the log channel's
			if n := r.sims["sim"].Applied(c.EffectKey); n != 1 {
				t.Fatalf("%s: %s applied %d times", src, c.CommandID, n)
			}
		}
	}
}
