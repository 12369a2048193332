package campaignbudget_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaignbudget"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/preference"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// smsRecorder is an sms channel that records what it was asked to send.
type smsRecorder struct {
	mu   sync.Mutex
	sent []delivery.Message
}

func (c *smsRecorder) Traits() delivery.Traits             { return delivery.Traits{Idempotent: true} }
func (c *smsRecorder) ValidateRecipient(addr string) error { return nil }
func (c *smsRecorder) Send(_ context.Context, m delivery.Message) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, m)
	return "ref-" + m.DeliveryKey, nil
}
func (c *smsRecorder) to(addr string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.sent {
		if m.Recipient == addr {
			n++
		}
	}
	return n
}

// smsRig is a campaign worker whose one provider "sms" is a delivery channel, with the
// budget guard and the preference gate in its seams: a SQLite store, a manual clock and the
// simulated billing server over real HTTP. NOTIFICATION_SMS costs a fixed 7 USD cents in bu-1.
type smsRig struct {
	t      *testing.T
	st     *sqlstore.Store
	clock  *automation.ManualClock
	bill   *billingsim.Server
	bs     *budget.Service
	prefs  *preference.Service
	worker *campaign.Worker
	admin  *campaign.Admin
}

func newSMSRig(t *testing.T, now time.Time, sms delivery.Channel) *smsRig {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clock := automation.NewManualClock(now)
	providers := campaign.NewProviders(clock)
	providers.Add("sms", &campaign.ChannelProvider{Name: "sms", Channel: sms, Clock: clock}, campaign.ProviderConfig{Concurrency: 4, Timeout: 5 * time.Second})
	catalog, err := campaign.NewCatalog(campaign.BuiltinActionTypes(), providers)
	if err != nil {
		t.Fatal(err)
	}
	bill := billingsim.New(clock)
	srv := httptest.NewServer(bill)
	t.Cleanup(srv.Close)
	bill.SetBalance("bu-1", "USD", 1_000_000)
	bs := &budget.Service{Store: st, Billing: &billing.Client{BaseURL: srv.URL, Timeout: 5 * time.Second}, Clock: clock,
		KnownActionType: catalog.Known, InDoubtAfter: time.Minute}
	guard := &campaignbudget.Guard{Budget: bs, Campaigns: st, Clock: clock}
	prefs := &preference.Service{Store: st, Registry: preference.DefaultRegistry(), Clock: clock}
	worker := &campaign.Worker{Store: st, Clock: clock, Providers: providers, Lease: time.Minute, PauseRecheck: time.Minute,
		Guard: guard, AfterResult: guard.AfterResult, Gate: prefs}
	if _, err := bs.PutPolicy(ctx, "bu-1", "NOTIFICATION_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "7", Unit: "SMS", TransferType: "SMS_FEE", Currency: "USD"}, 0, "ops"); err != nil {
		t.Fatal(err)
	}
	return &smsRig{t: t, st: st, clock: clock, bill: bill, bs: bs, prefs: prefs, worker: worker,
		admin: &campaign.Admin{Store: st, Catalog: catalog, Clock: clock}}
}

// campaign saves an active campaign id in bu-1 whose one NOTIFICATION_SMS action on "sms"
// has params, triggered by SignedUp, with a budget of 1000 USD cents.
func (r *smsRig) campaign(id, params string) {
	r.t.Helper()
	ctx := context.Background()
	if _, err := r.admin.Save(ctx, "bu-1", id, campaign.Definition{Name: id, Status: store.CampaignActive, Triggers: []string{"SignedUp"},
		Actions: []campaign.Action{{Key: "sms", Type: "NOTIFICATION_SMS", Provider: "sms", Params: json.RawMessage(params)}}}, nil); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.bs.CreateBudget(ctx, "bu-1", id, budget.BudgetInput{Currency: "USD", MaxCost: money.Minor(1000)}, "ops"); err != nil {
		r.t.Fatal(err)
	}
}

// dispatch hands the SignedUp event g1 to the campaign dispatcher and publishes the outbox,
// handing each queued command's id to fn.
func (r *smsRig) dispatch(fn func(commandID string)) {
	r.t.Helper()
	ctx := context.Background()
	if _, err := (&campaign.Dispatcher{Store: r.st, Clock: r.clock}).HandleEvent(ctx, event("g1")); err != nil {
		r.t.Fatal(err)
	}
	for {
		msgs, err := r.st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
		if err != nil {
			r.t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		var ids []int64
		for _, m := range msgs {
			if m.Destination == topology.CampaignCommandsQueue {
				var c campaign.CommandMessage
				if err := json.Unmarshal(m.Body, &c); err != nil {
					r.t.Fatal(err)
				}
				fn(c.CommandID)
			}
			ids = append(ids, m.ID)
		}
		if err := r.st.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: ids, Now: r.clock.Now()}); err != nil {
			r.t.Fatal(err)
		}
	}
}

// oneCommand saves campaign c-sms, whose action texts number "sale", dispatches its one
// command and returns the action's params and the command's id.
func (r *smsRig) oneCommand(number string) (params, id string) {
	r.t.Helper()
	params = `{"text":"sale","recipient":"` + number + `"}`
	r.campaign("c-sms", params)
	r.dispatch(func(c string) { id = c })
	return params, id
}

// optOut records number's opt-out of marketing sms (an SMS STOP) in bu-1.
func (r *smsRig) optOut(number string) {
	r.t.Helper()
	no := false
	if _, err := r.prefs.Set(context.Background(), "bu-1", number, number, "sms-stop", preference.Change{Preferences: []preference.Item{{Channel: "sms", Category: "marketing", OptedIn: &no}}}); err != nil {
		r.t.Fatal(err)
	}
}

// fees counts the billing ledger's orders of command id (its first five attempts).
func (r *smsRig) fees(id string) (n int) {
	for _, tr := range r.bill.Ledger() {
		for a := int64(0); a < 5; a++ {
			if tr.OrderID == budget.OrderID(id, a) {
				n++
			}
		}
	}
	return n
}

// TestNotificationActionGated: a priced NOTIFICATION_SMS campaign action goes through the
// recipient's preferences and quiet hours (the same shared/preference gate the dispatcher
// asks) before the budget guard. To an opted-out number it ends SKIPPED with the reason, is
// never sent and is charged no fee; inside quiet hours it waits QUEUED until the window ends
// without a retry counted or a fee charged, then is sent and charged once; a transactional
// category passes quiet hours; anyone else is sent and charged at once.
func TestNotificationActionGated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// 2026-10-01 12:00Z is 22:00 in Sydney (AEST, +10): inside a 21:00–08:00 window that
	// ends at 08:00 AEST on 2026-10-02, 2026-10-01T22:00Z.
	sms := &smsRecorder{}
	r := newSMSRig(t, time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC), sms)
	st, clock, prefs, worker := r.st, r.clock, r.prefs, r.worker
	const outNo, quietNo, okNo, svcNo = "+61400000001", "+61400000002", "+61400000003", "+61400000004"
	for id, params := range map[string]string{
		"c-out":   `{"text":"sale","recipient":"` + outNo + `"}`,
		"c-quiet": `{"text":"sale","recipient":"` + quietNo + `"}`,
		"c-ok":    `{"text":"sale","recipient":"` + okNo + `"}`,
		"c-svc":   `{"text":"your password expires","recipient":"` + svcNo + `","category":"service"}`,
	} {
		r.campaign(id, params)
	}
	r.optOut(outNo)
	for _, n := range []string{quietNo, svcNo} {
		if _, err := prefs.Set(ctx, "bu-1", n, "jane", "api", preference.Change{QuietHours: &preference.QuietHoursInput{Start: "21:00", End: "08:00", TimeZoneID: "Australia/Sydney"}}); err != nil {
			t.Fatal(err)
		}
	}

	byCampaign := map[string]string{}
	r.dispatch(func(id string) {
		cmd, err := st.CampaignCommandGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		byCampaign[cmd.CampaignID] = id
	})
	if len(byCampaign) != 4 {
		t.Fatalf("commands: %v", byCampaign)
	}
	for _, id := range byCampaign {
		if err := worker.Run(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	get := func(campaignID string) store.CampaignCommand {
		t.Helper()
		c, err := st.CampaignCommandGet(ctx, byCampaign[campaignID])
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	fees := func(campaignID string) int { return r.fees(byCampaign[campaignID]) }
	costOf := func(campaignID string) int64 {
		t.Helper()
		b, err := st.BudgetGet(ctx, "bu-1", campaignID)
		if err != nil {
			t.Fatal(err)
		}
		return b.Cost + b.ReservedCost
	}

	out := get("c-out")
	if out.Status != store.CommandSkipped || !strings.Contains(out.LastError, "opted out of marketing sms") || !strings.Contains(out.LastError, "sms-stop") {
		t.Errorf("opted out: %s %q, want SKIPPED naming the opt-out", out.Status, out.LastError)
	}
	if sms.to(outNo) != 0 || fees("c-out") != 0 || costOf("c-out") != 0 {
		t.Errorf("opted out: sent %d, fees %d, budget cost %d; want none", sms.to(outNo), fees("c-out"), costOf("c-out"))
	}
	quiet := get("c-quiet")
	wantUntil := time.Date(2026, 10, 1, 22, 0, 0, 0, time.UTC)
	if quiet.Status != store.CommandQueued || quiet.RetryCount != 0 || quiet.AttemptCount != 0 || quiet.NextAttemptOn == nil || !quiet.NextAttemptOn.Equal(wantUntil) ||
		!strings.Contains(quiet.LastError, "waiting for quiet hours to end at 2026-10-02 08:00 (Australia/Sydney)") {
		t.Errorf("quiet: %s retries %d attempts %d next %v %q; want QUEUED until %v, no retry or attempt counted", quiet.Status, quiet.RetryCount, quiet.AttemptCount, quiet.NextAttemptOn, quiet.LastError, wantUntil)
	}
	if sms.to(quietNo) != 0 || fees("c-quiet") != 0 || costOf("c-quiet") != 0 {
		t.Errorf("quiet: sent %d, fees %d, budget cost %d before the window ends; want none", sms.to(quietNo), fees("c-quiet"), costOf("c-quiet"))
	}
	for _, id := range []string{"c-ok", "c-svc"} {
		if c := get(id); c.Status != store.CommandSucceeded || fees(id) != 1 || costOf(id) != 7 {
			t.Errorf("%s: %s %q, fees %d, cost %d; want SUCCEEDED, charged 7 once", id, c.Status, c.LastError, fees(id), costOf(id))
		}
	}
	if sms.to(okNo) != 1 || sms.to(svcNo) != 1 {
		t.Errorf("sent to ok %d, to transactional %d; want 1 each", sms.to(okNo), sms.to(svcNo))
	}

	// The window ends: the sweep claims the waiting command, which is sent and charged once.
	clock.Set(wantUntil)
	if _, err := worker.Sweep(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if q := get("c-quiet"); q.Status != store.CommandSucceeded || q.AttemptCount != 1 || sms.to(quietNo) != 1 || fees("c-quiet") != 1 || costOf("c-quiet") != 7 {
		t.Errorf("after the window: %s %q, sent %d, fees %d, cost %d; want SUCCEEDED, sent and charged once", q.Status, q.LastError, sms.to(quietNo), fees("c-quiet"), costOf("c-quiet"))
	}
	// The skipped command stays skipped: nothing more is sent or charged.
	if _, err := worker.Sweep(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if sms.to(outNo) != 0 || fees("c-out") != 0 || get("c-out").Status != store.CommandSkipped {
		t.Errorf("the skipped command moved: %s, sent %d, fees %d", get("c-out").Status, sms.to(outNo), fees("c-out"))
	}
}

// TestInDoubtNotificationActionHonoursAnOptOutBeforeItsFirstClaim (issue 38): a
// NOTIFICATION_SMS command whose first claim died before the gate (the process crashed
// after the claim) is taken over in doubt when its lease runs out. An in-doubt claim used
// not to ask the gate, and the SMS provider deduplicates, so it was resent to a number
// opted out between the command's creation and that first claim. Now an opt-out recorded
// at or before the first claim ends it SKIPPED, never sent and charged no fee (no earlier
// attempt can have passed the gate); an opt-out recorded after the first claim leaves the
// resend as it was (the earlier attempt may have reached the provider, which deduplicates).
func TestInDoubtNotificationActionHonoursAnOptOutBeforeItsFirstClaim(t *testing.T) {
	t.Parallel()
	const (
		beforeFirstClaim = iota
		atFirstClaim
		afterFirstClaim
	)
	for _, tc := range []struct {
		name string
		when int
		want store.CommandStatus
		sent int
		cost int64
	}{
		{name: "opted out after the command was created, before its first claim", when: beforeFirstClaim, want: store.CommandSkipped},
		{name: "opted out at the first claim's instant", when: atFirstClaim, want: store.CommandSkipped},
		{name: "opted out after the first claim", when: afterFirstClaim, want: store.CommandSucceeded, sent: 1, cost: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			sms := &smsRecorder{}
			rig := newSMSRig(t, time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC), sms) // 12:00 in Sydney
			st, clock, worker := rig.st, rig.clock, rig.worker
			const number = "+61400000009"
			params, id := rig.oneCommand(number)
			optOut := func() { rig.optOut(number) }
			clock.Advance(time.Second) // the command was created a second before
			if tc.when == beforeFirstClaim {
				optOut()
				clock.Advance(time.Second)
			}
			if tc.when == atFirstClaim {
				optOut()
			}
			// The first claim (parameters frozen, as the worker's claim by id does), and the
			// process dies before the gate.
			claimedAt := clock.Now()
			r, err := st.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: id, Now: claimedAt, Lease: time.Minute, FreezeParams: params})
			if err != nil || !r.Claimed || r.InDoubt {
				t.Fatalf("first claim: %+v %v", r, err)
			}
			if r.Command.FirstClaimedOn == nil || !r.Command.FirstClaimedOn.Equal(claimedAt) {
				t.Fatalf("first claim kept as %v, want %v", r.Command.FirstClaimedOn, claimedAt)
			}
			if tc.when == afterFirstClaim {
				clock.Advance(time.Second)
				optOut()
			}
			clock.Advance(2 * time.Minute)
			if n, err := worker.Sweep(ctx, 10); err != nil || n != 1 {
				t.Fatalf("sweep after the lease: %d %v", n, err)
			}
			c, err := st.CampaignCommandGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			fees := rig.fees(id)
			b, err := st.BudgetGet(ctx, "bu-1", "c-sms")
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != tc.want || sms.to(number) != tc.sent || b.Cost+b.ReservedCost != tc.cost || fees != tc.sent {
				t.Fatalf("in-doubt claim = %s %q, sent %d, fees %d, budget cost %d; want %s, sent %d, cost %d", c.Status, c.LastError, sms.to(number), fees, b.Cost+b.ReservedCost, tc.want, tc.sent, tc.cost)
			}
			if tc.want == store.CommandSkipped && !strings.Contains(c.LastError, "opted out of marketing sms") {
				t.Fatalf("skipped with %q, want the opt-out named", c.LastError)
			}
			if c.FirstClaimedOn == nil || !c.FirstClaimedOn.Equal(claimedAt) {
				t.Fatalf("the takeover moved the first claim: %v, want %v", c.FirstClaimedOn, claimedAt)
			}
		})
	}
}

// lookingSMS is an sms channel that does not deduplicate but answers lookups from what it
// sent (delivery.Looker): a key it never sent is LookupNotDelivered.
type lookingSMS struct{ smsRecorder }

func (c *lookingSMS) Traits() delivery.Traits { return delivery.Traits{} }
func (c *lookingSMS) Lookup(_ context.Context, m delivery.Message) (delivery.LookupStatus, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sent {
		if s.DeliveryKey == m.DeliveryKey {
			return delivery.LookupDelivered, "ref-" + s.DeliveryKey, nil
		}
	}
	return delivery.LookupNotDelivered, "", nil
}

// TestInDoubtNotificationActionNotAppliedAsksTheGate (issue 38): a NOTIFICATION_SMS command
// on a channel that does not deduplicate but answers lookups, whose first claim died before
// the gate, is taken over in doubt when its lease runs out. The recipient opted out (or
// quiet hours began) after that first claim, so the first-claim rule does not skip it. The
// lookup answers "not applied": the call is then a clean send and the full gate decides it,
// as on a clean claim. An opted-out recipient ends SKIPPED, never sent; quiet hours hold it
// (still in doubt, no attempt counted) until they end, then it is sent and charged once.
// Neither is charged a fee nor holds a reservation while not sent: the lookup runs before
// the budget guard. It used to be sent at once and charged.
func TestInDoubtNotificationActionNotAppliedAsksTheGate(t *testing.T) {
	t.Parallel()
	const (
		optedOut = iota
		quiet
		allowed
	)
	// 2026-10-01 02:00Z is 12:00 in Sydney; quiet hours 11:30–13:00 end at 03:00Z.
	quietEnd := time.Date(2026, 10, 1, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		what int
		want store.CommandStatus
		sent int
	}{
		{name: "opted out after the first claim", what: optedOut, want: store.CommandSkipped},
		{name: "quiet hours set after the first claim", what: quiet, want: store.CommandUnknown},
		{name: "nothing in the way", what: allowed, want: store.CommandSucceeded, sent: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			sms := &lookingSMS{}
			rig := newSMSRig(t, time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC), sms)
			st, clock, prefs, worker := rig.st, rig.clock, rig.prefs, rig.worker
			const number = "+61400000010"
			params, id := rig.oneCommand(number)
			clock.Advance(time.Second)
			// The first claim (parameters frozen, as the worker's claim by id does); the
			// process dies before the gate.
			claimedAt := clock.Now()
			r, err := st.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: id, Now: claimedAt, Lease: time.Minute, FreezeParams: params})
			if err != nil || !r.Claimed || r.InDoubt {
				t.Fatalf("first claim: %+v %v", r, err)
			}
			clock.Advance(time.Second)
			switch tc.what {
			case optedOut:
				rig.optOut(number)
			case quiet:
				if _, err := prefs.Set(ctx, "bu-1", number, "jane", "api", preference.Change{QuietHours: &preference.QuietHoursInput{Start: "11:30", End: "13:00", TimeZoneID: "Australia/Sydney"}}); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(2 * time.Minute)
			if n, err := worker.Sweep(ctx, 10); err != nil || n != 1 {
				t.Fatalf("sweep after the lease: %d %v", n, err)
			}
			fees := func() int { return rig.fees(id) }
			check := func(stage string, want store.CommandStatus, sent int) store.CampaignCommand {
				t.Helper()
				c, err := st.CampaignCommandGet(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				b, err := st.BudgetGet(ctx, "bu-1", "c-sms")
				if err != nil {
					t.Fatal(err)
				}
				if c.Status != want || sms.to(number) != sent || fees() != sent || b.Cost != int64(7*sent) || b.ReservedCost != 0 {
					t.Fatalf("%s: %s %q, sent %d, fees %d, budget cost %d reserved %d; want %s, sent %d, charged %d",
						stage, c.Status, c.LastError, sms.to(number), fees(), b.Cost, b.ReservedCost, want, sent, 7*sent)
				}
				return c
			}
			c := check("in-doubt claim", tc.want, tc.sent)
			switch tc.what {
			case optedOut:
				if !strings.Contains(c.LastError, "opted out of marketing sms") {
					t.Fatalf("skipped with %q, want the opt-out named", c.LastError)
				}
			case quiet:
				if c.NextAttemptOn == nil || !c.NextAttemptOn.Equal(quietEnd) || c.RetryCount != 0 || !strings.Contains(c.LastError, "quiet hours") {
					t.Fatalf("quiet hours: next %v, retries %d, %q; want due at %v, no retry counted", c.NextAttemptOn, c.RetryCount, c.LastError, quietEnd)
				}
				clock.Set(quietEnd)
				if n, err := worker.Sweep(ctx, 10); err != nil || n != 1 {
					t.Fatalf("sweep at the window's end: %d %v", n, err)
				}
				check("after quiet hours", store.CommandSucceeded, 1)
			}
			// Nothing moves afterwards: no second send, no second fee.
			clock.Advance(time.Hour)
			if _, err := worker.Sweep(ctx, 10); err != nil {
				t.Fatal(err)
			}
			if tc.what == optedOut {
				check("later", store.CommandSkipped, 0)
			} else {
				check("later", store.CommandSucceeded, 1)
			}
		})
	}
}
