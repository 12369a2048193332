package storetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// RunBudget checks store.BudgetStore (docs/budgets.md): the conditional reservation, the
// transfer state machine with its exactly-once cost, the release rules, guarded budget
// changes, price policies, frozen prices and the fee-fact projection.
func RunBudget(t *testing.T, open Opener) {
	runCases(t, open, budgetCases)
}

func orderFor(cmd string) func(int64) string {
	return func(a int64) string { return fmt.Sprintf("ord-%s-%d", cmd, a) }
}

func newBudget(t *testing.T, s store.Store, campaign string, max int64) store.CampaignBudget {
	t.Helper()
	b, err := s.BudgetCreate(context.Background(), store.BudgetCreateParams{BusinessUnitID: "bu-1", CampaignID: campaign, Currency: "USD",
		MaxCost: max, Now: T0, Operator: "ops", Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func reserve(t *testing.T, s store.Store, campaign, cmd string, amount int64) store.BudgetReserveResult {
	t.Helper()
	r, err := s.BudgetReserve(context.Background(), store.BudgetReserveParams{BusinessUnitID: "bu-1", CampaignID: campaign, CommandID: cmd,
		Amount: amount, Currency: "USD", OrderIDFor: orderFor(cmd), Now: T0})
	if err != nil {
		t.Fatalf("reserve %s: %v", cmd, err)
	}
	return r
}

func testBudgetReserve(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	b := newBudget(t, s, "c1", 300)
	if b.Status != store.BudgetActive || b.Version != 1 || b.Cost != 0 || b.ReservedCost != 0 || b.Currency != "USD" || !b.CreatedOn.Equal(T0) {
		t.Fatalf("created %+v", b)
	}
	if _, err := s.BudgetCreate(ctx, store.BudgetCreateParams{BusinessUnitID: "bu-1", CampaignID: "c1", Currency: "USD", MaxCost: 1, Now: T0}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second create: %v", err)
	}
	for i := 1; i <= 3; i++ {
		r := reserve(t, s, "c1", fmt.Sprintf("cmd-%d", i), 100)
		if r.Outcome != store.ReserveHeld || r.Reservation.Status != store.ReservationHeld || r.Reservation.Attempt != 1 ||
			r.Reservation.OrderID != fmt.Sprintf("ord-cmd-%d-1", i) || r.Budget.ReservedCost != int64(i*100) {
			t.Fatalf("reserve %d: %+v", i, r)
		}
	}
	again := reserve(t, s, "c1", "cmd-2", 100)
	if again.Outcome != store.ReserveExisting || again.Budget.ReservedCost != 300 {
		t.Fatalf("same command again: %+v", again)
	}
	short := reserve(t, s, "c1", "cmd-4", 1)
	if short.Outcome != store.ReserveShort || short.Budget.Status != store.BudgetPaused || short.Budget.PausedReason != store.ShortBudget || short.Budget.ReservedCost != 300 {
		t.Fatalf("short: %+v", short)
	}
	if _, err := s.ReservationGet(ctx, "cmd-4"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a short reserve wrote a reservation: %v", err)
	}
	w, err := s.BudgetWaitList(ctx, "bu-1", 10)
	if err != nil || len(w) != 1 || w[0].CommandID != "cmd-4" || w[0].Reason != store.ShortBudget || w[0].Amount != 1 {
		t.Fatalf("waiting: %+v %v", w, err)
	}
	if g, err := s.BudgetWaitGet(ctx, "cmd-4"); err != nil || g.CommandID != "cmd-4" || g.CampaignID != "c1" || g.Reason != store.ShortBudget || g.Amount != 1 {
		t.Fatalf("the wait by its command: %+v %v", g, err)
	}
	if _, err := s.BudgetWaitGet(ctx, "CMD-4"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a case twin's wait: %v, want ErrNotFound", err)
	}
	if _, err := s.BudgetReserve(ctx, store.BudgetReserveParams{BusinessUnitID: "bu-1", CampaignID: "c1", CommandID: "cmd-5", Amount: 1,
		Currency: "EUR", OrderIDFor: orderFor("cmd-5"), Now: T0}); !errors.Is(err, store.ErrCurrencyMismatch) {
		t.Fatalf("EUR on a USD budget: %v", err)
	}
	if _, err := s.BudgetReserve(ctx, store.BudgetReserveParams{BusinessUnitID: "bu-2", CampaignID: "c1", CommandID: "cmd-6", Amount: 1,
		Currency: "USD", OrderIDFor: orderFor("cmd-6"), Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another unit's campaign: %v", err)
	}
	st, err := s.ReservationStats(ctx, "bu-1", "c1")
	if err != nil || st.Held != 3 || st.HeldAmount != 300 || st.OldestHeld == nil || !st.OldestHeld.Equal(T0) {
		t.Fatalf("stats %+v %v", st, err)
	}
	// A raise leaves room: the budget resumes and the waiting command reserves (its wait removed).
	b, err = s.BudgetSetMaxCost(ctx, store.BudgetSetMaxCostParams{BusinessUnitID: "bu-1", CampaignID: "c1", MaxCost: 400, ExpectedVersion: short.Budget.Version, Now: T0, Operator: "ops"})
	if err != nil || b.Status != store.BudgetActive || b.PausedReason != "" {
		t.Fatalf("raise: %+v %v", b, err)
	}
	if r := reserve(t, s, "c1", "cmd-4", 1); r.Outcome != store.ReserveHeld {
		t.Fatalf("after raise: %+v", r)
	}
	if w, _ := s.BudgetWaitList(ctx, "bu-1", 10); len(w) != 0 {
		t.Fatalf("wait kept after reserve: %+v", w)
	}
	if _, err := s.BudgetWaitGet(ctx, "cmd-4"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the wait by its command after its reserve: %v, want ErrNotFound", err)
	}
}

func testBudgetReserveConcurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	newBudget(t, s, "c1", 1000) // room for exactly 100 holds of 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	held, short := 0, 0
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				cmd := fmt.Sprintf("w%d-c%d", w, i)
				r, err := s.BudgetReserve(ctx, store.BudgetReserveParams{BusinessUnitID: "bu-1", CampaignID: "c1", CommandID: cmd, Amount: 10,
					Currency: "USD", OrderIDFor: orderFor(cmd), Now: T0})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if r.Outcome == store.ReserveHeld {
					held++
				} else {
					short++
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	b, err := s.BudgetGet(ctx, "bu-1", "c1")
	if err != nil || held != 100 || short != 60 || b.ReservedCost != 1000 || b.Cost+b.ReservedCost > b.MaxCost {
		t.Fatalf("held %d short %d budget %+v %v", held, short, b, err)
	}
}

func feeFacts(t *testing.T, s store.Store) []store.CampaignFeeFact {
	t.Helper()
	var out []store.CampaignFeeFact
	for _, m := range unpublished(t, s) {
		if m.Destination != store.FeeFactsTopic {
			continue
		}
		var f store.CampaignFeeFact
		if err := json.Unmarshal(m.Body, &f); err != nil || f.EventID != m.MessageID {
			t.Fatalf("fact %s: %v", m.Body, err)
		}
		out = append(out, f)
	}
	return out
}

func begin(t *testing.T, s store.Store, cmd, order string) store.FeeTransfer {
	t.Helper()
	tr, err := s.FeeTransferBegin(context.Background(), store.FeeTransferBeginParams{CommandID: cmd, OrderID: order, TransferType: "FEE", Day: "2026-10-01", Now: T0})
	if err != nil {
		t.Fatalf("begin %s: %v", order, err)
	}
	return tr
}

func record(t *testing.T, s store.Store, order, status string) store.FeeTransferRecordResult {
	t.Helper()
	r, err := s.FeeTransferRecord(context.Background(), store.FeeTransferRecordParams{OrderID: order, Status: status, ProviderReference: "ref-" + order, Now: T0.Add(time.Minute)})
	if err != nil {
		t.Fatalf("record %s %s: %v", order, status, err)
	}
	return r
}

func testFeeTransferOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	newBudget(t, s, "c1", 500)
	reserve(t, s, "c1", "cmd-1", 120)
	if _, err := s.FeeTransferBegin(ctx, store.FeeTransferBeginParams{CommandID: "cmd-1", OrderID: "ord-other", TransferType: "FEE", Day: "2026-10-01", Now: T0}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("begin with an order that is not the reservation's: %v", err)
	}
	tr := begin(t, s, "cmd-1", "ord-cmd-1-1")
	if tr.Status != store.FeePending || tr.Amount != 120 || tr.Currency != "USD" || tr.Revision != 1 || tr.CostAdded || tr.Attempt != 1 {
		t.Fatalf("begin %+v", tr)
	}
	if again := begin(t, s, "cmd-1", "ord-cmd-1-1"); again.ID != tr.ID || again.Revision != 1 {
		t.Fatalf("begin again %+v", again)
	}
	u := record(t, s, "ord-cmd-1-1", store.FeeUnknown)
	if !u.Changed || u.Transfer.Status != store.FeeUnknown || u.Reservation.Status != store.ReservationHeld {
		t.Fatalf("unknown %+v", u)
	}
	if u2 := record(t, s, "ord-cmd-1-1", store.FeeUnknown); u2.Changed || u2.Transfer.Revision != 2 || u2.Transfer.Checks != 2 {
		t.Fatalf("unknown again %+v", u2)
	}
	if b, _ := s.BudgetGet(ctx, "bu-1", "c1"); b.Cost != 0 || b.ReservedCost != 120 {
		t.Fatalf("UNKNOWN moved the budget: %+v", b)
	}
	// A person's resolution is always guarded: revision 0 with an Operator is ErrLeaseLost.
	if _, err := s.FeeTransferRecord(ctx, store.FeeTransferRecordParams{OrderID: "ord-cmd-1-1", Status: store.FeeFailed, Now: T0, Operator: "ops", Reason: "blind"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a person's resolution with revision 0: %v", err)
	}
	ok := record(t, s, "ord-cmd-1-1", store.FeeSucceeded)
	if !ok.Changed || !ok.Transfer.CostAdded || ok.Transfer.Revision != 3 || ok.Reservation.Status != store.ReservationConsumed || ok.Transfer.ProviderReference != "ref-ord-cmd-1-1" {
		t.Fatalf("succeeded %+v", ok)
	}
	for i := 0; i < 3; i++ { // a replayed answer never adds the cost again
		if r := record(t, s, "ord-cmd-1-1", store.FeeSucceeded); r.Changed {
			t.Fatalf("second success changed %+v", r)
		}
	}
	if b, _ := s.BudgetGet(ctx, "bu-1", "c1"); b.Cost != 120 || b.ReservedCost != 0 {
		t.Fatalf("budget after success: %+v", b)
	}
	if _, err := s.FeeTransferRecord(ctx, store.FeeTransferRecordParams{OrderID: "ord-cmd-1-1", Status: store.FeeFailed, Now: T0}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("FAILED after SUCCEEDED: %v", err)
	}
	if _, err := s.FeeTransferRecord(ctx, store.FeeTransferRecordParams{OrderID: "ord-cmd-1-1", Status: store.FeePending, Now: T0}); err == nil {
		t.Fatal("PENDING recorded")
	}
	if r := reserve(t, s, "c1", "cmd-1", 120); r.Outcome != store.ReserveExisting || r.Reservation.Status != store.ReservationConsumed {
		t.Fatalf("reserve of a consumed command: %+v", r)
	}
	facts := feeFacts(t, s)
	if len(facts) != 3 || facts[0].FeeStatus != store.FeePending || facts[1].FeeStatus != store.FeeUnknown || facts[2].FeeStatus != store.FeeSucceeded ||
		facts[2].Revision != 3 || facts[2].EventID != "fee:ord-cmd-1-1:r3" || facts[2].Amount != 120 || facts[2].Day != "2026-10-01" {
		t.Fatalf("facts %+v", facts)
	}
	list, err := s.FeeTransferList(ctx, store.FeeTransferListParams{Statuses: []string{store.FeeSucceeded}, Limit: 10})
	if err != nil || len(list) != 1 || list[0].OrderID != "ord-cmd-1-1" {
		t.Fatalf("list %+v %v", list, err)
	}
}

func testFeeFailedRelease(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	newBudget(t, s, "c1", 100)
	reserve(t, s, "c1", "cmd-1", 100)
	begin(t, s, "cmd-1", "ord-cmd-1-1")
	f := record(t, s, "ord-cmd-1-1", store.FeeFailed)
	if f.Reservation.Status != store.ReservationReleased || f.Transfer.CostAdded {
		t.Fatalf("failed %+v", f)
	}
	if b, _ := s.BudgetGet(ctx, "bu-1", "c1"); b.Cost != 0 || b.ReservedCost != 0 {
		t.Fatalf("budget after failure %+v", b)
	}
	// A new attempt re-holds the same row with a new order id.
	r := reserve(t, s, "c1", "cmd-1", 100)
	if r.Outcome != store.ReserveHeld || r.Reservation.Attempt != 2 || r.Reservation.OrderID != "ord-cmd-1-2" || r.Reservation.ID != f.Reservation.ID {
		t.Fatalf("rehold %+v", r)
	}
	begin(t, s, "cmd-1", "ord-cmd-1-2")
	if ok := record(t, s, "ord-cmd-1-2", store.FeeSucceeded); ok.Reservation.Status != store.ReservationConsumed {
		t.Fatalf("second attempt %+v", ok)
	}
	if b, _ := s.BudgetGet(ctx, "bu-1", "c1"); b.Cost != 100 || b.ReservedCost != 0 {
		t.Fatalf("budget %+v", b)
	}
}

func testReleaseRules(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	newBudget(t, s, "c1", 1000)
	reserve(t, s, "c1", "no-charge", 100)
	r, released, err := s.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: "no-charge", ActionStatus: "CANCELLED", Now: T0})
	if err != nil || !released || r.Status != store.ReservationReleased || r.ActionStatus != "CANCELLED" {
		t.Fatalf("release without charge: %+v %v %v", r, released, err)
	}
	if _, released, err := s.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: "no-charge", Now: T0}); err != nil || released {
		t.Fatalf("second release: %v %v", released, err)
	}
	for _, st := range []string{store.FeePending, store.FeeUnknown} {
		cmd := "in-doubt-" + st
		reserve(t, s, "c1", cmd, 100)
		begin(t, s, cmd, "ord-"+cmd+"-1")
		if st == store.FeeUnknown {
			record(t, s, "ord-"+cmd+"-1", store.FeeUnknown)
		}
		if _, _, err := s.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: cmd, Now: T0}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("%s release: %v", st, err)
		}
		if r, _ := s.ReservationGet(ctx, cmd); r.Status != store.ReservationHeld {
			t.Fatalf("%s: %+v", st, r)
		}
	}
	if b, _ := s.BudgetGet(ctx, "bu-1", "c1"); b.ReservedCost != 200 {
		t.Fatalf("budget %+v", b)
	}
	if err := s.ReservationSetActionStatus(ctx, "in-doubt-UNKNOWN", "FAILED", T0); err != nil {
		t.Fatal(err)
	}
	if err := s.ReservationSetActionStatus(ctx, "nope", "FAILED", T0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown command: %v", err)
	}
}

func testBudgetMaxCost(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	b := newBudget(t, s, "c1", 500)
	reserve(t, s, "c1", "cmd-1", 200)
	begin(t, s, "cmd-1", "ord-cmd-1-1")
	record(t, s, "ord-cmd-1-1", store.FeeSucceeded)
	reserve(t, s, "c1", "cmd-2", 100) // cost 200 + reserved 100
	if _, err := s.BudgetSetMaxCost(ctx, store.BudgetSetMaxCostParams{BusinessUnitID: "bu-1", CampaignID: "c1", MaxCost: 299, ExpectedVersion: b.Version, Now: T0, Operator: "ops"}); !errors.Is(err, store.ErrBudgetShort) {
		t.Fatalf("below committed: %v", err)
	}
	if _, err := s.BudgetSetMaxCost(ctx, store.BudgetSetMaxCostParams{BusinessUnitID: "bu-1", CampaignID: "c1", MaxCost: 900, ExpectedVersion: b.Version + 7, Now: T0, Operator: "ops"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale version: %v", err)
	}
	if _, err := s.BudgetSetMaxCost(ctx, store.BudgetSetMaxCostParams{BusinessUnitID: "bu-1", CampaignID: "nope", MaxCost: 900, ExpectedVersion: 1, Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown budget: %v", err)
	}
	if got, _ := s.BudgetGet(ctx, "bu-1", "c1"); got.MaxCost != 500 || got.Version != b.Version {
		t.Fatalf("refused changes changed %+v", got)
	}
	got, err := s.BudgetSetMaxCost(ctx, store.BudgetSetMaxCostParams{BusinessUnitID: "bu-1", CampaignID: "c1", MaxCost: 300, ExpectedVersion: b.Version, Now: T0, Operator: "ops", Reason: "exactly committed"})
	if err != nil || got.MaxCost != 300 || got.Version != b.Version+1 {
		t.Fatalf("lower to committed: %+v %v", got, err)
	}
	p, err := s.BudgetSetStatus(ctx, store.BudgetSetStatusParams{BusinessUnitID: "bu-1", CampaignID: "c1", Status: store.BudgetPaused, Reason: store.ShortBalance, Now: T0})
	if err != nil || p.Status != store.BudgetPaused || p.PausedReason != store.ShortBalance {
		t.Fatalf("pause %+v %v", p, err)
	}
	// A person's change is always guarded: version 0 with an Operator is ErrLeaseLost, not
	// "unguarded" (that is only for the charging service's own pauses).
	if _, err := s.BudgetSetStatus(ctx, store.BudgetSetStatusParams{BusinessUnitID: "bu-1", CampaignID: "c1", Status: store.BudgetActive, Now: T0, Operator: "ops", AuditReason: "blind"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a person's resume with version 0: %v", err)
	}
	res, err := s.BudgetSetStatus(ctx, store.BudgetSetStatusParams{BusinessUnitID: "bu-1", CampaignID: "c1", Status: store.BudgetActive, ExpectedVersion: p.Version, Now: T0, Operator: "ops", AuditReason: "topped up"})
	if err != nil || res.Status != store.BudgetActive || res.PausedReason != "" {
		t.Fatalf("resume %+v %v", res, err)
	}
	audit, err := s.BudgetAuditList(ctx, "bu-1", "c1", 10)
	if err != nil || len(audit) != 3 || audit[0].Action != "RESUME" || audit[1].Action != "SET_MAX_COST" || audit[1].Operator != "ops" || audit[2].Action != "CREATE" {
		t.Fatalf("audit %+v %v", audit, err)
	}
}

func testPricePolicy(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	pol := store.PricePolicy{BusinessUnitID: "bu-1", ActionType: "ADD_SMS", Formula: "PER_UNIT", Rate: "12.5", Unit: "SMS", TransferType: "SMS_FEE", Currency: "USD"}
	got, err := s.PricePolicyPut(ctx, store.PricePolicyPutParams{Policy: pol, Now: T0, Operator: "ops"})
	if err != nil || got.Version != 1 || got.Rate != "12.5" || got.UpdatedBy != "ops" {
		t.Fatalf("put %+v %v", got, err)
	}
	if _, err := s.PricePolicyPut(ctx, store.PricePolicyPutParams{Policy: pol, Now: T0}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("create twice: %v", err)
	}
	pol.Rate = "13"
	if _, err := s.PricePolicyPut(ctx, store.PricePolicyPutParams{Policy: pol, ExpectedVersion: 5, Now: T0}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale: %v", err)
	}
	if got, err = s.PricePolicyPut(ctx, store.PricePolicyPutParams{Policy: pol, ExpectedVersion: 1, Now: T0}); err != nil || got.Version != 2 || got.Rate != "13" {
		t.Fatalf("replace %+v %v", got, err)
	}
	if l, err := s.PricePolicyList(ctx, "bu-1"); err != nil || len(l) != 1 {
		t.Fatalf("list %+v %v", l, err)
	}
	if _, err := s.PricePolicyGet(ctx, "bu-2", "ADD_SMS"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other unit: %v", err)
	}
	first, err := s.CommandPriceFreeze(ctx, store.CommandPrice{CommandID: "cmd-1", BusinessUnitID: "bu-1", CampaignID: "c1", ActionType: "ADD_SMS", Amount: 13, Currency: "USD", PriceJSON: `{"v":1}`, FrozenOn: T0})
	if err != nil || first.Amount != 13 {
		t.Fatalf("freeze %+v %v", first, err)
	}
	second, err := s.CommandPriceFreeze(ctx, store.CommandPrice{CommandID: "cmd-1", BusinessUnitID: "bu-1", CampaignID: "c1", ActionType: "ADD_SMS", Amount: 99, Currency: "USD", PriceJSON: `{"v":2}`, FrozenOn: T0.Add(time.Hour)})
	if err != nil || second != first {
		t.Fatalf("refreeze %+v, want the first %+v (%v)", second, first, err)
	}
}

func testFeeProjection(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	newBudget(t, s, "c1", 10000)
	for i, st := range []string{store.FeeSucceeded, store.FeeFailed, store.FeeSucceeded, store.FeeUnknown} {
		cmd := fmt.Sprintf("cmd-%d", i)
		reserve(t, s, "c1", cmd, int64(100*(i+1)))
		begin(t, s, cmd, "ord-"+cmd+"-1")
		record(t, s, "ord-"+cmd+"-1", st)
	}
	facts := feeFacts(t, s)
	// Replay everything three times, newest first once: the projection keeps the highest revision per order.
	var all []store.CampaignFeeFact
	for i := len(facts) - 1; i >= 0; i-- {
		all = append(all, facts[i])
	}
	all = append(all, facts...)
	all = append(all, facts...)
	res, err := s.FeeFactApply(ctx, all, T0)
	if err != nil || res.Applied != 4 || res.Stale != len(all)-4 {
		t.Fatalf("apply %+v %v", res, err)
	}
	days, err := s.FeeCostByDay(ctx, "bu-1", "c1", "2026-10-01", "2026-10-31")
	if err != nil || len(days) != 1 || days[0].Cost != 400 || days[0].Fees != 2 || days[0].Currency != "USD" {
		t.Fatalf("days %+v %v", days, err)
	}
	rec, err := s.FeeReconcile(ctx, "bu-1", "c1")
	if err != nil || rec.BudgetCost != 400 || rec.TransferCost != 400 || rec.ProjectedCost != 400 || rec.Transfers != 2 || rec.Projected != 2 {
		t.Fatalf("reconcile %+v %v", rec, err)
	}
	unknown, err := s.FeeTransferList(ctx, store.FeeTransferListParams{BusinessUnitID: "bu-1", Statuses: []string{store.FeeUnknown, store.FeePending}, Limit: 10})
	if err != nil || len(unknown) != 1 || unknown[0].OrderID != "ord-cmd-3-1" {
		t.Fatalf("unknown queue %+v %v", unknown, err)
	}
}

// testReleaseStaleAttempt: a release that names an attempt the reservation has left (released,
// then held again for attempt 2 with another order and amount) changes nothing: the new hold
// stays HELD with its own order and action status, and the budget keeps its amount reserved.
// Naming the current attempt releases it. (On SQL Server this is also the race of issue 32:
// a release deciding on attempt 1 after attempt 2 was held.)
func testReleaseStaleAttempt(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	newBudget(t, s, "c1", 1000)
	first := reserve(t, s, "c1", "cmd-1", 100)
	if _, released, err := s.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: "cmd-1", Attempt: 1, Now: T0}); err != nil || !released {
		t.Fatalf("release of attempt 1: %v %v", released, err)
	}
	second, err := s.BudgetReserve(ctx, store.BudgetReserveParams{BusinessUnitID: "bu-1", CampaignID: "c1", CommandID: "cmd-1",
		Amount: 250, Currency: "USD", OrderIDFor: orderFor("cmd-1"), Now: T0})
	if err != nil || second.Outcome != store.ReserveHeld || second.Reservation.Attempt != 2 || second.Reservation.OrderID == first.Reservation.OrderID {
		t.Fatalf("rehold: %+v %v", second, err)
	}
	r, released, err := s.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: "cmd-1", Attempt: 1, ActionStatus: "ABANDONED", Now: T0.Add(time.Minute)})
	if err != nil || released {
		t.Fatalf("release naming stale attempt 1: released %v, %v", released, err)
	}
	got, err := s.ReservationGet(ctx, "cmd-1")
	if err != nil || got.Status != store.ReservationHeld || got.Attempt != 2 || got.OrderID != second.Reservation.OrderID ||
		got.Amount != 250 || got.ActionStatus != "" || !got.UpdatedOn.Equal(second.Reservation.UpdatedOn) || r.Attempt != 2 {
		t.Fatalf("after a stale release: %+v (returned %+v), %v", got, r, err)
	}
	if b, _ := s.BudgetGet(ctx, "bu-1", "c1"); b.ReservedCost != 250 {
		t.Fatalf("a stale release changed the budget: %+v", b)
	}
	if _, released, err := s.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: "cmd-1", Attempt: 2, Now: T0}); err != nil || !released {
		t.Fatalf("release of attempt 2: %v %v", released, err)
	}
	if b, _ := s.BudgetGet(ctx, "bu-1", "c1"); b.ReservedCost != 0 {
		t.Fatalf("budget after releasing attempt 2: %+v", b)
	}
}

// testFeeTransferBeginConcurrent: concurrent begins of one order (a redelivered charge
// message handled twice at once) all succeed with the one transfer row and its one fact;
// none fails on the order's unique key.
func testFeeTransferBeginConcurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	newBudget(t, s, "c1", 1000)
	reserve(t, s, "c1", "cmd-1", 100)
	const n = 8
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tr, err := s.FeeTransferBegin(ctx, store.FeeTransferBeginParams{CommandID: "cmd-1", OrderID: "ord-cmd-1-1", TransferType: "FEE", Day: "2026-10-01", Now: T0})
			if err != nil {
				t.Errorf("begin %d: %v", i, err)
				return
			}
			ids[i] = tr.ID
		}(i)
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if ids[i] != ids[0] {
			t.Fatalf("begins returned transfers %v, want one", ids)
		}
	}
	list, err := s.FeeTransferList(ctx, store.FeeTransferListParams{Statuses: []string{store.FeePending}, Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("transfers %+v %v", list, err)
	}
}

// ReholdForGuard brings command "cmd-guard" of campaign "c-guard" (business unit bu-1) to
// its second attempt through the public API: held (attempt 1, order ord-cmd-guard-1),
// released, held again (attempt 2, order ord-cmd-guard-2, HELD). Dialect tests use it to
// run ReservationSetStatus against a stale attempt (sql/sqlite, sql/mssql).
func ReholdForGuard(t *testing.T, s store.Store) store.BudgetReservation {
	t.Helper()
	ctx := context.Background()
	newBudget(t, s, "c-guard", 1000)
	reserve(t, s, "c-guard", "cmd-guard", 100)
	if _, released, err := s.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: "cmd-guard", Now: T0}); err != nil || !released {
		t.Fatalf("release of attempt 1: %v %v", released, err)
	}
	r := reserve(t, s, "c-guard", "cmd-guard", 200)
	if r.Reservation.Attempt != 2 || r.Reservation.Status != store.ReservationHeld || r.Reservation.OrderID != "ord-cmd-guard-2" {
		t.Fatalf("rehold: %+v", r)
	}
	return r.Reservation
}

// CheckReservationGuard runs a dialect's ReservationSetStatus statement (stmt, with its named
// parameters; now is T0 in the dialect's encoding) through db against the command
// ReholdForGuard re-held in s: ReservationSetStatus changes a HELD reservation only for the
// Attempt and OrderId its caller read (issue 32: a release deciding on attempt 1 must not
// release attempt 2's hold). A stale attempt, or the current attempt with attempt 1's order,
// changes no row; the current attempt and order change one. sql/sqlite and sql/mssql call it.
func CheckReservationGuard(t *testing.T, s store.Store, db *sql.DB, stmt string, now any) {
	t.Helper()
	ReholdForGuard(t, s)
	set := func(attempt int64, order string) int64 {
		t.Helper()
		res, err := db.ExecContext(context.Background(), stmt, sql.Named("CommandId", "cmd-guard"), sql.Named("Attempt", attempt),
			sql.Named("OrderId", order), sql.Named("Status", store.ReservationReleased), sql.Named("ActionStatus", nil), sql.Named("Now", now))
		if err != nil {
			t.Fatal(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, stale := range []struct {
		attempt int64
		order   string
	}{{1, "ord-cmd-guard-1"}, {2, "ord-cmd-guard-1"}, {1, "ord-cmd-guard-2"}} {
		if n := set(stale.attempt, stale.order); n != 0 {
			t.Fatalf("attempt %d, order %s changed %d rows of attempt 2's hold", stale.attempt, stale.order, n)
		}
	}
	if n := set(2, "ord-cmd-guard-2"); n != 1 {
		t.Fatalf("the current attempt changed %d rows, want 1", n)
	}
}
