package budget_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/budget/budgettest"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

type env struct {
	st     *sqlstore.Store
	sim    *billingsim.Server
	client *billing.Client
	clock  *automation.ManualClock
	svc    *budget.Service
	budget store.CampaignBudget
}

// newEnv opens a real SQLite store and a simulated billing server, prices ADD_SMS at a fixed
// 10 cents and gives campaign c1 a budget of maxCost cents.
func newEnv(t *testing.T, maxCost int64) *env {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clock := automation.NewManualClock(t0)
	sim := billingsim.New(clock)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sim.SetBalance("bu-1", "USD", 1_000_000)
	e := &env{st: st, sim: sim, clock: clock, client: &billing.Client{BaseURL: srv.URL, Timeout: 5 * time.Second}}
	e.svc = e.service(e.st)
	if _, err := e.svc.PutPolicy(ctx, "bu-1", "ADD_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "SMS", TransferType: "SMS_FEE", Currency: "USD"}, 0, "ops"); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.budget, err = st.BudgetCreate(ctx, store.BudgetCreateParams{BusinessUnitID: "bu-1", CampaignID: "c1", Currency: "USD", MaxCost: maxCost, Now: t0, Operator: "ops"}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) service(s store.BudgetStore) *budget.Service {
	return &budget.Service{Store: s, Billing: e.client, Clock: e.clock, InDoubtAfter: time.Minute}
}

func cmd(n int) budget.Command {
	return budget.Command{CommandID: fmt.Sprintf("cmd-%03d", n), BusinessUnitID: "bu-1", CampaignID: "c1", ActionType: "ADD_SMS", LocalDate: "2026-10-01"}
}

func (e *env) getBudget(t *testing.T) store.CampaignBudget {
	t.Helper()
	b, err := e.st.BudgetGet(context.Background(), "bu-1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// charged returns the ledger's SUCCEEDED amount per command (orders map back to commands
// through the transfer records) and fails on an order id the store does not know.
func (e *env) charged(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	seen := map[string]bool{}
	for _, l := range e.sim.Ledger() {
		if seen[l.OrderID] {
			t.Fatalf("ledger holds order %s twice", l.OrderID)
		}
		seen[l.OrderID] = true
		tr, err := e.st.FeeTransferGet(context.Background(), l.OrderID)
		if err != nil {
			t.Fatalf("ledger order %s has no transfer record: %v", l.OrderID, err)
		}
		if l.Status == billing.StatusSucceeded {
			out[tr.CommandID] += int64(l.Amount)
		}
	}
	return out
}

func TestEightWorkersRunExactlyTheBudgetedHundred(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000) // 100 actions of 10
	work := make(chan budget.Command, 150)
	for i := range 150 {
		work <- cmd(i)
	}
	close(work)
	var mu sync.Mutex
	ran, waiting := 0, 0
	// An observer reads the budget throughout: cost + reserved never exceeds maxCost.
	stop := make(chan struct{})
	observed := make(chan int)
	go func() {
		n := 0
		defer func() { observed <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := e.st.BudgetGet(ctx, "bu-1", "c1")
			if err != nil || b.Cost+b.ReservedCost > b.MaxCost {
				t.Errorf("observed %+v %v", b, err)
				return
			}
			n++
			time.Sleep(time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				d, err := e.svc.Prepare(ctx, c)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				switch d.Kind {
				case budget.Proceed:
					ran++
				case budget.WaitingBudget:
					waiting++
					if d.Short != store.ShortBudget {
						t.Errorf("%s short of %s", c.CommandID, d.Short)
					}
				default:
					t.Errorf("%s: %+v", c.CommandID, d)
				}
				mu.Unlock()
				if d.Kind == budget.Proceed {
					if _, err := e.svc.Settle(ctx, c, budget.ActionSucceeded); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if n := <-observed; n == 0 {
		t.Error("the observer never read the budget")
	}
	b := e.getBudget(t)
	charged := e.charged(t)
	var total int64
	for _, v := range charged {
		if v != 10 {
			t.Fatalf("a command was charged %d", v)
		}
		total += v
	}
	if ran != 100 || waiting != 50 || b.Cost != 1000 || b.ReservedCost != 0 || len(charged) != 100 || total != 1000 ||
		b.Status != store.BudgetPaused || b.PausedReason != store.ShortBudget {
		t.Fatalf("ran %d waiting %d charged %d (%d) budget %+v", ran, waiting, len(charged), total, b)
	}
	if got := e.sim.BalanceOf("bu-1", "USD"); got != 1_000_000-1000 {
		t.Fatalf("billing balance %d", got)
	}
	if w, _ := e.svc.Waiting(ctx, "bu-1", 1000); len(w) != 50 {
		t.Fatalf("waiting list %d", len(w))
	}
}

// TestSameCommandOnEightWorkersChargedOnce: a lease taken over while the first owner still
// runs means two workers on one command; eight at once still charge it once.
func TestSameCommandOnEightWorkersChargedOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := e.svc.Prepare(ctx, cmd(1))
			if err != nil || d.Kind != budget.Proceed {
				t.Errorf("%+v %v", d, err)
			}
		}()
	}
	wg.Wait()
	if l := e.sim.Ledger(); len(l) != 1 || e.getBudget(t).Cost != 10 || e.getBudget(t).ReservedCost != 0 || e.sim.BalanceOf("bu-1", "USD") != 1_000_000-10 {
		t.Fatalf("ledger %+v budget %+v", l, e.getBudget(t))
	}
}

type crash struct{ at string }

// crashStore abandons the flow (panics with crash) right after the named store call succeeds.
func crashStore(st store.BudgetStore, at string) budgettest.Store {
	return budgettest.Store{BudgetStore: st, Crash: budgettest.Crash{At: at, Value: crash{at}}}
}

// crashBilling abandons the flow before or right after the named billing call reached the provider.
func crashBilling(b budget.Billing, at string) budgettest.Billing {
	return budgettest.Billing{Billing: b, Crash: budgettest.Crash{At: at, Value: crash{at}}}
}

func runUntilCrash(t *testing.T, svc *budget.Service, c budget.Command) (crashed bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	d, err := svc.Prepare(context.Background(), c)
	if err != nil || d.Kind != budget.Proceed {
		t.Fatalf("prepare without crash: %+v %v", d, err)
	}
	return false
}

func TestCrashAtEveryStepNeverChargesTwice(t *testing.T) {
	steps := []string{"after:CommandPriceFreeze", "after:GetBalance", "after:BudgetReserve", "after:FeeTransferBegin",
		"before:CreateTransfer", "after:CreateTransfer", "after:FeeTransferRecord"}
	for _, step := range steps {
		for _, recovery := range []string{"prepare", "sweep-then-prepare"} {
			t.Run(step+"/"+recovery, func(t *testing.T) {
				ctx := context.Background()
				e := newEnv(t, 100)
				crashed := e.service(crashStore(e.st, step))
				crashed.Billing = crashBilling(e.client, step)
				c := cmd(1)
				if !runUntilCrash(t, crashed, c) {
					t.Fatalf("no crash at %s", step)
				}
				// Restart from the store: a new service, later.
				e.clock.Set(t0.Add(5 * time.Minute))
				fresh := e.service(e.st)
				if recovery == "sweep-then-prepare" {
					if _, err := fresh.Reconcile(ctx, 100); err != nil {
						t.Fatal(err)
					}
				}
				d, err := fresh.Prepare(ctx, c)
				if err != nil || d.Kind != budget.Proceed || d.FeeStatus != store.FeeSucceeded {
					t.Fatalf("after restart: %+v %v", d, err)
				}
				if _, err := fresh.Settle(ctx, c, budget.ActionSucceeded); err != nil {
					t.Fatal(err)
				}
				// Again: a redelivered command is not charged again.
				if d, err := fresh.Prepare(ctx, c); err != nil || d.Kind != budget.Proceed {
					t.Fatalf("redelivery: %+v %v", d, err)
				}
				charged := e.charged(t)
				r, _ := e.st.ReservationGet(ctx, c.CommandID)
				b := e.getBudget(t)
				if len(e.sim.Ledger()) != 1 || charged[c.CommandID] != 10 || r.Status != store.ReservationConsumed || b.Cost != 10 || b.ReservedCost != 0 {
					t.Fatalf("ledger %+v reservation %+v budget %+v", e.sim.Ledger(), r, b)
				}
			})
		}
	}
}

func TestTimeoutIsUnknownAndReconciledBySameOrder(t *testing.T) {
	faults := []billingsim.Fault{
		{Kind: billingsim.TimeoutAfterCommit, Op: billingsim.OpCreate, Delay: time.Second},
		{Kind: billingsim.LostAnswer, Op: billingsim.OpCreate},
		{Kind: billingsim.Fail, Op: billingsim.OpCreate}, // nothing committed: the lookup finds nothing, the same order is sent again
		{Kind: billingsim.WrongCurrency, Op: billingsim.OpCreate},
		{Kind: billingsim.WrongOrder, Op: billingsim.OpCreate},
	}
	for _, f := range faults {
		t.Run(string(f.Kind), func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, 100)
			e.sim.Inject(f)
			c := cmd(1)
			e.client.Timeout = 300 * time.Millisecond // the client gives up while the provider holds its answer
			d, err := e.svc.Prepare(ctx, c)
			e.client.Timeout = 5 * time.Second
			if err != nil || d.Kind != budget.FeeUnknown || d.FeeStatus != store.FeeUnknown || d.Reservation.Status != store.ReservationHeld {
				t.Fatalf("prepare: %+v %v", d, err)
			}
			if b := e.getBudget(t); b.Cost != 0 || b.ReservedCost != 10 {
				t.Fatalf("budget while unknown %+v", b)
			}
			// The reservation of an UNKNOWN charge is never released by an abandoning worker.
			if s, err := e.svc.Settle(ctx, c, budget.ActionAbandoned); err != nil || !s.Held || s.Released {
				t.Fatalf("settle while unknown: %+v %v", s, err)
			}
			unknown, _ := e.svc.UnknownFees(ctx, "bu-1", 0, 10)
			if len(unknown) != 1 || unknown[0].OrderID != d.OrderID {
				t.Fatalf("unknown queue %+v", unknown)
			}
			// A lookup that fails leaves it UNKNOWN for the next sweep.
			e.sim.Inject(billingsim.Fault{Kind: billingsim.Fail, Op: billingsim.OpGet})
			if res, err := e.svc.Reconcile(ctx, 10); err != nil || res.StillUnknown != 1 {
				t.Fatalf("sweep with a failing lookup: %+v %v", res, err)
			}
			res, err := e.svc.Reconcile(ctx, 10)
			if err != nil || res.Checked != 1 || res.Succeeded != 1 {
				t.Fatalf("sweep: %+v %v", res, err)
			}
			creates := e.sim.Requests(billingsim.OpCreate)
			if d, err := e.svc.Prepare(ctx, c); err != nil || d.Kind != budget.Proceed {
				t.Fatalf("after reconciliation: %+v %v", d, err)
			}
			if e.sim.Requests(billingsim.OpCreate) != creates {
				t.Fatal("a confirmed fee was charged again")
			}
			l := e.sim.Ledger()
			if len(l) != 1 || l[0].OrderID != d.OrderID || e.getBudget(t).Cost != 10 {
				t.Fatalf("ledger %+v budget %+v", l, e.getBudget(t))
			}
		})
	}
}

func TestWaitingBudgetPausesAndCompletesAfterRaise(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 30)
	for i := range 3 {
		if d, err := e.svc.Prepare(ctx, cmd(i)); err != nil || d.Kind != budget.Proceed {
			t.Fatalf("cmd %d: %+v %v", i, d, err)
		}
	}
	d, err := e.svc.Prepare(ctx, cmd(3))
	if err != nil || d.Kind != budget.WaitingBudget || d.Short != store.ShortBudget {
		t.Fatalf("4th: %+v %v", d, err)
	}
	v, err := e.svc.GetView(ctx, "bu-1", "c1")
	if err != nil || v.Status != store.BudgetPaused || v.PausedReason != store.ShortBudget || v.Cost != 30 || v.Available != 0 {
		t.Fatalf("view %+v %v", v, err)
	}
	// Lowering below cost + reserved is refused and changes nothing.
	if _, err := e.svc.SetMaxCost(ctx, "bu-1", "c1", budget.BudgetInput{MaxCost: 29}, v.Version, "ops"); !errors.Is(err, store.ErrBudgetShort) || automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("lower: %v", err)
	}
	if _, err := e.svc.SetMaxCost(ctx, "bu-1", "c1", budget.BudgetInput{MaxCost: 50, Currency: "EUR"}, v.Version, "ops"); automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("currency mismatch: %v", err)
	}
	v, err = e.svc.SetMaxCost(ctx, "bu-1", "c1", budget.BudgetInput{MaxCost: 50, Reason: "more"}, v.Version, "ops")
	if err != nil || v.Status != store.BudgetActive || v.MaxCost != 50 {
		t.Fatalf("raise: %+v %v", v, err)
	}
	for _, n := range []int{3, 4} { // the same waiting command again, then the rest
		if d, err := e.svc.Prepare(ctx, cmd(n)); err != nil || d.Kind != budget.Proceed {
			t.Fatalf("after raise cmd %d: %+v %v", n, d, err)
		}
	}
	if w, _ := e.svc.Waiting(ctx, "bu-1", 10); len(w) != 0 {
		t.Fatalf("still waiting %+v", w)
	}
	if b := e.getBudget(t); b.Cost != 50 || b.ReservedCost != 0 {
		t.Fatalf("budget %+v", b)
	}
}

func TestBalanceShortWaitsAndDeclinedChargeReleases(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	e.sim.SetBalance("bu-1", "USD", 15)
	if d, err := e.svc.Prepare(ctx, cmd(1)); err != nil || d.Kind != budget.Proceed {
		t.Fatalf("first %+v %v", d, err)
	}
	d, err := e.svc.Prepare(ctx, cmd(2)) // 5 left < 10
	if err != nil || d.Kind != budget.WaitingBudget || d.Short != store.ShortBalance {
		t.Fatalf("second %+v %v", d, err)
	}
	if _, err := e.st.ReservationGet(ctx, "cmd-002"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a short balance held budget: %v", err)
	}
	b := e.getBudget(t)
	if b.Status != store.BudgetPaused || b.PausedReason != store.ShortBalance || b.ReservedCost != 0 {
		t.Fatalf("budget %+v", b)
	}
	// The balance read was fine but the provider declines the charge: FAILED, released, waiting.
	e.sim.SetBalance("bu-1", "USD", 100)
	e.sim.Inject(billingsim.Fault{Kind: billingsim.OutOfBalance, Op: billingsim.OpCreate})
	d, err = e.svc.Prepare(ctx, cmd(2))
	if err != nil || d.Kind != budget.WaitingBudget || d.Short != store.ShortBalance || d.Reservation.Status != store.ReservationReleased || d.FeeStatus != store.FeeFailed {
		t.Fatalf("declined %+v %v", d, err)
	}
	if b := e.getBudget(t); b.ReservedCost != 0 || b.Cost != 10 {
		t.Fatalf("after decline %+v", b)
	}
	if _, err := e.svc.Resume(ctx, "bu-1", "c1", e.getBudget(t).Version, "ops", "topped up"); err != nil {
		t.Fatal(err)
	}
	d, err = e.svc.Prepare(ctx, cmd(2))
	if err != nil || d.Kind != budget.Proceed || d.Reservation.Attempt != 2 || d.OrderID != budget.OrderID("cmd-002", 2) {
		t.Fatalf("after top-up %+v %v", d, err)
	}
	if c := e.charged(t); c["cmd-002"] != 10 || len(e.sim.Ledger()) != 3 {
		t.Fatalf("charged %+v ledger %+v", c, e.sim.Ledger())
	}
}

func TestFeeKeptWhenActionFailsAndReleaseRules(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	if d, _ := e.svc.Prepare(ctx, cmd(1)); d.Kind != budget.Proceed {
		t.Fatal(d)
	}
	s, err := e.svc.Settle(ctx, cmd(1), budget.ActionFailed)
	if err != nil || !s.FeeKept || s.Released || s.Reservation.ActionStatus != "FAILED" {
		t.Fatalf("settle failed action %+v %v", s, err)
	}
	// Reserved, no charge sent (the worker crashed after reserving), then abandoned: released.
	crashed := e.service(crashStore(e.st, "after:BudgetReserve"))
	if !runUntilCrash(t, crashed, cmd(2)) {
		t.Fatal("no crash")
	}
	s, err = e.svc.Settle(ctx, cmd(2), budget.ActionAbandoned)
	if err != nil || !s.Released || s.Reservation.Status != store.ReservationReleased {
		t.Fatalf("abandon uncharged %+v %v", s, err)
	}
	if b := e.getBudget(t); b.Cost != 10 || b.ReservedCost != 0 {
		t.Fatalf("budget %+v", b)
	}
	if s, err := e.svc.Settle(ctx, cmd(99), budget.ActionSucceeded); err != nil || s != (budget.Settlement{}) {
		t.Fatalf("free command %+v %v", s, err)
	}
	if _, err := e.svc.Settle(ctx, cmd(1), "MAYBE"); automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("bad outcome: %v", err)
	}
}

func TestPriceFrozenOnFirstClaim(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	e.sim.Inject(billingsim.Fault{Kind: billingsim.Fail, Op: billingsim.OpCreate})
	d, err := e.svc.Prepare(ctx, cmd(1))
	if err != nil || d.Kind != budget.FeeUnknown || d.Price.Amount != 10 {
		t.Fatalf("first %+v %v", d, err)
	}
	pol, _ := e.st.PricePolicyGet(ctx, "bu-1", "ADD_SMS")
	if _, err := e.svc.PutPolicy(ctx, "bu-1", "ADD_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "25", Unit: "SMS", TransferType: "SMS_FEE", Currency: "USD"}, pol.Version, "ops"); err != nil {
		t.Fatal(err)
	}
	d, err = e.svc.Prepare(ctx, cmd(1)) // the retry: the same price, the same order
	if err != nil || d.Kind != budget.Proceed || d.Price.Amount != 10 || d.Price.PolicyVersion != 1 {
		t.Fatalf("retry %+v %v", d, err)
	}
	if d, err := e.svc.Prepare(ctx, cmd(2)); err != nil || d.Price.Amount != 25 || d.Price.PolicyVersion != 2 {
		t.Fatalf("new command %+v %v", d, err)
	}
	if b := e.getBudget(t); b.Cost != 35 {
		t.Fatalf("budget %+v", b)
	}
	// Free and unpriced actions.
	free := cmd(3)
	free.ActionType = "NOTIFICATION_LOG"
	if d, err := e.svc.Prepare(ctx, free); err != nil || d.Kind != budget.Proceed || d.Price.Priced {
		t.Fatalf("free %+v %v", d, err)
	}
	unpriced := cmd(4)
	unpriced.ActionType = "TOP_UP"
	if _, err := e.svc.Prepare(ctx, unpriced); !errors.Is(err, budget.ErrNoPricePolicy) {
		t.Fatalf("priced type without policy: %v", err)
	}
	other := cmd(5)
	other.CampaignID = "no-budget"
	if _, err := e.svc.Prepare(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("campaign without budget: %v", err)
	}
	eur := cmd(6)
	eur.ActionType = "ADD_DATA"
	if _, err := e.svc.PutPolicy(ctx, "bu-1", "ADD_DATA", budget.PolicyInput{Formula: "PER_UNIT", Rate: "1", Unit: "MB", TransferType: "DATA_FEE", Currency: "EUR"}, 0, "ops"); err != nil {
		t.Fatal(err)
	}
	e.sim.SetBalance("bu-1", "EUR", 1000)
	if _, err := e.svc.Prepare(ctx, eur); !errors.Is(err, store.ErrCurrencyMismatch) {
		t.Fatalf("EUR price on a USD budget: %v", err)
	}
}

func TestSupportResolvesUnknownFee(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	e.sim.Inject(billingsim.Fault{Kind: billingsim.TimeoutAfterCommit, Op: billingsim.OpCreate, Delay: time.Second})
	e.client.Timeout = 300 * time.Millisecond
	d, _ := e.svc.Prepare(ctx, cmd(1))
	e.client.Timeout = 5 * time.Second
	tr, _ := e.st.FeeTransferGet(ctx, d.OrderID)
	bad := []budget.ResolveRequest{
		{BusinessUnitID: "bu-1", OrderID: d.OrderID, Status: "MAYBE", Operator: "jane", Reason: "x"},
		{BusinessUnitID: "bu-1", OrderID: d.OrderID, Status: store.FeeSucceeded, Operator: "jane"},
		{BusinessUnitID: "bu-2", OrderID: d.OrderID, Status: store.FeeSucceeded, Operator: "jane", Reason: "x"},
		{BusinessUnitID: "bu-1", OrderID: d.OrderID, Status: store.FeeSucceeded, Operator: "jane", Reason: "x", ExpectedRevision: tr.Revision + 1},
	}
	for i, r := range bad {
		if _, err := e.svc.ResolveFee(ctx, r); err == nil {
			t.Fatalf("bad resolution %d accepted", i)
		}
	}
	if b := e.getBudget(t); b.Cost != 0 || b.ReservedCost != 10 {
		t.Fatalf("refused resolutions changed the budget %+v", b)
	}
	got, err := e.svc.ResolveFee(ctx, budget.ResolveRequest{BusinessUnitID: "bu-1", OrderID: d.OrderID, Status: store.FeeSucceeded,
		ExpectedRevision: tr.Revision, Operator: "jane", Reason: "provider portal shows the transfer"})
	if err != nil || got.Status != store.FeeSucceeded || got.ResolvedBy != "jane" || !got.CostAdded {
		t.Fatalf("resolve %+v %v", got, err)
	}
	if _, err := e.svc.ResolveFee(ctx, budget.ResolveRequest{BusinessUnitID: "bu-1", OrderID: d.OrderID, Status: store.FeeFailed, Operator: "jane", Reason: "x"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second resolution: %v", err)
	}
	audit, _ := e.st.BudgetAuditList(ctx, "bu-1", "c1", 10)
	if len(audit) == 0 || audit[0].Action != "RESOLVE_FEE" || audit[0].Operator != "jane" {
		t.Fatalf("audit %+v", audit)
	}
	if d, err := e.svc.Prepare(ctx, cmd(1)); err != nil || d.Kind != budget.Proceed || len(e.sim.Ledger()) != 1 {
		t.Fatalf("after resolution %+v %v", d, err)
	}
}

// TestFeeProjectionEqualsLedgerUnderReplay runs a mixed campaign, relays its fee facts to
// the projector three times (once newest first) and compares the projection with the
// simulated ledger and the transfer records.
func TestFeeProjectionEqualsLedgerUnderReplay(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 10_000)
	e.sim.Inject(billingsim.Fault{Kind: billingsim.LostAnswer, Op: billingsim.OpCreate}) // cmd 0: UNKNOWN, reconciled
	for i := range 12 {
		c := cmd(i)
		if i == 5 {
			e.sim.Inject(billingsim.Fault{Kind: billingsim.OutOfBalance, Op: billingsim.OpCreate}) // cmd 5: declined
		}
		if i >= 6 {
			c.LocalDate = "2026-10-02"
		}
		if _, err := e.svc.Prepare(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.Reconcile(ctx, 100); err != nil {
		t.Fatal(err)
	}
	msgs, err := e.st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: store.MaxBatch})
	if err != nil {
		t.Fatal(err)
	}
	p := &budget.FeeProjector{Store: e.st, Clock: e.clock}
	deliver := func(m store.OutboxMessage) {
		if m.Destination != store.FeeFactsTopic {
			return
		}
		if err := p.Handle(ctx, bus.Message{ID: m.MessageID, Destination: m.Destination, Body: m.Body}); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		deliver(msgs[i])
	}
	for range 2 {
		for _, m := range msgs {
			deliver(m)
		}
	}
	days, err := e.st.FeeCostByDay(ctx, "bu-1", "c1", "2026-10-01", "2026-10-31")
	if err != nil {
		t.Fatal(err)
	}
	var projected int64
	for _, d := range days {
		projected += d.Cost
	}
	var ledger int64
	for _, v := range e.charged(t) {
		ledger += v
	}
	// cmd 5 was declined, then its next Prepare would re-check: here it simply stays released.
	if ledger != 110 || projected != ledger || len(days) != 2 || days[0].Cost != 50 || days[1].Cost != 60 {
		t.Fatalf("ledger %d projected %d days %+v", ledger, projected, days)
	}
	rec, err := e.svc.Reconcile3(ctx, "bu-1", "c1")
	if err != nil || len(rec.Differences) != 0 || rec.BudgetCost != money.Minor(ledger) {
		t.Fatalf("reconciliation %+v %v", rec, err)
	}
	if err := p.Handle(ctx, bus.Message{ID: "x", Body: []byte(`{"eventId":"x"}`)}); !strings.Contains(fmt.Sprint(err), "fee fact") || automation.IntentOf(err) != automation.IntentPermanent {
		t.Fatalf("malformed fact: %v", err)
	}
}

// TestFeeNotInDoubtUntilInDoubtAfter: a PENDING fee (its charger stopped after the call, the
// answer not recorded) is neither listed for a person nor resolvable until it has been
// untouched for InDoubtAfter (409, CodeConflict, nothing changed); then it is both. The
// resolution needs its revision: 0 is never "unguarded" (ErrLeaseLost).
func TestFeeNotInDoubtUntilInDoubtAfter(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	svc := e.svc
	svc.Hooks = &budget.Hooks{AfterCharge: func(context.Context, string, error) error { return errors.New("crash after the call") }}
	if _, err := svc.Prepare(ctx, cmd(1)); err == nil {
		t.Fatal("the crash hook did not stop Prepare")
	}
	svc.Hooks = nil
	list, err := e.st.FeeTransferList(ctx, store.FeeTransferListParams{BusinessUnitID: "bu-1", Statuses: []string{store.FeePending}, Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending %+v %v", list, err)
	}
	fee := list[0]
	req := budget.ResolveRequest{BusinessUnitID: "bu-1", OrderID: fee.OrderID, Status: store.FeeFailed, ExpectedRevision: fee.Revision, Operator: "jane", Reason: "no charge seen"}
	if q, err := svc.UnknownFees(ctx, "bu-1", 0, 10); err != nil || len(q) != 0 {
		t.Fatalf("a fresh PENDING fee is queued: %+v %v", q, err)
	}
	if _, err := svc.ResolveFee(ctx, req); automation.CodeOf(err) != automation.CodeConflict || !strings.Contains(err.Error(), "PENDING") {
		t.Fatalf("resolve of a fresh PENDING fee: %v", err)
	}
	e.clock.Advance(time.Minute)
	if q, err := svc.UnknownFees(ctx, "bu-1", 0, 10); err != nil || len(q) != 1 || q[0].OrderID != fee.OrderID {
		t.Fatalf("the stalled fee is not queued: %+v %v", q, err)
	}
	zero := req
	zero.ExpectedRevision = 0
	if _, err := svc.ResolveFee(ctx, zero); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("revision 0: %v", err)
	}
	if got, _ := e.st.FeeTransferGet(ctx, fee.OrderID); got.Status != store.FeePending || got.Revision != fee.Revision {
		t.Fatalf("refused resolutions changed the fee %+v", got)
	}
	if got, err := svc.ResolveFee(ctx, req); err != nil || got.Status != store.FeeFailed {
		t.Fatalf("resolve of the stalled fee: %+v %v", got, err)
	}
}

// raceFreezeStore plays a concurrent first claim: the command has no price when FreezePrice
// looks (CommandPriceGet: not found), but another worker freezes its own price between that
// look and this worker's CommandPriceFreeze.
type raceFreezeStore struct {
	store.BudgetStore
	winner store.CommandPrice
	once   sync.Once
}

func (r *raceFreezeStore) CommandPriceFreeze(ctx context.Context, p store.CommandPrice) (store.CommandPrice, error) {
	r.once.Do(func() {
		if _, err := r.BudgetStore.CommandPriceFreeze(ctx, r.winner); err != nil {
			panic(err)
		}
	})
	return r.BudgetStore.CommandPriceFreeze(ctx, p)
}

// TestFreezePriceLoserTakesTheStoredPrice: on a concurrent first claim the loser of the
// first-writer-wins freeze uses the winner's stored price, never the one it computed from
// the policy it read (docs/budgets.md#price-policy: a retry never re-prices).
func TestFreezePriceLoserTakesTheStoredPrice(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	c := cmd(1)
	won := budget.FrozenPrice{ActionType: "ADD_SMS", Priced: true, Amount: 7, Currency: "USD", Formula: "FIXED", Rate: "7", Unit: "SMS",
		TransferType: "SMS_FEE", PolicyVersion: 99, FrozenOn: t0.Add(-time.Second)}
	body, _ := json.Marshal(won)
	rs := &raceFreezeStore{BudgetStore: e.st, winner: store.CommandPrice{CommandID: c.CommandID, BusinessUnitID: c.BusinessUnitID, CampaignID: c.CampaignID,
		ActionType: c.ActionType, Amount: 7, Currency: "USD", PriceJSON: string(body), FrozenOn: t0.Add(-time.Second)}}
	got, err := e.service(rs).FreezePrice(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Amount != 7 || got.PolicyVersion != 99 || got.Rate != "7" {
		t.Fatalf("loser of the first claim priced %d (policy v%d, rate %s), want the stored 7 (v99, rate 7); the policy says 10", got.Amount, got.PolicyVersion, got.Rate)
	}
}

// A budget for a campaign the business unit does not have is refused (422 naming
// campaignId, with a did-you-mean among its campaigns) and nothing is stored; one for an
// existing campaign is created.
func TestCreateBudgetRefusesAnUnknownCampaign(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 1000)
	svc := e.service(e.st)
	svc.Campaigns = e.st
	if _, err := e.st.CampaignSave(ctx, store.CampaignSaveParams{Campaign: store.Campaign{BusinessUnitID: "bu-1", CampaignID: "welcome", Name: "W",
		Status: store.CampaignActive, RunID: "run-1", Triggers: []string{"SignedUp"}, DefinitionJSON: "{}"}, Now: t0}); err != nil {
		t.Fatal(err)
	}
	_, err := svc.CreateBudget(ctx, "bu-1", "welcom", budget.BudgetInput{Currency: "USD", MaxCost: 100}, "ops")
	var ae *automation.Error
	if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || !strings.Contains(err.Error(), "campaignId") ||
		!strings.Contains(err.Error(), `"welcom" does not exist`) || !strings.Contains(err.Error(), `did you mean "welcome"?`) {
		t.Fatalf("budget for a missing campaign: %v", err)
	}
	if _, err := e.st.BudgetGet(ctx, "bu-1", "welcom"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused budget was stored: %v", err)
	}
	if _, err := svc.CreateBudget(ctx, "bu-1", "welcome", budget.BudgetInput{Currency: "USD", MaxCost: 100}, "ops"); err != nil {
		t.Fatal(err)
	}
}
