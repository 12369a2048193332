package campaign_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
)

// Bad definitions are refused naming the member: unknown type or provider, a provider that
// does not serve the type, a cycle, parameters failing the type's schema.
func TestCheckRefusesBadDefinitions(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	cases := []struct {
		name  string
		edit  func(d *campaign.Definition)
		field string
	}{
		{"unknown type", func(d *campaign.Definition) { d.Actions[1].Type = "WIRE_MONEY" }, "actions[1].type"},
		{"unknown provider", func(d *campaign.Definition) { d.Actions[1].Provider = "acme" }, "actions[1].provider"},
		{"provider does not serve", func(d *campaign.Definition) { d.Actions[0].Provider = "sim" }, "actions[0].provider"},
		{"cycle", func(d *campaign.Definition) { d.Actions[2].Next = "greet" }, "actions[0].next"},
		{"self cycle", func(d *campaign.Definition) { d.Actions[0].Next = "greet" }, "actions[0].next"},
		{"next unknown", func(d *campaign.Definition) { d.Actions[0].Next = "nowhere" }, "actions[0].next"},
		{"params schema", func(d *campaign.Definition) {
			d.Actions[1].Params = json.RawMessage(`{"amountMinor":-5,"currency":"AUD"}`)
		}, "actions[1].params.amountMinor"},
		{"params missing member", func(d *campaign.Definition) { d.Actions[2].Params = json.RawMessage(`{"dataMb":5}`) }, "actions[2].params"},
		{"params extra member", func(d *campaign.Definition) {
			d.Actions[0].Params = json.RawMessage(`{"text":"x","bcc":"all@example.test"}`)
		}, "actions[0].params"},
		{"sms recipient not E.164", func(d *campaign.Definition) {
			d.Actions[0].Type, d.Actions[0].Params = "NOTIFICATION_SMS", json.RawMessage(`{"text":"x","recipient":"0412 345 678"}`)
		}, "actions[0].params.recipient"},
		{"sms recipient with an unknown country code", func(d *campaign.Definition) {
			d.Actions[0].Type, d.Actions[0].Params = "NOTIFICATION_SMS", json.RawMessage(`{"text":"x","recipient":"+999123456789"}`)
		}, "actions[0].params.recipient"},
		{"whatsapp recipient not E.164", func(d *campaign.Definition) {
			d.Actions[0].Type = "NOTIFICATION_WHATSAPP"
			d.Actions[0].Params = json.RawMessage(`{"whatsappTemplate":"otp_code","language":"en","values":["1"],"recipient":"0412345678"}`)
		}, "actions[0].params.recipient"},
		{"duplicate key", func(d *campaign.Definition) { d.Actions[2].Key = "greet" }, "actions[2].key"},
		{"bad when", func(d *campaign.Definition) { d.Actions[2].When = "MAYBE" }, "actions[2].when"},
		{"no triggers", func(d *campaign.Definition) { d.Triggers = nil }, "triggers"},
		{"bad status", func(d *campaign.Definition) { d.Status = "RUNNING" }, "status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := threeSteps("sim")
			d.Actions = slices.Clone(d.Actions)
			c.edit(&d)
			err := r.Catalog.Check(d)
			var ae *automation.Error
			if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || !strings.HasPrefix(ae.Field, c.field) {
				t.Fatalf("Check = %v (field %q), want InvalidInput at %s", err, fieldOf(err), c.field)
			}
		})
	}
	if err := r.Catalog.Check(threeSteps("sim")); err != nil {
		t.Fatalf("a good definition refused: %v", err)
	}
	// An E.164 recipient passes.
	d := threeSteps("sim")
	d.Actions[0].Type, d.Actions[0].Params = "NOTIFICATION_SMS", json.RawMessage(`{"text":"x","recipient":"+61412345678"}`)
	if err := r.Catalog.Check(d); err != nil {
		t.Fatalf("an E.164 sms recipient refused: %v", err)
	}
	// A forward jump is no cycle.
	d = threeSteps("sim")
	d.Actions[0].Next = "data"
	if err := r.Catalog.Check(d); err != nil {
		t.Fatalf("forward next refused: %v", err)
	}
}

var fieldOf = automationtest.FieldOf

// Identities are stable across retries and replays; a re-run changes the execution.
func TestIdentities(t *testing.T) {
	a := campaign.ExecutionID("bu", "c", "r1", "cust", "evt")
	if a != campaign.ExecutionID("bu", "c", "r1", "cust", "evt") {
		t.Fatal("execution id not deterministic")
	}
	for _, other := range []string{campaign.ExecutionID("bu", "c", "r2", "cust", "evt"), campaign.ExecutionID("bu", "c", "r1", "cust", "evt2"),
		campaign.ExecutionID("bu", "c", "r1cust", "", "evt"), campaign.ExecutionID("bu2", "c", "r1", "cust", "evt")} {
		if other == a {
			t.Fatal("distinct inputs share an execution id")
		}
	}
	if campaign.EffectKey(a, 1, "k", "TOP_UP", "sim") == campaign.EffectKey(a, 1, "k", "TOP_UP", "plain") {
		t.Fatal("another provider keeps the effect key")
	}
	if got := campaign.CommandID(a, 2, "topup"); got != a+":2:topup" || len(got) > 200 {
		t.Fatalf("command id %q", got)
	}
}

// Done when: a replayed event never creates a second execution or command.
func TestReplayedEventNeverCreatesSecondExecution(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	r.save("welcome", threeSteps("sim"), "r1")
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for range 6 {
		wg.Go(func() {
			n, err := r.Dispatcher.HandleEvent(ctx, event("evt-1", "cust-1"))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			created += n
			mu.Unlock()
		})
	}
	wg.Wait()
	r.Pump()
	if n, _ := r.Dispatcher.HandleEvent(ctx, event("evt-1", "cust-1")); n != 0 || created != 1 {
		t.Fatalf("created %d then %d, want 1 then 0", created, n)
	}
	exe := campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", appEvent("evt-1"))
	r.Pump()
	if cs := r.Commands(exe); len(cs) != 3 || r.Execution(exe).Status != store.ExecutionCompleted {
		t.Fatalf("commands %v, execution %+v", statuses(cs), r.Execution(exe))
	}
	for _, c := range r.Commands(exe)[1:] {
		if n := r.sims["sim"].Applied(c.EffectKey); n != 1 {
			t.Fatalf("%s applied %d times", c.CommandID, n)
		}
	}
	if len(r.logged) != 1 {
		t.Fatalf("%d notifications, want 1", len(r.logged))
	}
	// The gateway's fat payload of the same event is the same execution.
	fat := []byte(`{"event_id":"evt-1","source":"/app","source_event":"SignedUp","customer_id":"cust-1","business_unit_id":"bu-1","route":"events"}`)
	if n, err := r.Dispatcher.HandleEvent(ctx, fat); n != 0 || err != nil {
		t.Fatalf("the fat payload of a seen event created %d, %v", n, err)
	}
	// A deliberate re-run is a new run identity: the same event starts a new execution.
	r.save("welcome", threeSteps("sim"), "r2")
	if n, err := r.Dispatcher.HandleEvent(ctx, event("evt-1", "cust-1")); n != 1 || err != nil {
		t.Fatalf("re-run created %d, %v", n, err)
	}
	// An event no campaign listens to needs no recipient; bad events are permanent
	// (dead-lettered), and nothing is stored.
	if n, err := r.Dispatcher.HandleEvent(ctx, []byte(`{"id":"y","type":"Other","businessunitid":"bu-1"}`)); n != 0 || err != nil {
		t.Fatalf("unrelated event: %d, %v", n, err)
	}
	for _, bad := range []string{`{`, `{"id":"x","type":"SignedUp","businessunitid":"bu-1"}`, `{"id":"x","type":"SignedUp"}`} {
		if _, err := r.Dispatcher.HandleEvent(ctx, []byte(bad)); !automation.IsPermanent(err) {
			t.Fatalf("bad event %s: %v", bad, err)
		}
	}
}

// Done when: a duplicate result never advances the chain twice; a stale one or one for an
// unknown command moves nothing.
func TestDuplicateResultNeverAdvancesTwice(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	r.save("welcome", threeSteps("sim"), "r1")
	ctx := context.Background()
	exe := r.fireOne("welcome")
	first := r.Commands(exe)[0]
	if err := r.Worker.Run(ctx, first.CommandID); err != nil {
		t.Fatal(err)
	}
	done := r.Commands(exe)[0]
	if done.Status != store.CommandSucceeded {
		t.Fatalf("first = %s", done.Status)
	}
	res := func(rev int64, st store.CommandStatus) []byte {
		b, _ := json.Marshal(campaign.ResultMessage{CommandID: first.CommandID, Revision: rev, Status: st})
		return b
	}
	if moved, err := r.Dispatcher.HandleResult(ctx, res(done.Revision-1, store.CommandRunning)); moved || err != nil {
		t.Fatalf("stale result moved=%v err=%v", moved, err)
	}
	if moved, err := r.Dispatcher.HandleResult(ctx, []byte(`{"commandId":"cx-nope:0:x","revision":3,"status":"SUCCEEDED"}`)); moved || err != nil {
		t.Fatalf("unknown command moved=%v err=%v", moved, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	moves := 0
	for range 5 {
		wg.Go(func() {
			moved, err := r.Dispatcher.HandleResult(ctx, res(done.Revision, store.CommandSucceeded))
			if err != nil {
				t.Error(err)
			}
			if moved {
				mu.Lock()
				moves++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if moves != 1 || len(r.Commands(exe)) != 2 || r.Execution(exe).CurrentIndex != 1 {
		t.Fatalf("moves %d, commands %d, index %d", moves, len(r.Commands(exe)), r.Execution(exe).CurrentIndex)
	}
	r.Pump()
	// The result the worker wrote is a duplicate now too; the chain ran each action once.
	if cs := r.Commands(exe); !slices.Equal(statuses(cs), []store.CommandStatus{store.CommandSucceeded, store.CommandSucceeded, store.CommandSucceeded}) {
		t.Fatalf("statuses %v", statuses(cs))
	}
	if len(r.logged) != 1 {
		t.Fatalf("%d notifications", len(r.logged))
	}
}

// The condition on the previous result: data runs only after a successful top-up.
func TestConditionOnPreviousResult(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	d := threeSteps("sim")
	d.Actions[1].Params = json.RawMessage(`{"amountMinor":500,"currency":"AUD"}`)
	r.save("welcome", d, "r1")
	r.faults("sim", providersim.Faults{Mode: providersim.ModeFail})
	r.Worker.Backoff.Steps = []time.Duration{time.Minute}
	r.Fire(t, "evt-1", "cust-1")
	r.Settle(time.Minute, 10)
	exe := campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", appEvent("evt-1"))
	cs := r.Commands(exe)
	if !slices.Equal(statuses(cs), []store.CommandStatus{store.CommandSucceeded, store.CommandFailed}) || r.Execution(exe).Status != store.ExecutionCompleted {
		t.Fatalf("statuses %v, execution %s", statuses(cs), r.Execution(exe).Status)
	}
	if cs[1].RetryCount != 1 || !strings.Contains(cs[1].LastError, "retries exhausted") {
		t.Fatalf("top-up %+v", cs[1])
	}
}

// crashAt leaves one command the way a worker that died at a step leaves it.
type crashPoint int

const (
	crashBeforeClaim crashPoint = iota // the message was taken, the worker died before claiming
	crashAfterClaim                    // claimed, died before calling
	crashAfterCall                     // the provider applied it, died before recording
)

// Done when: a worker crash at every step ends in exactly one provider call, or one UNKNOWN
// with a resolution path — for a provider that dedupes, one that answers lookups only, and
// one that does neither.
func TestCrashAtEveryStep(t *testing.T) {
	for _, provider := range []string{"sim", "lookup", "plain"} {
		for _, at := range []crashPoint{crashBeforeClaim, crashAfterClaim, crashAfterCall} {
			t.Run(provider+"/"+[]string{"beforeClaim", "afterClaim", "afterCall"}[at], func(t *testing.T) {
				r := newRig(t, campaign.ProviderConfig{})
				d := r.topUpOnly("c", provider)
				ctx := context.Background()
				exe := r.fireOne("c")
				c := r.Commands(exe)[0]
				sim := r.sims[provider]
				switch at {
				case crashAfterClaim, crashAfterCall:
					cl, err := r.Store.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: c.CommandID, Now: r.Clock.Now(), Lease: time.Minute, FreezeParams: string(d.Actions[0].Params)})
					if err != nil || !cl.Claimed {
						t.Fatal(cl, err)
					}
					if at == crashAfterCall {
						p, _ := r.Providers.Get(provider)
						if _, err := p.Call(ctx, campaign.Call{CommandID: c.CommandID, EffectKey: c.EffectKey, ActionType: c.ActionType, Params: json.RawMessage(cl.Command.ParamsJSON)}); err != nil {
							t.Fatal(err)
						}
					}
				}
				// The crashed worker's outbox message is gone (taken); recovery is the sweep's.
				r.Drain(nil)
				r.Settle(5*time.Minute, 40)

				got := r.Commands(exe)[0]
				applied := sim.Applied(c.EffectKey)
				switch {
				case got.Status == store.CommandSucceeded && applied == 1:
					// exactly one provider call took effect
				case got.Status == store.CommandUnknown && got.NextAttemptOn == nil && applied <= 1:
					// one UNKNOWN on the manual-resolution queue: resolve it
					q, _ := r.Store.CampaignListUnknown(ctx, "bu-1", "", 0, 10)
					if len(q) != 1 {
						t.Fatalf("UNKNOWN not on the queue: %+v", q)
					}
					if _, err := r.Store.CampaignResolve(ctx, store.CampaignResolveParams{CommandID: got.CommandID, BusinessUnitID: "bu-1", ExpectedVersion: got.Version,
						Status: store.CommandSucceeded, Operator: "ops", Reason: "checked", Now: r.Clock.Now()}); err != nil {
						t.Fatal(err)
					}
				default:
					t.Fatalf("status %s (next %v), applied %d times", got.Status, got.NextAttemptOn, applied)
				}
				if provider != "plain" && got.Status != store.CommandSucceeded {
					t.Fatalf("a provider with a resolution path left %s", got.Status)
				}
				if provider == "plain" && at != crashBeforeClaim && got.Status != store.CommandUnknown {
					t.Fatalf("an in-doubt call to a plain provider was resent: %s, applied %d", got.Status, applied)
				}
			})
		}
	}
}

// UNKNOWN (a provider timeout, a lost answer) is never FAILED: a deduplicating provider gets
// the same key again, a lookup provider is asked, a plain one waits for a person.
func TestUnknownResolution(t *testing.T) {
	for _, tc := range []struct {
		provider string
		faults   providersim.Faults
		want     store.CommandStatus
	}{
		{"sim", providersim.Faults{Mode: providersim.ModeTimeoutAfterApply, Delay: "2s"}, store.CommandSucceeded},
		{"lookup", providersim.Faults{Mode: providersim.ModeLoseAnswer}, store.CommandSucceeded},
		{"plain", providersim.Faults{Mode: providersim.ModeLoseAnswer}, store.CommandUnknown},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			r := newRig(t, campaign.ProviderConfig{Timeout: 300 * time.Millisecond})
			r.topUpOnly("c", tc.provider)
			r.faults(tc.provider, tc.faults)
			r.Fire(t, "evt-1", "cust-1")
			r.Pump()
			exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-1", appEvent("evt-1"))
			c := r.Commands(exe)[0]
			if c.Status != store.CommandUnknown {
				t.Fatalf("after the fault: %s (%s)", c.Status, c.LastError)
			}
			if (c.NextAttemptOn == nil) != (tc.want == store.CommandUnknown) {
				t.Fatalf("resolution path %v for %s", c.NextAttemptOn, tc.provider)
			}
			_ = r.sims[tc.provider].SetFaults(providersim.Faults{})
			r.Settle(10*time.Minute, 20)
			c = r.Commands(exe)[0]
			if c.Status != tc.want || r.sims[tc.provider].Applied(c.EffectKey) != 1 {
				t.Fatalf("resolved %s, applied %d", c.Status, r.sims[tc.provider].Applied(c.EffectKey))
			}
			if st := r.Providers.Stats(); st[slices.IndexFunc(st, func(s campaign.ProviderStats) bool { return s.Name == tc.provider })].Unknown != 1 {
				t.Fatalf("provider stats %+v", st)
			}
		})
	}
}

// Paused waits (no call); stopped cancels what was not sent; a stopped campaign's UNKNOWN
// still resolves instead of being cancelled.
func TestPausedWaitsStoppedCancels(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{Timeout: 300 * time.Millisecond})
	d := threeSteps("sim")
	d.Status = store.CampaignPaused
	r.save("welcome", d, "r1")
	r.Fire(t, "evt-1", "cust-1")
	r.Settle(time.Minute, 5)
	exe := campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", appEvent("evt-1"))
	c := r.Commands(exe)[0]
	if c.Status != store.CommandQueued || c.RetryCount != 0 || len(r.logged) != 0 || c.NextAttemptOn == nil {
		t.Fatalf("paused: %+v, %d sent", c, len(r.logged))
	}
	d.Status = store.CampaignStopped
	r.save("welcome", d, "r1")
	r.Settle(time.Minute, 5)
	if c := r.Commands(exe); c[0].Status != store.CommandCancelled || r.Execution(exe).Status != store.ExecutionCancelled || len(c) != 1 {
		t.Fatalf("stopped: %v, execution %s", statuses(c), r.Execution(exe).Status)
	}

	// An UNKNOWN of a campaign stopped meanwhile is looked up, not cancelled.
	d = threeSteps("sim")
	d.Actions = d.Actions[1:2]
	r.save("c2", d, "r1")
	_ = r.sims["sim"].SetFaults(providersim.Faults{Mode: providersim.ModeTimeoutAfterApply, Delay: "2s"})
	d.Triggers = []string{"Other"}
	r.Fire(t, "evt-2", "cust-2")
	r.Pump()
	exe2 := campaign.ExecutionID("bu-1", "c2", "r1", "cust-2", appEvent("evt-2"))
	if c := r.Commands(exe2)[0]; c.Status != store.CommandUnknown {
		t.Fatalf("c2: %s", c.Status)
	}
	_ = r.sims["sim"].SetFaults(providersim.Faults{})
	d.Status = store.CampaignStopped
	r.save("c2", d, "r1")
	r.Settle(10*time.Minute, 10)
	if c := r.Commands(exe2)[0]; c.Status != store.CommandSucceeded || r.sims["sim"].Applied(c.EffectKey) != 1 {
		t.Fatalf("stopped UNKNOWN: %s, applied %d", c.Status, r.sims["sim"].Applied(c.EffectKey))
	}
}

// Parameters are frozen on the first claim: an edit of the campaign does not change a retry.
func TestParametersFrozenOnFirstClaim(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	d := r.topUpOnly("c", "sim")
	_ = r.sims["sim"].SetFaults(providersim.Faults{Mode: providersim.ModeFail})
	r.Fire(t, "evt-1", "cust-1")
	r.Pump()
	exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-1", appEvent("evt-1"))
	before := r.Commands(exe)[0]
	if before.Status != store.CommandQueued || before.ParamsJSON == "" {
		t.Fatalf("after a failure: %+v", before)
	}
	d.Actions[0].Params = json.RawMessage(`{"amountMinor":99999,"currency":"AUD"}`)
	r.save("c", d, "r1")
	_ = r.sims["sim"].SetFaults(providersim.Faults{})
	r.Settle(10*time.Minute, 10)
	after := r.Commands(exe)[0]
	if after.Status != store.CommandSucceeded || after.ParamsJSON != before.ParamsJSON || after.EffectKey != before.EffectKey {
		t.Fatalf("retry used %s (was %s), status %s", after.ParamsJSON, before.ParamsJSON, after.Status)
	}
}

type guardFunc func(context.Context, campaign.Step) (campaign.GuardDecision, error)

func (g guardFunc) BeforeCall(ctx context.Context, s campaign.Step) (campaign.GuardDecision, error) {
	return g(ctx, s)
}

// The step seams: the pre-call guard can hold or deny before any provider call; the
// post-result hook runs in the result's transaction and can veto it.
func TestGuardAndPostResultHook(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	r.topUpOnly("c", "sim")
	ctx := context.Background()
	decision := campaign.GuardDecision{WaitUntil: t0.Add(time.Hour)}
	r.Worker.Guard = guardFunc(func(context.Context, campaign.Step) (campaign.GuardDecision, error) { return decision, nil })
	var hooked []store.CommandStatus
	hookErr := error(nil)
	r.Worker.AfterResult = func(_ context.Context, tx *sql.Tx, s campaign.Step, c store.CampaignCommand) error {
		if tx == nil {
			t.Error("no transaction")
		}
		hooked = append(hooked, c.Status)
		return hookErr
	}
	r.Fire(t, "evt-1", "cust-1")
	r.Pump()
	exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-1", appEvent("evt-1"))
	c := r.Commands(exe)[0]
	if c.Status != store.CommandQueued || !c.NextAttemptOn.Equal(t0.Add(time.Hour)) || r.sims["sim"].Stats().Calls != 0 {
		t.Fatalf("guard wait: %+v", c)
	}
	// The hook refuses: nothing recorded, the provider was called once; the claim expires
	// and the retry resends with the same key (the provider dedupes): still one effect.
	decision = campaign.GuardDecision{}
	hookErr = errors.New("ledger unavailable")
	r.Clock.Set(t0.Add(time.Hour))
	if _, err := r.Worker.Sweep(ctx, 10); err == nil {
		t.Fatal("hook error not reported")
	}
	if c := r.Commands(exe)[0]; c.Status != store.CommandRunning {
		t.Fatalf("after a refused record: %s", c.Status)
	}
	hookErr = nil
	r.Settle(time.Minute, 5)
	c = r.Commands(exe)[0]
	if c.Status != store.CommandSucceeded || r.sims["sim"].Applied(c.EffectKey) != 1 || hooked[len(hooked)-1] != store.CommandSucceeded {
		t.Fatalf("after the hook accepted: %s, applied %d, hooked %v", c.Status, r.sims["sim"].Applied(c.EffectKey), hooked)
	}
	// Deny fails the command without calling.
	decision = campaign.GuardDecision{Deny: "budget exhausted"}
	r.Fire(t, "evt-2", "cust-2")
	calls := r.sims["sim"].Stats().Calls
	r.Pump()
	c = r.Commands(campaign.ExecutionID("bu-1", "c", "r1", "cust-2", appEvent("evt-2")))[0]
	if c.Status != store.CommandFailed || !strings.Contains(c.LastError, "budget exhausted") || r.sims["sim"].Stats().Calls != calls {
		t.Fatalf("deny: %+v", c)
	}
}

// Per-provider concurrency holds under load, and a busy provider sends commands back to
// QUEUED instead of piling them up in memory.
func TestProviderConcurrencyAndBackpressure(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{Concurrency: 2, AdmitWait: 50 * time.Millisecond, Timeout: 5 * time.Second})
	r.topUpOnly("c", "sim")
	_ = r.sims["sim"].SetFaults(providersim.Faults{Mode: providersim.ModeSlow, Delay: "150ms"})
	ctx := context.Background()
	for i := range 12 {
		if _, err := r.Dispatcher.HandleEvent(ctx, event("evt-"+string(rune('a'+i)), "cust")); err != nil {
			t.Fatal(err)
		}
	}
	// Run all command messages at once, as a bus with many deliveries would.
	msgs := r.Unpublished("")
	var wg sync.WaitGroup
	for _, m := range msgs {
		wg.Go(func() {
			if err := r.Worker.Handle(ctx, m.Body); err != nil {
				t.Error(err)
			}
		})
	}
	inflight := 0
	stop := make(chan struct{})
	var peak int
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range r.Providers.Stats() {
				if s.Name == "sim" && s.InFlight > peak {
					peak = s.InFlight
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	wg.Wait()
	close(stop)
	_ = inflight
	if peak > 2 {
		t.Fatalf("%d calls in flight, limit 2", peak)
	}
	var st campaign.ProviderStats
	for _, s := range r.Providers.Stats() {
		if s.Name == "sim" {
			st = s
		}
	}
	if st.Rejected == 0 || st.Calls >= 12 {
		t.Fatalf("no backpressure: %+v", st)
	}
	m, err := campaign.ReadMetrics(ctx, r.Store, r.Clock, r.Providers, "")
	if err != nil || m.CommandsWaiting != int(st.Rejected) {
		t.Fatalf("metrics %+v (%v), rejected %d", m, err, st.Rejected)
	}
	_ = r.sims["sim"].SetFaults(providersim.Faults{})
	r.Settle(2*time.Second, 30)
	if m, _ := campaign.ReadMetrics(ctx, r.Store, r.Clock, r.Providers, ""); m.CommandsWaiting != 0 || r.sims["sim"].Stats().Applied != 12 {
		t.Fatalf("after the provider caught up: %+v, applied %d", m, r.sims["sim"].Stats().Applied)
	}
}

// The projection counts each command once per campaign and day, exact under replay.
func TestProjectionExactUnderReplay(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	r.welcomeThree()
	ctx := context.Background()
	facts := r.Pump()
	read := func() store.CampaignCounts {
		c, err := r.Store.CampaignCountsByDay(ctx, store.CampaignCountsParams{BusinessUnitID: "bu-1", CampaignID: "welcome", From: "2026-10-01", To: "2026-10-01"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := read()
	if len(first.Days) != 1 || first.Days[0].ByStatus["SUCCEEDED"] != 9 || len(first.Days[0].ByStatus) != 1 || first.FreshTo == nil {
		t.Fatalf("counts %+v", first)
	}
	slices.Reverse(facts)
	for _, f := range facts {
		if err := r.Projection.Handle(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if again := read(); again.Days[0].ByStatus["SUCCEEDED"] != 9 || len(again.Days[0].ByStatus) != 1 {
		t.Fatalf("after replay %+v", again)
	}
	// Every fact has its own event id and the revisions of one command increase.
	seen := map[string]bool{}
	last := map[string]int64{}
	slices.Reverse(facts)
	for _, b := range facts {
		var f store.CampaignActionOutcomeEvent
		_ = json.Unmarshal(b, &f)
		if seen[f.EventID] || f.Revision <= last[f.CommandID] {
			t.Fatalf("fact %s (revision %d after %d)", f.EventID, f.Revision, last[f.CommandID])
		}
		seen[f.EventID], last[f.CommandID] = true, f.Revision
		// Seed 002's campaign_action_event names the run and the recipient.
		if f.RunID != "r1" || !strings.HasPrefix(f.RecipientID, "cust-e") || !strings.Contains(string(b), `"runId":"r1"`) ||
			!strings.Contains(string(b), `"recipientId":"`+f.RecipientID+`"`) {
			t.Fatalf("fact %s: run %q, recipient %q: %s", f.EventID, f.RunID, f.RecipientID, b)
		}
	}
	// The projection keeps them: per run and recipient, exact under the reversed replay; a
	// re-run (run r2) of the same events is told from the first run.
	r.save("welcome", threeSteps("sim"), "r2")
	for _, id := range []string{"e1", "e2", "e3"} {
		r.Fire(t, id, "cust-"+id)
	}
	rerun := r.Pump()
	slices.Reverse(rerun)
	for _, f := range append(rerun, facts...) { // replayed, reordered and duplicated
		if err := r.Projection.Handle(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	db := r.Store.(interface{ DB() *sql.DB }).DB()
	rows, err := db.Query(`SELECT RunId, RecipientId, Status, COUNT(*) FROM CampaignCommandProjection GROUP BY RunId, RecipientId, Status ORDER BY RunId, RecipientId`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var run, rcpt, st string
		var n int
		if err := rows.Scan(&run, &rcpt, &st, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s/%s %s %d", run, rcpt, st, n))
	}
	want := []string{"r1/cust-e1 SUCCEEDED 3", "r1/cust-e2 SUCCEEDED 3", "r1/cust-e3 SUCCEEDED 3", "r2/cust-e1 SUCCEEDED 3", "r2/cust-e2 SUCCEEDED 3", "r2/cust-e3 SUCCEEDED 3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("projection by run and recipient %v, want %v", got, want)
	}
}

// A command in doubt (its worker died after calling) that has to wait — the campaign was
// paused meanwhile — stays in doubt: after the pause it is never called again on a provider
// that cannot deduplicate; it waits UNKNOWN for a person with its one effect.
func TestInDoubtStaysInDoubtWhileWaiting(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	d := r.topUpOnly("c", "plain")
	ctx := context.Background()
	exe := r.fireOne("c")
	c := r.Commands(exe)[0]
	cl, err := r.Store.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: c.CommandID, Now: r.Clock.Now(), Lease: time.Minute, FreezeParams: string(d.Actions[0].Params)})
	if err != nil || !cl.Claimed {
		t.Fatal(cl, err)
	}
	p, _ := r.Providers.Get("plain")
	if _, err := p.Call(ctx, campaign.Call{CommandID: c.CommandID, EffectKey: c.EffectKey, ActionType: c.ActionType, Params: json.RawMessage(cl.Command.ParamsJSON)}); err != nil {
		t.Fatal(err)
	}
	d.Status = store.CampaignPaused
	r.save("c", d, "r1")
	r.Clock.Advance(2 * time.Minute)
	if _, err := r.Worker.Sweep(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if c := r.Commands(exe)[0]; c.Status != store.CommandUnknown || c.NextAttemptOn == nil {
		t.Fatalf("paused in doubt: %s", c.Status)
	}
	d.Status = store.CampaignActive
	r.save("c", d, "r1")
	r.Drain(nil)
	r.Settle(time.Minute, 10)
	got := r.Commands(exe)[0]
	if got.Status != store.CommandUnknown || got.NextAttemptOn != nil || r.sims["plain"].Applied(c.EffectKey) != 1 {
		t.Fatalf("after the pause: %s (next %v), applied %d", got.Status, got.NextAttemptOn, r.sims["plain"].Applied(c.EffectKey))
	}
}

// A trigger event of the attribute engine (seed 003's shape: event_name, customer_id,
// business_unit_id; docs/attributes.md) on the events topic starts the campaigns triggered
// by its name, once; before, its type read empty and the message was dead-lettered.
func TestAttributeTriggerEventStartsCampaign(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	def := threeSteps("sim")
	def.Triggers = []string{"First_Login_Reward"}
	r.save("first-login", def, "r1")
	ctx := context.Background()
	trigger := []byte(`{"event_id":"attr-gen-84e4fa93d0014b1420b4dac9","event_name":"First_Login_Reward","customer_id":"cust-1",` +
		`"business_unit_id":"bu-1","timestamp":"2026-07-12T14:30:00Z","metadata":{"source_system":"attribute-service"}}`)
	for i, want := range []int{1, 0} {
		if n, err := r.Dispatcher.HandleEvent(ctx, trigger); n != want || err != nil {
			t.Fatalf("delivery %d: created %d, %v; want %d", i, n, err, want)
		}
	}
	if exe := r.Execution(campaign.ExecutionID("bu-1", "first-login", "r1", "cust-1", events.Identity("", "attr-gen-84e4fa93d0014b1420b4dac9"))); exe.RecipientID != "cust-1" {
		t.Fatalf("execution %+v", exe)
	}
}

// TestInDoubtLookupThatFailsNeverCallsAgain: a command in doubt at a provider that does
// not deduplicate, whose lookups fail (503) or lose their answer, stays UNKNOWN and retries
// the lookup; it never calls the provider again (a second call would apply the effect
// twice). Once a lookup answers, the command is SUCCEEDED with the effect applied once.
func TestInDoubtLookupThatFailsNeverCallsAgain(t *testing.T) {
	for _, f := range []providersim.Faults{{LookupFailPercent: 100}, {LookupLosePercent: 100}} {
		t.Run(fmt.Sprintf("fail%d-lose%d", f.LookupFailPercent, f.LookupLosePercent), func(t *testing.T) {
			r := newRig(t, campaign.ProviderConfig{Timeout: 300 * time.Millisecond})
			r.topUpOnly("c", "lookup")
			sim := r.sims["lookup"]
			if err := sim.SetFaults(providersim.Faults{Mode: providersim.ModeLoseAnswer}); err != nil {
				t.Fatal(err)
			}
			r.Fire(t, "evt-1", "cust-1")
			r.Pump()
			exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-1", appEvent("evt-1"))
			c := r.Commands(exe)[0]
			if c.Status != store.CommandUnknown || sim.Applied(c.EffectKey) != 1 {
				t.Fatalf("after the lost answer: %s, applied %d", c.Status, sim.Applied(c.EffectKey))
			}
			if err := sim.SetFaults(f); err != nil {
				t.Fatal(err)
			}
			r.Settle(10*time.Minute, 6)
			c = r.Commands(exe)[0]
			st := sim.Stats()
			if st.Lookups == 0 || st.LookupFailed+st.LookupLost != st.Lookups {
				t.Fatalf("lookups %+v: the lookup fault was not met", st)
			}
			if st.Calls != 1 || sim.Applied(c.EffectKey) != 1 || c.Status != store.CommandUnknown {
				t.Fatalf("after %d failed lookups: %d calls, applied %d, %s (%s); want 1 call, applied once, UNKNOWN",
					st.Lookups, st.Calls, sim.Applied(c.EffectKey), c.Status, c.LastError)
			}
			_ = sim.SetFaults(providersim.Faults{})
			r.Settle(10*time.Minute, 20)
			c = r.Commands(exe)[0]
			if c.Status != store.CommandSucceeded || sim.Applied(c.EffectKey) != 1 || sim.Stats().Calls != 1 {
				t.Fatalf("resolved %s, applied %d, calls %d", c.Status, sim.Applied(c.EffectKey), sim.Stats().Calls)
			}
		})
	}
}

// A failure of our own store before the provider call (the budget's reservation refused by
// the database) leaves the command a LastError without store internals — the dialect, the
// query name, the database's text — but naming the stage and a stable code; an
// automation.Error meant for people keeps its message (issue 33, item 11).
func TestLastErrorHidesStoreInternals(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	r.topUpOnly("c", "sim")
	guardErr := fmt.Errorf("sqlite BudgetReserve: %w", errors.New("database is locked (5) (SQLITE_BUSY)"))
	r.Worker.Guard = guardFunc(func(context.Context, campaign.Step) (campaign.GuardDecision, error) {
		return campaign.GuardDecision{}, guardErr
	})
	r.Fire(t, "evt-1", "cust-1")
	r.Pump()
	c := r.Commands(campaign.ExecutionID("bu-1", "c", "r1", "cust-1", appEvent("evt-1")))[0]
	if c.Status != store.CommandQueued || strings.Contains(c.LastError, "sqlite") || strings.Contains(c.LastError, "BudgetReserve") ||
		strings.Contains(c.LastError, "SQLITE") || c.LastError != "budget: internal error (Internal), retried; details in the log" {
		t.Fatalf("LastError %q (status %s)", c.LastError, c.Status)
	}
	guardErr = automation.Errorf(automation.CodeConflict, "the budget is paused")
	r.Fire(t, "evt-2", "cust-2")
	r.Pump()
	c = r.Commands(campaign.ExecutionID("bu-1", "c", "r1", "cust-2", appEvent("evt-2")))[0]
	if c.LastError != "budget: the budget is paused (Conflict)" {
		t.Fatalf("LastError %q", c.LastError)
	}
}
