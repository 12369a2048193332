package campaign_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/store"
)

// The HTTP action provider maps answers to intents: 2xx took effect, 429/503 retry (with
// Retry-After), other 4xx permanent, 5xx UNKNOWN; it sends the effect key as Idempotency-Key.
func TestHTTPProviderMapsAnswers(t *testing.T) {
	status := http.StatusOK
	var gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get("Idempotency-Key")
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "30")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"reference":"r-1"}`))
	}))
	defer srv.Close()
	p := &campaign.HTTPProvider{BaseURL: srv.URL, ActionTypes: []string{"TOP_UP"}}
	call := campaign.Call{EffectKey: "ce-1", ActionType: "TOP_UP"}
	for _, c := range []struct {
		status int
		intent automation.Intent
	}{{200, automation.IntentNone}, {201, automation.IntentNone}, {429, automation.IntentRetryAfter}, {503, automation.IntentRetry},
		{400, automation.IntentPermanent}, {404, automation.IntentPermanent}, {302, automation.IntentPermanent}, {500, automation.IntentUnknown}, {502, automation.IntentUnknown}} {
		status = c.status
		res, err := p.Call(context.Background(), call)
		if got := automation.IntentOf(err); got != c.intent {
			t.Errorf("%d: intent %s (%v), want %s", c.status, got, err, c.intent)
		}
		if c.intent == automation.IntentNone && res.Reference != "r-1" {
			t.Errorf("%d: reference %q", c.status, res.Reference)
		}
		if c.status == 429 {
			if d, _ := automation.RetryAfterOf(err); d != 30*time.Second {
				t.Errorf("Retry-After %v", d)
			}
		}
	}
	if gotKey != "ce-1" {
		t.Fatalf("Idempotency-Key %q", gotKey)
	}
	// Nothing listening: not sent, a plain retry (never UNKNOWN).
	srv.Close()
	if _, err := p.Call(context.Background(), call); automation.IntentOf(err) != automation.IntentRetry {
		t.Fatalf("refused connection: %v", err)
	}
}

// The rate limit is a token bucket on the injected clock: over the rate, a command goes
// back to QUEUED (no attempt counted) and runs once the clock moves on.
func TestProviderRateLimit(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{RatePerSecond: 1})
	r.topUpOnly("c", "sim")
	ctx := context.Background()
	for _, id := range []string{"e1", "e2"} {
		r.Fire(t, id, "cust-"+id)
	}
	r.Pump()
	if got := r.sims["sim"].Stats().Calls; got != 1 {
		t.Fatalf("%d calls in the first second, rate 1/s", got)
	}
	m, _ := r.Store.CampaignMetricsRead(ctx, "", r.Clock.Now())
	if m.Waiting != 1 {
		t.Fatalf("waiting %d", m.Waiting)
	}
	r.Clock.Advance(time.Second)
	r.Settle(time.Second, 3)
	if got := r.sims["sim"].Stats().Applied; got != 2 {
		t.Fatalf("%d applied after a second", got)
	}
	exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-e2", appEvent("e2"))
	if c := r.Commands(exe)[0]; c.Status != store.CommandSucceeded || c.RetryCount != 0 {
		t.Fatalf("rate-limited command %+v", c)
	}
}

// The simulator refuses bad fault settings, deduplicates only when told to, and answers
// lookups only when it offers them.
func TestProviderSimSwitches(t *testing.T) {
	s := providersim.New(providersim.Config{})
	for _, f := range []providersim.Faults{{Mode: "sometimes"}, {Mode: "slow", Delay: "soon"}, {Mode: "flaky", FailPercent: 80, LosePercent: 30}} {
		if err := s.SetFaults(f); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := &campaign.HTTPProvider{BaseURL: s.URL(), ActionTypes: []string{"TOP_UP"}, HasLookup: true}
	call := campaign.Call{EffectKey: "k", ActionType: "TOP_UP"}
	for range 2 {
		if _, err := p.Call(context.Background(), call); err != nil {
			t.Fatal(err)
		}
	}
	if s.Applied("k") != 2 {
		t.Fatalf("a provider without dedupe applied %d times", s.Applied("k"))
	}
	if st, _, _ := p.Lookup(context.Background(), call); st != campaign.LookupUnknown {
		t.Fatalf("lookup on a provider without lookups: %s", st)
	}
	req, _ := http.NewRequest("POST", s.URL()+"/actions", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Fatalf("no Idempotency-Key: %v %v", resp, err)
	}
}
