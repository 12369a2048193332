package campaignbudget_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaignbudget"
	"github.com/automation-platform/automation/shared/store"
)

// Eight workers run 150 commands of one campaign whose budget pays for 100: exactly 100
// actions take effect, cost never passes maxCost, the other 50 wait (WAITING_BUDGET, or
// QUEUED behind the pause) and the campaign is paused for BUDGET. After maxCost is raised
// the same commands are claimed again, re-checked and the campaign completes.
func TestEightWorkersBudgetForHundredThenRaise(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, nil) // 100 actions of 10
	ids := r.start(150)
	if len(ids) != 150 {
		t.Fatalf("%d commands queued, want 150", len(ids))
	}
	r.runAll(ids, 8)
	st := r.byStatus(ids)
	if st[store.CommandSucceeded] != 100 || st[store.CommandWaitingBudget]+st[store.CommandQueued] != 50 || st[store.CommandWaitingBudget] == 0 {
		t.Fatalf("statuses %v, want 100 SUCCEEDED and 50 waiting (some WAITING_BUDGET)", st)
	}
	if got := r.action.Stats().Applied; got != 100 {
		t.Fatalf("the provider applied %d actions, want 100", got)
	}
	b := r.budgetRow()
	if b.Cost != 1000 || b.ReservedCost != 0 || b.Cost+b.ReservedCost > b.MaxCost {
		t.Fatalf("budget %+v, want cost 1000 of 1000 and nothing reserved", b)
	}
	if b.Status != store.BudgetPaused || b.PausedReason != store.ShortBudget {
		t.Fatalf("budget %s/%s, want PAUSED/BUDGET", b.Status, b.PausedReason)
	}
	if s := r.campaignStatus(); s != store.CampaignPaused {
		t.Fatalf("campaign %s, want PAUSED", s)
	}
	if total := r.ledgerCheck(); total != 1000 {
		t.Fatalf("ledger total %d, want 1000", total)
	}
	for _, id := range ids {
		if c := r.Command(id); c.Status == store.CommandWaitingBudget && (c.NextAttemptOn == nil || c.LastError != "waiting for budget: BUDGET") {
			t.Fatalf("waiting command %+v: want a recheck time and the reason", c)
		}
	}
	waits, err := r.budget.Waiting(ctx, "bu-1", 100)
	if err != nil || len(waits) == 0 {
		t.Fatalf("the WAITING_BUDGET queue is empty (%v)", err)
	}

	// Still paused: a recheck without a raise changes nothing.
	r.Settle(time.Minute, 5)
	if st := r.byStatus(ids); st[store.CommandSucceeded] != 100 {
		t.Fatalf("ran while paused: %v", st)
	}

	if _, err := r.budget.SetMaxCost(ctx, "bu-1", "c1", budget.BudgetInput{Currency: "USD", MaxCost: 1500, Reason: "more"}, b.Version, "ops"); err != nil {
		t.Fatal(err)
	}
	r.Settle(time.Minute, 20)
	if st := r.byStatus(ids); st[store.CommandSucceeded] != 150 {
		t.Fatalf("after the raise: %v, want 150 SUCCEEDED", st)
	}
	if s := r.campaignStatus(); s != store.CampaignActive {
		t.Fatalf("campaign %s after the raise, want ACTIVE", s)
	}
	if b := r.budgetRow(); b.Cost != 1500 || b.ReservedCost != 0 {
		t.Fatalf("budget %+v, want cost 1500", b)
	}
	if got, total := r.action.Stats().Applied, r.ledgerCheck(); got != 150 || total != 1500 {
		t.Fatalf("applied %d, charged %d; want 150 and 1500", got, total)
	}
	for _, id := range ids {
		if c := r.Command(id); c.RetryCount != 0 {
			t.Fatalf("command %s moved the retry ladder (%d): waiting for budget is no failure", id, c.RetryCount)
		}
	}
}

// A campaign resumed through its API (not a raise) claims its waiting command again and
// checks the budget again: still short, it waits and the campaign is paused again.
func TestResumeByAPIRechecksAndPausesAgain(t *testing.T) {
	r := newRig(t, 10, nil) // one action
	ids := r.start(2)
	r.runAll(ids, 1)
	if st := r.byStatus(ids); st[store.CommandSucceeded] != 1 || st[store.CommandWaitingBudget] != 1 {
		t.Fatalf("statuses %v", st)
	}
	r.setCampaignStatus(store.CampaignActive)
	r.Settle(time.Minute, 3)
	if st := r.byStatus(ids); st[store.CommandWaitingBudget] != 1 {
		t.Fatalf("statuses %v, want the command WAITING_BUDGET again", st)
	}
	if s := r.campaignStatus(); s != store.CampaignPaused {
		t.Fatalf("campaign %s, want PAUSED again", s)
	}
	if r.action.Stats().Applied != 1 {
		t.Fatal("a second action ran without budget")
	}
}

// Too little billing balance: WAITING_BUDGET with reason BALANCE, nothing held; after the
// balance is topped up and support resumes the budget, the command runs.
func TestBalanceShortWaitsThenRuns(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, nil)
	r.billing.SetBalance("bu-1", "USD", 5)
	ids := r.start(1)
	r.runAll(ids, 1)
	c := r.Command(ids[0])
	if c.Status != store.CommandWaitingBudget || c.LastError != "waiting for budget: BALANCE" {
		t.Fatalf("command %s %q, want WAITING_BUDGET for BALANCE", c.Status, c.LastError)
	}
	b := r.budgetRow()
	if b.ReservedCost != 0 || b.PausedReason != store.ShortBalance || r.campaignStatus() != store.CampaignPaused {
		t.Fatalf("budget %+v campaign %s", b, r.campaignStatus())
	}
	r.billing.SetBalance("bu-1", "USD", 1000)
	if _, err := r.budget.Resume(ctx, "bu-1", "c1", b.Version, "ops", "topped up"); err != nil {
		t.Fatal(err)
	}
	r.Settle(time.Minute, 5)
	if c := r.Command(ids[0]); c.Status != store.CommandSucceeded {
		t.Fatalf("command %s after the resume", c.Status)
	}
	if r.ledgerCheck() != 10 {
		t.Fatal("charged wrongly")
	}
}

// The quantity a price policy multiplies comes from the frozen parameters of the canonical
// type, also for a command stored under an older name.
func TestCommandQuantity(t *testing.T) {
	for _, c := range []struct {
		typ, params, want string
	}{
		{"ADD_DATA", `{"packageCode":"P","dataMb":1024}`, "1024"},
		{"ADD_POINTS", `{"points":7}`, "7"},
		{"ADD_SMS", `{"smsCount":3}`, "3"},
		{"NOTIFICATION_SMS", `{"text":"hi"}`, ""},
		{"TOP_UP", ``, ""},
	} {
		got := campaignbudget.Command(store.CampaignCommand{CommandID: "c", ActionType: c.typ, ParamsJSON: c.params})
		if got.Quantity != c.want || got.ActionType != campaign.CanonicalActionType(c.typ) {
			t.Errorf("%s %s: %+v, want quantity %q", c.typ, c.params, got, c.want)
		}
	}
	if got := campaignbudget.Command(store.CampaignCommand{ActionType: "ADD_POINTS"}).ActionType; got != "ADD_UPOINT" {
		t.Errorf("ADD_POINTS priced as %s", got)
	}
}

// countFreezes counts the price freezes that take a write transaction of their own.
type countFreezes struct {
	store.BudgetStore
	own *atomic.Int64
}

func (c countFreezes) CommandPriceFreeze(ctx context.Context, p store.CommandPrice) (store.CommandPrice, error) {
	c.own.Add(1)
	return c.BudgetStore.CommandPriceFreeze(ctx, p)
}

// A command's price is frozen in the transaction that claims it, at the claim's instant: the
// guard reads it back and writes no freeze of its own (one write transaction less per
// command). The command still runs and is charged once at that price.
func TestPriceFrozenInTheClaim(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, nil)
	own := &atomic.Int64{}
	svc := *r.budget
	svc.Store = countFreezes{BudgetStore: r.Store, own: own}
	g := &campaignbudget.Guard{Budget: &svc, Campaigns: r.Store, Clock: r.Clock}
	w := *r.Worker
	w.Guard, w.AfterResult = g, g.AfterResult
	ids := r.start(1)
	claimedAt := r.Clock.Now()
	if err := w.Run(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if n := own.Load(); n != 0 {
		t.Fatalf("%d price freezes took a transaction of their own, want 0 (frozen in the claim)", n)
	}
	p, err := r.Store.CommandPriceGet(ctx, ids[0])
	if err != nil || p.Amount != 10 || !p.FrozenOn.Equal(claimedAt) {
		t.Fatalf("frozen price %+v (%v), want 10 frozen at the claim %s", p, err, claimedAt)
	}
	if c := r.Command(ids[0]); c.Status != store.CommandSucceeded || r.ledgerCheck() != 10 {
		t.Fatalf("command %s, ledger %d; want SUCCEEDED and charged 10 once", c.Status, r.ledgerCheck())
	}
}

// policyChangedBeforeClaim saves a new price policy once the worker has asked the guard
// for its in-claim work and before the claim runs: an operator's change landing between
// the worker's reads and its claim.
type policyChangedBeforeClaim struct {
	*campaignbudget.Guard
	change func()
	once   *atomic.Bool
}

func (p policyChangedBeforeClaim) InClaim(ctx context.Context, c store.CampaignCommand) func(context.Context, *sql.Tx, store.CampaignCommand) error {
	fn := p.Guard.InClaim(ctx, c)
	if p.once.CompareAndSwap(false, true) {
		p.change()
	}
	return fn
}

// A price policy changed between the worker's reads before the claim and the claim itself
// is the one the claim freezes: the frozen price is the policy in force at its FrozenOn (the
// claim's instant), never an older version stamped after the newer one was saved (an
// operator who raised the price at 10:00:03 saw a command claimed at 10:00:05 priced at the
// old rate, and its record said the old version was in force then).
func TestPriceFrozenInTheClaimIsThePolicyAtTheClaim(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, nil)
	var changed atomic.Bool
	var newVersion int64
	g := policyChangedBeforeClaim{Guard: r.guard, once: &changed, change: func() {
		r.Clock.Advance(time.Second)
		p, err := r.budget.PutPolicy(ctx, "bu-1", "ADD_UPOINT", budget.PolicyInput{Formula: "FIXED", Rate: "12", Unit: "POINT", TransferType: "POINT_FEE", Currency: "USD"}, 1, "ops")
		if err != nil {
			t.Error(err)
		}
		newVersion = p.Version
		r.Clock.Advance(time.Second)
	}}
	w := *r.Worker
	w.Guard = g
	ids := r.start(1)
	if err := w.Run(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if !changed.Load() {
		t.Fatal("the worker never asked for the in-claim work: the test did not test")
	}
	p, err := r.Store.CommandPriceGet(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	var fp budget.FrozenPrice
	if err := json.Unmarshal([]byte(p.PriceJSON), &fp); err != nil {
		t.Fatal(err)
	}
	if p.Amount != 12 || fp.PolicyVersion != newVersion {
		t.Fatalf("frozen at %s: %d under policy v%d; want 12 under v%d, the policy in force at the claim", p.FrozenOn, p.Amount, fp.PolicyVersion, newVersion)
	}
	if c := r.Command(ids[0]); c.Status != store.CommandSucceeded || r.ledgerCheck() != 12 {
		t.Fatalf("command %s, ledger %d; want SUCCEEDED and charged 12 once", c.Status, r.ledgerCheck())
	}
}

// A command WAITING_BUDGET is claimed in a batch after its budget was raised, and the
// process dies right after the batch's claim committed (WorkerHooks.AfterBatchClaim, the
// simulator's campaign-claim-crash): the command is RUNNING, then claimed in doubt. That
// in-doubt claim must still resume the campaign paused for budget (its wait is recorded),
// or nothing ever would: the command was requeued "campaign paused" every minute forever
// (sim seed 28). The action then runs once.
func TestCrashAfterBatchClaimOfWaitingCommandStillResumes(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 10, nil) // one action
	ids := r.start(2)
	r.runAll(ids, 1)
	if st := r.byStatus(ids); st[store.CommandSucceeded] != 1 || st[store.CommandWaitingBudget] != 1 {
		t.Fatalf("statuses %v", st)
	}
	waiting := ids[0]
	if r.Command(waiting).Status != store.CommandWaitingBudget {
		waiting = ids[1]
	}
	b := r.budgetRow()
	if _, err := r.budget.SetMaxCost(ctx, "bu-1", "c1", budget.BudgetInput{Currency: "USD", MaxCost: 20, Reason: "more"}, b.Version, "ops"); err != nil {
		t.Fatal(err)
	}
	r.Clock.Advance(2 * time.Minute) // the wait's recheck is due
	r.crashAfterBatchClaim(waiting)
	if c := r.Command(waiting); c.Status != store.CommandRunning {
		t.Fatalf("command %s after the crash, want RUNNING under its lease", c.Status)
	}
	r.Worker.Hooks = nil
	r.Settle(time.Minute, 20)
	if s := r.campaignStatus(); s != store.CampaignActive {
		t.Fatalf("campaign %s after the in-doubt claim, want ACTIVE (the budget was raised)", s)
	}
	if c := r.Command(waiting); c.Status != store.CommandSucceeded {
		t.Fatalf("command %s %q, want SUCCEEDED", c.Status, c.LastError)
	}
	if got, total := r.action.Stats().Applied, r.ledgerCheck(); got != 2 || total != 20 {
		t.Fatalf("applied %d, charged %d; want 2 and 20", got, total)
	}
}

// A person's pause is not undone by an in-doubt claim of a command that was never waiting
// for budget: the guard resumes only for a recorded wait.
func TestInDoubtClaimLeavesAPersonsPause(t *testing.T) {
	r := newRig(t, 1000, nil)
	ids := r.start(1)
	r.crashAfterBatchClaim(ids[0])
	r.Worker.Hooks = nil
	r.setCampaignStatus(store.CampaignPaused)
	r.Settle(time.Minute, 10)
	if s := r.campaignStatus(); s != store.CampaignPaused {
		t.Fatalf("campaign %s, want the person's PAUSED kept", s)
	}
	if r.action.Stats().Applied != 0 {
		t.Fatal("an action ran while a person paused the campaign")
	}
}
