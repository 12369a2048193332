package campaign_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// A NOTIFICATION_* action whose channel's limits refuse the call (delivery.ErrProviderBusy,
// the limit the dispatcher shares: nothing was sent) waits for the refusal's Retry-After
// without counting a retry or an attempt, on the first run and on the sweep; once the
// channel takes it, it succeeds as its first attempt. Each row is one step, in order.
func TestChannelBusyIsAWaitNotAnAttempt(t *testing.T) {
	t.Parallel()
	r := newRig(t, campaign.ProviderConfig{Concurrency: 4, Timeout: 5 * time.Second})
	refuse := 0
	sent := 0
	r.Providers.Add("busy", &campaign.ChannelProvider{Name: "busy", Clock: r.Clock, Channel: delivery.FuncChannel(func(_ context.Context, m delivery.Message) (string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if refuse > 0 {
			refuse--
			return "", automation.RetryAfter(3*time.Second, fmt.Errorf("%w (test)", delivery.ErrProviderBusy))
		}
		sent++
		return "sent-" + m.DeliveryKey, nil
	})}, campaign.ProviderConfig{Concurrency: 4, Timeout: 5 * time.Second})
	var err error
	if r.Catalog, err = campaign.NewCatalog(campaign.BuiltinActionTypes(), r.Providers); err != nil {
		t.Fatal(err)
	}
	r.save("c-busy", campaign.Definition{Name: "Busy", Status: store.CampaignActive, Triggers: []string{"SignedUp"},
		Actions: []campaign.Action{{Key: "hi", Type: "NOTIFICATION_LOG", Provider: "busy", Params: json.RawMessage(`{"subject":"Hi","text":"Welcome"}`)}}}, "run-1")
	refuse = 2
	var exe string
	for i, s := range []struct {
		name    string
		status  store.CommandStatus
		attempt int
		next    bool
	}{
		{name: "refused on the first run", status: store.CommandQueued, next: true},
		{name: "refused again on the sweep", status: store.CommandQueued, next: true},
		{name: "taken: the first attempt", status: store.CommandSucceeded, attempt: 1},
	} {
		if i == 0 {
			r.Fire(t, "e-busy", "cust-1")
			r.Pump()
			exe = campaign.ExecutionID("bu-1", "c-busy", "run-1", "cust-1", appEvent("e-busy"))
		} else {
			r.Clock.Advance(3 * time.Second)
			if _, err := r.Worker.Sweep(context.Background(), 10); err != nil {
				t.Fatal(err)
			}
			r.Pump()
		}
		cs := r.Commands(exe)
		if len(cs) != 1 {
			t.Fatalf("%s: commands %+v", s.name, cs)
		}
		c := cs[0]
		wantNext := r.Clock.Now().Add(3 * time.Second)
		nextOK := !s.next || c.NextAttemptOn != nil && c.NextAttemptOn.Equal(wantNext)
		if c.Status != s.status || c.AttemptCount != s.attempt || c.RetryCount != 0 || !nextOK ||
			s.next && !strings.Contains(c.LastError, "concurrency or rate limit") {
			t.Fatalf("%s: %s attempt %d retry %d next %v %q; want %s attempt %d retry 0 (next %v)", s.name, c.Status, c.AttemptCount, c.RetryCount,
				c.NextAttemptOn, c.LastError, s.status, s.attempt, wantNext)
		}
	}
	if sent != 1 {
		t.Fatalf("sent %d, want 1", sent)
	}
}
