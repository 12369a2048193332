package campaignbudget_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/campaigntest"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/campaignbudget"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// rig is the real campaign worker (campaigntest.Rig) with the budget in its seams: a SQLite
// store, a manual clock, the simulated action provider "sim" (dedupes, answers lookups) and
// the simulated billing server, both over real HTTP. ADD_UPOINT costs a fixed 10 USD cents in
// bu-1; campaign c1 runs one ADD_UPOINT action per SignedUp event. Settle reconciles before
// each sweep, as the OutboxRelay timer does.
type rig struct {
	*campaigntest.Rig
	budget  *budget.Service
	guard   *campaignbudget.Guard
	action  *providersim.Server
	billing *billingsim.Server
	fees    [][]byte // fee fact bodies seen by drain
}

func newRig(t testing.TB, maxCost int64, provider campaign.Provider) *rig {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	simCfg := providersim.Config{Dedupe: true, Lookup: true}
	r := &rig{action: campaigntest.StartSim(t, simCfg)}
	if provider == nil {
		provider = campaigntest.HTTPProvider(r.action, simCfg, "ADD_UPOINT", "TOP_UP")
	}
	r.Rig = campaigntest.New(t, st, t0, func(cr *campaigntest.Rig) {
		cr.Providers.Add("sim", provider, campaign.ProviderConfig{Concurrency: 16, Timeout: 5 * time.Second})
	})
	r.billing = billingsim.New(r.Clock)
	srv := httptest.NewServer(r.billing)
	t.Cleanup(srv.Close)
	r.billing.SetBalance("bu-1", "USD", 1_000_000)
	r.budget = &budget.Service{Store: st, Billing: &billing.Client{BaseURL: srv.URL, Timeout: 5 * time.Second}, Clock: r.Clock,
		KnownActionType: r.Catalog.Known, InDoubtAfter: time.Minute}
	r.guard = &campaignbudget.Guard{Budget: r.budget, Campaigns: st, Clock: r.Clock}
	r.Worker.PauseRecheck, r.Worker.Guard, r.Worker.AfterResult = time.Minute, r.guard, r.guard.AfterResult
	r.Flush = func() { r.drain(nil) }
	r.BeforeSweep = func(ctx context.Context) error { _, err := r.budget.Reconcile(ctx, 50); return err }
	if _, err := r.budget.PutPolicy(ctx, "bu-1", "ADD_UPOINT", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "POINT", TransferType: "POINT_FEE", Currency: "USD"}, 0, "ops"); err != nil {
		t.Fatal(err)
	}
	admin := &campaign.Admin{Store: st, Catalog: r.Catalog, Clock: r.Clock}
	// The catalog's older name ADD_POINTS is stored under the canonical ADD_UPOINT.
	if _, err := admin.Save(ctx, "bu-1", "c1", campaign.Definition{Name: "Points", Status: store.CampaignActive, Triggers: []string{"SignedUp"},
		Actions: []campaign.Action{{Key: "points", Type: "ADD_POINTS", Provider: "sim", Params: json.RawMessage(`{"points":5}`)}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.budget.CreateBudget(ctx, "bu-1", "c1", budget.BudgetInput{Currency: "USD", MaxCost: money.Minor(maxCost)}, "ops"); err != nil {
		t.Fatal(err)
	}
	return r
}

// event is the SignedUp event id of customer cust-<id> in bu-1.
func event(id string) []byte { return campaigntest.SignedUp(id, "cust-"+id) }

// start dispatches n events and returns the command ids their executions queued (the
// command messages are taken off the outbox, as the relay would deliver them).
func (r *rig) start(n int) []string {
	r.T.Helper()
	ctx := context.Background()
	for i := range n {
		if _, err := r.Dispatcher.HandleEvent(ctx, event(fmt.Sprintf("e%03d", i))); err != nil {
			r.T.Fatal(err)
		}
	}
	var ids []string
	r.drain(func(m store.OutboxMessage) {
		if m.Destination == topology.CampaignCommandsQueue {
			var c campaign.CommandMessage
			if err := json.Unmarshal(m.Body, &c); err != nil {
				r.T.Fatal(err)
			}
			ids = append(ids, c.CommandID)
		}
	})
	return ids
}

// drain publishes the outbox (Rig.Drain), handing each message to fn (when not nil) and
// keeping the fee facts in r.fees.
func (r *rig) drain(fn func(store.OutboxMessage)) {
	r.T.Helper()
	r.Drain(func(m store.OutboxMessage) {
		if m.Destination == topology.CampaignFeeFactsTopic {
			r.fees = append(r.fees, m.Body)
		}
		if fn != nil {
			fn(m)
		}
	})
}

func (r *rig) byStatus(ids []string) map[store.CommandStatus]int {
	out := map[store.CommandStatus]int{}
	for _, id := range ids {
		out[r.Command(id).Status]++
	}
	return out
}

func (r *rig) budgetRow() store.CampaignBudget {
	r.T.Helper()
	b, err := r.Store.BudgetGet(context.Background(), "bu-1", "c1")
	if err != nil {
		r.T.Fatal(err)
	}
	return b
}

func (r *rig) campaignStatus() store.CampaignStatus {
	r.T.Helper()
	c, err := r.Store.CampaignGet(context.Background(), "bu-1", "c1")
	if err != nil {
		r.T.Fatal(err)
	}
	return c.Status
}

// ledgerCheck fails unless the billing ledger holds each orderId once, every order is a
// recorded transfer, and each command was charged (SUCCEEDED) at most once; it returns the
// SUCCEEDED total.
func (r *rig) ledgerCheck() int64 {
	r.T.Helper()
	seen, charged := map[string]bool{}, map[string]int{}
	var total int64
	for _, l := range r.billing.Ledger() {
		if seen[l.OrderID] {
			r.T.Fatalf("the ledger holds order %s twice", l.OrderID)
		}
		seen[l.OrderID] = true
		tr, err := r.Store.FeeTransferGet(context.Background(), l.OrderID)
		if err != nil {
			r.T.Fatalf("ledger order %s has no transfer record: %v", l.OrderID, err)
		}
		if l.Status == billing.StatusSucceeded {
			charged[tr.CommandID]++
			total += int64(l.Amount)
			if charged[tr.CommandID] > 1 {
				r.T.Fatalf("command %s charged twice", tr.CommandID)
			}
		}
	}
	return total
}

// runAll runs ids on workers goroutines, each command once through Worker.Run.
func (r *rig) runAll(ids []string, workers int) {
	r.T.Helper()
	work := make(chan string, len(ids))
	for _, id := range ids {
		work <- id
	}
	close(work)
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for range workers {
		wg.Go(func() {
			for id := range work {
				if err := r.Worker.Run(context.Background(), id); err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		r.T.Error(err)
	}
}

// chargedOnce fails unless command id ended SUCCEEDED with its action applied once, the
// ledger holds its one fee of 10 and the budget's cost is that fee with nothing reserved.
func (r *rig) chargedOnce(id string) {
	r.T.Helper()
	c := r.Command(id)
	if c.Status != store.CommandSucceeded {
		r.T.Fatalf("command %s (%s), want SUCCEEDED", c.Status, c.LastError)
	}
	if n := r.action.Applied(c.EffectKey); n != 1 {
		r.T.Fatalf("the provider applied the action %d times", n)
	}
	if len(r.billing.Ledger()) != 1 || r.ledgerCheck() != 10 {
		r.T.Fatalf("ledger %+v, want the one confirmed fee of 10", r.billing.Ledger())
	}
	if b := r.budgetRow(); b.Cost != 10 || b.ReservedCost != 0 {
		r.T.Fatalf("budget %+v, want cost 10, nothing reserved", b)
	}
}

var errCrash = errors.New("crash")

func busMessage(i int, body []byte) bus.Message {
	return bus.Message{ID: fmt.Sprintf("fee-%d", i), Destination: topology.CampaignFeeFactsTopic, Body: body}
}

// setCampaignStatus saves campaign c1 with status, as an operator's change through the API.
func (r *rig) setCampaignStatus(status store.CampaignStatus) {
	r.T.Helper()
	ctx := context.Background()
	c, err := r.Store.CampaignGet(ctx, "bu-1", "c1")
	if err != nil {
		r.T.Fatal(err)
	}
	c.Status = status
	v := c.Version
	if _, err := r.Store.CampaignSave(ctx, store.CampaignSaveParams{Campaign: c, ExpectedVersion: &v, Now: r.Clock.Now()}); err != nil {
		r.T.Fatal(err)
	}
}

// crashAfterBatchClaim hands command id to Worker.HandleBatch and kills the process right
// after the batch's claim committed (WorkerHooks.AfterBatchClaim): the command is left
// RUNNING under its lease, and the hook stays set until the test clears it.
func (r *rig) crashAfterBatchClaim(id string) {
	r.T.Helper()
	crash := errors.New("killed after the batch claim")
	r.Worker.Hooks = &campaign.WorkerHooks{AfterBatchClaim: func(context.Context, []store.CampaignCommand) error { return crash }}
	body, _ := json.Marshal(campaign.CommandMessage{CommandID: id})
	if errs := r.Worker.HandleBatch(context.Background(), [][]byte{body}, nil); !errors.Is(errs[0], crash) {
		r.T.Fatalf("batch errs %v, want the crash", errs)
	}
}
