package campaign_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
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
		if n, err := r.Dispatcher.HandleEvent(ctx, body); n != 1 || err != nil {
			t.Fatalf("event %d: created %d, %v; want 1", i, n, err)
		}
	}
	for i, body := range [][]byte{app, pos, fat} {
		if n, err := r.Dispatcher.HandleEvent(ctx, body); n != 0 || err != nil {
			t.Fatalf("redelivered event %d: created %d, %v; want 0", i, n, err)
		}
	}
	r.Pump()
	for _, src := range []string{"/app", "/pos", "/fat"} {
		exe := campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", events.Identity(src, "1"))
		if x := r.Execution(exe); x.Status != store.ExecutionCompleted || x.SourceEventID != "1" {
			t.Fatalf("%s: execution %+v, want COMPLETED for source event 1", src, x)
		}
		cs := r.Commands(exe)
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

// A trigger nothing registered or emits is refused (422 naming triggers[i], with a "did you
// mean" when a known name is close), and nothing is stored; a known one is accepted.
func TestSaveRefusesATriggerNothingEmits(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	ctx := context.Background()
	admin := &campaign.Admin{Store: r.Store, Catalog: r.Catalog, Clock: r.Clock,
		KnownTriggers: func(context.Context) ([]string, error) { return []string{"First_Login_Reward", "SignedUp"}, nil }}
	def := threeSteps("sim")
	def.Triggers = []string{"SignedUp", "First_Login_Rewad"}
	_, err := admin.Save(ctx, "bu-1", "typo", def, nil)
	var ae *automation.Error
	if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || ae.Field != "triggers[1]" ||
		!strings.Contains(ae.Message, `"First_Login_Rewad" is not registered`) || !strings.Contains(ae.Message, `did you mean "First_Login_Reward"?`) {
		t.Fatalf("save: %v, want 422 naming triggers[1] with a suggestion", err)
	}
	if _, err := r.Store.CampaignGet(ctx, "bu-1", "typo"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused campaign was stored: %v", err)
	}
	def.Triggers = []string{"Checkout"}
	if _, err := admin.Save(ctx, "bu-1", "typo", def, nil); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("a trigger nothing is close to: %v, want a refusal without a suggestion", err)
	}
	def.Triggers = []string{"First_Login_Reward"}
	if _, err := admin.Save(ctx, "bu-1", "typo", def, nil); err != nil {
		t.Fatal(err)
	}
}

// A trigger the campaign already has is not refused when the campaign is saved again, even
// when nothing names it any more (a registry edit removed the threshold that emitted it, or
// the campaign was stored before the rule): otherwise the campaign could not even be
// stopped. A trigger the save adds is still checked.
func TestSaveKeepsAStoredTriggerSoTheCampaignCanBeStopped(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	ctx := context.Background()
	known := []string{"First_Login_Reward", "SignedUp"}
	admin := &campaign.Admin{Store: r.Store, Catalog: r.Catalog, Clock: r.Clock,
		KnownTriggers: func(context.Context) ([]string, error) { return known, nil }}
	def := threeSteps("sim")
	def.Triggers = []string{"First_Login_Reward"}
	c, err := admin.Save(ctx, "bu-1", "legacy", def, nil)
	if err != nil {
		t.Fatal(err)
	}
	known = []string{"SignedUp"} // the registry no longer emits First_Login_Reward
	def.Status = store.CampaignStopped
	v := c.Version
	stopped, err := admin.Save(ctx, "bu-1", "legacy", def, &v)
	if err != nil || stopped.Status != store.CampaignStopped {
		t.Fatalf("stopping a campaign whose stored trigger nothing emits any more: %+v %v", stopped, err)
	}
	def.Triggers = []string{"First_Login_Reward", "Chekout"}
	v = stopped.Version
	var ae *automation.Error
	if _, err := admin.Save(ctx, "bu-1", "legacy", def, &v); !errors.As(err, &ae) || ae.Field != "triggers[1]" {
		t.Fatalf("a new unknown trigger beside a stored one: %v, want 422 naming triggers[1]", err)
	}
}
