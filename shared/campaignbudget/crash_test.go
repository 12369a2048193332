package campaignbudget_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/budget/budgettest"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaignbudget"
	"github.com/automation-platform/automation/shared/store"
)

// crashProvider dies (budgettest.Crash) at "provider:after:Call": after the action took
// effect, before the worker records it.
type crashProvider struct {
	*campaign.HTTPProvider
	budgettest.Crash
}

func (p crashProvider) Call(ctx context.Context, c campaign.Call) (campaign.Result, error) {
	res, err := p.HTTPProvider.Call(ctx, c)
	p.Point("provider:after:Call")
	return res, err
}

// A crash at every step of reserve → charge → confirm → action → record, through the
// worker: after the lease expires the command is claimed in doubt by a healthy worker and
// ends SUCCEEDED with its action applied once, the ledger holds one transfer for its one
// orderId, the reservation is CONSUMED and cost is the fee once.
func TestCrashAtEveryStepNeverChargesTwice(t *testing.T) {
	// The price is frozen in the claim's transaction: "in:CommandPriceFreezeInTx" dies
	// before that commit, "after:CommandPriceGet" after it (the guard reads the price back).
	steps := []string{"in:CommandPriceFreezeInTx", "after:CommandPriceGet", "after:BudgetReserve", "after:FeeTransferBegin", "after:CreateTransfer",
		"after:FeeTransferRecord", "provider:after:Call", "hook:before:commit", "fault:AfterCharge", "fault:AfterCall"}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			ctx := context.Background()
			fired := &atomic.Bool{}
			// Store, billing and provider share one Crash: the worker dies once, at step.
			crash := budgettest.Crash{At: step, Value: errCrash, Fired: fired}
			r := newRig(t, 1000, nil)
			prov := &crashProvider{HTTPProvider: &campaign.HTTPProvider{BaseURL: r.action.URL(), Client: &http.Client{Transport: &http.Transport{}},
				Dedupe: true, HasLookup: true, ActionTypes: []string{"ADD_UPOINT"}}, Crash: crash}
			r.Providers.Add("crashy", prov, campaign.ProviderConfig{Concurrency: 4, Timeout: 5 * time.Second})
			// Point the campaign at the crash-capable provider.
			admin := &campaign.Admin{Store: r.Store, Catalog: r.Catalog, Clock: r.Clock}
			cur, _ := r.Store.CampaignGet(ctx, "bu-1", "c1")
			v := cur.Version
			if _, err := admin.Save(ctx, "bu-1", "c1", campaign.Definition{Name: "Points", Status: store.CampaignActive, Triggers: []string{"SignedUp"},
				Actions: []campaign.Action{{Key: "points", Type: "ADD_UPOINT", Provider: "crashy", Params: []byte(`{"points":5}`)}}}, &v); err != nil {
				t.Fatal(err)
			}
			crashed := &budget.Service{Store: budgettest.Store{BudgetStore: r.Store, Crash: crash},
				Billing: budgettest.Billing{Billing: r.budget.Billing, Crash: crash}, Clock: r.Clock, InDoubtAfter: time.Minute}
			g := &campaignbudget.Guard{Budget: crashed, Campaigns: r.Store, Clock: r.Clock}
			w := *r.Worker
			w.Guard, w.AfterResult = g, g.AfterResult
			switch step {
			case "hook:before:commit":
				w.AfterResult = func(ctx context.Context, tx *sql.Tx, s campaign.Step, c store.CampaignCommand) error {
					if err := g.AfterResult(ctx, tx, s, c); err != nil {
						return err
					}
					return errCrash // the process dies before the commit: everything rolls back
				}
			}
			// The simulator's fault points (app.Faults): the process is killed there, so every
			// store call from the point on fails with the process's context.
			runCtx, kill := context.WithCancel(ctx)
			defer kill()
			killAt := func() error {
				if fired.CompareAndSwap(false, true) {
					kill()
					return errCrash
				}
				return nil
			}
			switch step {
			case "fault:AfterCharge":
				crashed.Hooks = &budget.Hooks{AfterCharge: func(context.Context, string, error) error { return killAt() }}
			case "fault:AfterCall":
				w.Hooks = &campaign.WorkerHooks{AfterCall: func(context.Context, store.CampaignCommand, error) error { return killAt() }}
			}
			ids := r.start(1)
			func() {
				defer func() {
					if p := recover(); p != nil && p != errCrash {
						panic(p)
					}
				}()
				if err := w.Run(runCtx, ids[0]); err != nil && !errors.Is(err, errCrash) && !errors.Is(err, context.Canceled) {
					t.Fatal(err)
				}
			}()
			if step == "in:CommandPriceFreezeInTx" {
				// The claim rolled back with its freeze: the command is QUEUED, unpriced, and
				// its message comes again.
				if c := r.Command(ids[0]); c.Status != store.CommandQueued || c.AttemptCount != 0 {
					t.Fatalf("after a crash inside the claim the command is %s (attempt %d), want QUEUED unclaimed", c.Status, c.AttemptCount)
				}
				if _, err := r.Store.CommandPriceGet(ctx, ids[0]); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("a price outlived its rolled-back claim (%v)", err)
				}
				if err := r.Worker.Run(ctx, ids[0]); err != nil {
					t.Fatal(err)
				}
			} else if c := r.Command(ids[0]); c.Status != store.CommandRunning {
				t.Fatalf("after the crash the command is %s, want RUNNING (its lease held)", c.Status)
			}
			r.Clock.Advance(2 * time.Minute)
			r.Settle(time.Minute, 10)
			r.chargedOnce(ids[0])
			res, err := r.Store.ReservationGet(ctx, ids[0])
			if err != nil || res.Status != store.ReservationConsumed {
				t.Fatalf("reservation %+v %v, want CONSUMED", res, err)
			}
		})
	}
}

// The billing provider commits the charge but its answer is lost: FEE_UNKNOWN. The
// action does not run; the reservation stays HELD while lookups fail too; reconciliation
// looks the same orderId up, finds it SUCCEEDED, and the next claim runs the action once.
func TestFeeUnknownIsReconciledByTheSameOrder(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, nil)
	r.billing.Inject(billingsim.Fault{Kind: billingsim.LostAnswer, Op: billingsim.OpCreate},
		billingsim.Fault{Kind: billingsim.Fail, Op: billingsim.OpGet, Times: 3})
	ids := r.start(1)
	r.runAll(ids, 1)
	c := r.Command(ids[0])
	if c.Status != store.CommandQueued || r.action.Stats().Applied != 0 {
		t.Fatalf("command %s, applied %d: the action must not run while its fee is unknown", c.Status, r.action.Stats().Applied)
	}
	res, _ := r.Store.ReservationGet(ctx, ids[0])
	tr, _ := r.Store.FeeTransferGet(ctx, res.OrderID)
	if res.Status != store.ReservationHeld || tr.Status != store.FeeUnknown {
		t.Fatalf("reservation %s transfer %s, want HELD and UNKNOWN", res.Status, tr.Status)
	}
	unknown, err := r.budget.UnknownFees(ctx, "bu-1", 0, 10)
	if err != nil || len(unknown) != 1 {
		t.Fatalf("UNKNOWN fee queue %v %v", unknown, err)
	}
	r.Settle(time.Minute, 15)
	c = r.Command(ids[0])
	res, _ = r.Store.ReservationGet(ctx, ids[0])
	if c.Status != store.CommandSucceeded || res.Status != store.ReservationConsumed || res.OrderID != tr.OrderID {
		t.Fatalf("command %s reservation %+v, want SUCCEEDED, CONSUMED under order %s", c.Status, res, tr.OrderID)
	}
	if len(r.billing.Ledger()) != 1 || r.ledgerCheck() != 10 || r.action.Stats().Applied != 1 {
		t.Fatalf("ledger %+v applied %d", r.billing.Ledger(), r.action.Stats().Applied)
	}
}

// failingProvider refuses every action permanently.
type failingProvider struct{}

func (failingProvider) Traits() campaign.Traits { return campaign.Traits{} }
func (failingProvider) Serves(string) bool      { return true }
func (failingProvider) Call(context.Context, campaign.Call) (campaign.Result, error) {
	return campaign.Result{}, automation.Permanent(errors.New("subscriber unknown"))
}

// A fee confirmed for an action that then fails is kept: the command is FAILED, the
// reservation CONSUMED and cost holds the fee.
func TestFeeKeptWhenTheActionFails(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, failingProvider{})
	ids := r.start(1)
	r.runAll(ids, 1)
	if c := r.Command(ids[0]); c.Status != store.CommandFailed {
		t.Fatalf("command %s", c.Status)
	}
	res, _ := r.Store.ReservationGet(ctx, ids[0])
	if res.Status != store.ReservationConsumed || res.ActionStatus != string(budget.ActionFailed) {
		t.Fatalf("reservation %+v, want CONSUMED with action FAILED", res)
	}
	if b := r.budgetRow(); b.Cost != 10 || r.ledgerCheck() != 10 {
		t.Fatalf("budget %+v", b)
	}
}

// Without a billing provider (the default NoBilling) a priced command fails before anything
// is held; a free one still runs.
func TestNoBillingRefusesPricedCommandsOnly(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, nil)
	r.budget.Billing = budget.NoBilling{}
	ids := r.start(1)
	r.runAll(ids, 1)
	c := r.Command(ids[0])
	if c.Status != store.CommandFailed || r.action.Stats().Applied != 0 {
		t.Fatalf("command %s %q, want FAILED without running", c.Status, c.LastError)
	}
	if _, err := r.Store.ReservationGet(ctx, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a reservation was made: %v", err)
	}
	if b := r.budgetRow(); b.ReservedCost != 0 || b.Cost != 0 {
		t.Fatalf("budget %+v", b)
	}
	if !r.Catalog.Known("ADD_UPOINT") || r.Catalog.Known("ADD_POINTS") {
		t.Fatal("the catalog's canonical names are the seed's")
	}
}

// The fee projection, fed the fee facts of a run twice over in a shuffled order (a replay
// with duplicates and reordering), equals the billing ledger and the budget's cost.
func TestFeeProjectionEqualsLedgerAfterReplay(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 300, nil) // 30 of 40 fit
	r.billing.Inject(billingsim.Fault{Kind: billingsim.LostAnswer, Op: billingsim.OpCreate, Times: 3})
	ids := r.start(40)
	r.runAll(ids, 4)
	r.Settle(time.Minute, 10)
	r.drain(nil)
	if len(r.fees) == 0 {
		t.Fatal("no fee facts")
	}
	facts := append(append([][]byte{}, r.fees...), r.fees...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(facts), func(i, j int) { facts[i], facts[j] = facts[j], facts[i] })
	p := &budget.FeeProjector{Store: r.Store, Clock: r.Clock}
	for i, body := range facts {
		if err := p.Handle(ctx, busMessage(i, body)); err != nil {
			t.Fatal(err)
		}
	}
	ledger := r.ledgerCheck()
	rec, err := r.Store.FeeReconcile(ctx, "bu-1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if ledger != 300 || rec.ProjectedCost != ledger || rec.TransferCost != ledger || rec.BudgetCost != ledger || rec.Projected != 30 {
		t.Fatalf("ledger %d, reconciliation %+v: want all 300 over 30 fees", ledger, rec)
	}
	days, err := r.Store.FeeCostByDay(ctx, "bu-1", "c1", "2026-10-01", "2026-10-31")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, d := range days {
		sum += d.Cost
	}
	if sum != ledger {
		t.Fatalf("cost by day %+v sums to %d, want %d", days, sum, ledger)
	}
}

// A stop that arrives while the billing call runs (the charge is confirmed) keeps the action
// from the provider: the command is CANCELLED, the provider never sees it, and seed 002's
// fee rule holds: the confirmed fee stays charged (cost 10, the reservation CONSUMED with
// the action ABANDONED), nothing is charged twice.
func TestStopDuringTheChargeCancelsTheActionAndKeepsTheFee(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 1000, nil)
	admin := &campaign.Admin{Store: r.Store, Catalog: r.Catalog, Clock: r.Clock}
	stops := 0
	r.budget.Hooks = &budget.Hooks{AfterCharge: func(context.Context, string, error) error {
		cur, err := r.Store.CampaignGet(ctx, "bu-1", "c1")
		if err != nil {
			return err
		}
		var def campaign.Definition
		if err := json.Unmarshal([]byte(cur.DefinitionJSON), &def); err != nil {
			return err
		}
		def.Status = store.CampaignStopped
		v := cur.Version
		if _, err := admin.Save(ctx, "bu-1", "c1", def, &v); err != nil {
			return err
		}
		stops++
		return nil
	}}
	ids := r.start(1)
	r.runAll(ids, 1)
	if stops != 1 {
		t.Fatalf("the stop was injected %d times, want once during the charge", stops)
	}
	c := r.Command(ids[0])
	if c.Status != store.CommandCancelled {
		t.Fatalf("command %s (%s), want CANCELLED", c.Status, c.LastError)
	}
	if n := r.action.Applied(c.EffectKey); n != 0 || r.action.Stats().Applied != 0 {
		t.Fatalf("the provider applied the action %d times after the stop", n)
	}
	if len(r.billing.Ledger()) != 1 || r.ledgerCheck() != 10 {
		t.Fatalf("ledger %+v, want the one confirmed fee of 10", r.billing.Ledger())
	}
	res, err := r.Store.ReservationGet(ctx, ids[0])
	if err != nil || res.Status != store.ReservationConsumed || res.ActionStatus != string(budget.ActionAbandoned) {
		t.Fatalf("reservation %+v %v, want CONSUMED with the action ABANDONED", res, err)
	}
	if b := r.budgetRow(); b.Cost != 10 || b.ReservedCost != 0 {
		t.Fatalf("budget %+v, want cost 10 (the fee kept), nothing reserved", b)
	}
	// Later sweeps change nothing: no second charge, no call.
	r.Clock.Advance(time.Hour)
	r.Settle(time.Minute, 5)
	if c := r.Command(ids[0]); c.Status != store.CommandCancelled || len(r.billing.Ledger()) != 1 || r.action.Stats().Applied != 0 {
		t.Fatalf("after sweeps: %s, ledger %d, applied %d", c.Status, len(r.billing.Ledger()), r.action.Stats().Applied)
	}
}
