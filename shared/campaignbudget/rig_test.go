package campaignbudget_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/campaignbudget"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlite"
)

var t0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// rig is the real campaign worker with the budget in its seams: a SQLite store, a manual
// clock, the simulated action provider "sim" (dedupes, answers lookups) and the simulated
// billing server, both over real HTTP. ADD_UPOINT costs a fixed 10 USD cents in bu-1;
// campaign c1 runs one ADD_UPOINT action per SignedUp event.
type rig struct {
	t          testing.TB
	st         store.Store
	clock      *automation.ManualClock
	providers  *campaign.Providers
	catalog    *campaign.Catalog
	dispatcher *campaign.Dispatcher
	worker     *campaign.Worker
	budget     *budget.Service
	guard      *campaignbudget.Guard
	action     *providersim.Server
	billing    *billingsim.Server
	fees       [][]byte // fee fact bodies seen by pump
}

func newRig(t testing.TB, maxCost int64, provider campaign.Provider) *rig {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r := &rig{t: t, st: st, clock: automation.NewManualClock(t0)}
	r.action = providersim.New(providersim.Config{Dedupe: true, Lookup: true})
	if err := r.action.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.action.Close() })
	r.providers = campaign.NewProviders(r.clock)
	if provider == nil {
		provider = &campaign.HTTPProvider{BaseURL: r.action.URL(), Client: &http.Client{Transport: &http.Transport{}}, Dedupe: true, HasLookup: true,
			ActionTypes: []string{"ADD_UPOINT", "TOP_UP"}}
	}
	r.providers.Add("sim", provider, campaign.ProviderConfig{Concurrency: 16, Timeout: 5 * time.Second})
	if r.catalog, err = campaign.NewCatalog(campaign.BuiltinActionTypes(), r.providers); err != nil {
		t.Fatal(err)
	}
	r.billing = billingsim.New(r.clock)
	srv := httptest.NewServer(r.billing)
	t.Cleanup(srv.Close)
	r.billing.SetBalance("bu-1", "USD", 1_000_000)
	r.budget = &budget.Service{Store: st, Billing: &billing.Client{BaseURL: srv.URL, Timeout: 5 * time.Second}, Clock: r.clock,
		KnownActionType: r.catalog.Known, InDoubtAfter: time.Minute}
	r.guard = &campaignbudget.Guard{Budget: r.budget, Campaigns: st, Clock: r.clock}
	r.dispatcher = &campaign.Dispatcher{Store: st, Clock: r.clock}
	r.worker = &campaign.Worker{Store: st, Clock: r.clock, Providers: r.providers, Lease: time.Minute, PauseRecheck: time.Minute,
		Guard: r.guard, AfterResult: r.guard.AfterResult}
	if _, err := r.budget.PutPolicy(ctx, "bu-1", "ADD_UPOINT", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "POINT", TransferType: "POINT_FEE", Currency: "USD"}, 0, "ops"); err != nil {
		t.Fatal(err)
	}
	admin := &campaign.Admin{Store: st, Catalog: r.catalog, Clock: r.clock}
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

func event(id string) []byte {
	return fmt.Appendf(nil, `{"specversion":"1.0","id":%q,"source":"/app","type":"SignedUp","businessunitid":"bu-1","customerid":"cust-%s","data":{}}`, id, id)
}

// start dispatches n events and returns the command ids their executions queued (the
// command messages are taken off the outbox, as the relay would deliver them).
func (r *rig) start(n int) []string {
	r.t.Helper()
	ctx := context.Background()
	for i := range n {
		if _, err := r.dispatcher.HandleEvent(ctx, event(fmt.Sprintf("e%03d", i))); err != nil {
			r.t.Fatal(err)
		}
	}
	var ids []string
	r.drain(func(m store.OutboxMessage) {
		if m.Destination == topology.CampaignCommandsQueue {
			var c campaign.CommandMessage
			if err := json.Unmarshal(m.Body, &c); err != nil {
				r.t.Fatal(err)
			}
			ids = append(ids, c.CommandID)
		}
	})
	return ids
}

// drain marks every unpublished outbox message published, handing each to fn first; fee
// facts are kept in r.fees.
func (r *rig) drain(fn func(store.OutboxMessage)) {
	r.t.Helper()
	ctx := context.Background()
	for {
		msgs, err := r.st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
		if err != nil {
			r.t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		var ids []int64
		for _, m := range msgs {
			if m.Destination == topology.CampaignFeeFactsTopic {
				r.fees = append(r.fees, m.Body)
			}
			if fn != nil {
				fn(m)
			}
			ids = append(ids, m.ID)
		}
		if err := r.st.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: ids, Now: r.clock.Now()}); err != nil {
			r.t.Fatal(err)
		}
	}
}

// settle sweeps (with reconciliation, as the OutboxRelay timer does), moving the clock by
// step when nothing was due, for rounds rounds.
func (r *rig) settle(step time.Duration, rounds int) {
	r.t.Helper()
	ctx := context.Background()
	for range rounds {
		r.drain(nil)
		if _, err := r.budget.Reconcile(ctx, 50); err != nil {
			r.t.Fatal(err)
		}
		n, err := r.worker.Sweep(ctx, 100)
		if err != nil {
			r.t.Fatal(err)
		}
		if n == 0 {
			r.clock.Advance(step)
		}
	}
	r.drain(nil)
}

func (r *rig) command(id string) store.CampaignCommand {
	r.t.Helper()
	c, err := r.st.CampaignCommandGet(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

func (r *rig) byStatus(ids []string) map[store.CommandStatus]int {
	out := map[store.CommandStatus]int{}
	for _, id := range ids {
		out[r.command(id).Status]++
	}
	return out
}

func (r *rig) budgetRow() store.CampaignBudget {
	r.t.Helper()
	b, err := r.st.BudgetGet(context.Background(), "bu-1", "c1")
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *rig) campaignStatus() store.CampaignStatus {
	r.t.Helper()
	c, err := r.st.CampaignGet(context.Background(), "bu-1", "c1")
	if err != nil {
		r.t.Fatal(err)
	}
	return c.Status
}

// ledgerCheck fails unless the billing ledger holds each orderId once, every order is a
// recorded transfer, and each command was charged (SUCCEEDED) at most once; it returns the
// SUCCEEDED total.
func (r *rig) ledgerCheck() int64 {
	r.t.Helper()
	seen, charged := map[string]bool{}, map[string]int{}
	var total int64
	for _, l := range r.billing.Ledger() {
		if seen[l.OrderID] {
			r.t.Fatalf("the ledger holds order %s twice", l.OrderID)
		}
		seen[l.OrderID] = true
		tr, err := r.st.FeeTransferGet(context.Background(), l.OrderID)
		if err != nil {
			r.t.Fatalf("ledger order %s has no transfer record: %v", l.OrderID, err)
		}
		if l.Status == billing.StatusSucceeded {
			charged[tr.CommandID]++
			total += int64(l.Amount)
			if charged[tr.CommandID] > 1 {
				r.t.Fatalf("command %s charged twice", tr.CommandID)
			}
		}
	}
	return total
}

// runAll runs ids on workers goroutines, each command once through Worker.Run.
func (r *rig) runAll(ids []string, workers int) {
	r.t.Helper()
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
				if err := r.worker.Run(context.Background(), id); err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		r.t.Error(err)
	}
}

var errCrash = errors.New("crash")

func busMessage(i int, body []byte) bus.Message {
	return bus.Message{ID: fmt.Sprintf("fee-%d", i), Destination: topology.CampaignFeeFactsTopic, Body: body}
}
