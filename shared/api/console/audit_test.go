package console_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/store"
)

// hiddenInputs are what a form field can carry that an audit line must not: a NUL, a
// right-to-left override (the line then displays as another name) and 10,000 characters
// (the columns are nvarchar(200) for who and bounded for why).
var hiddenInputs = map[string]string{
	"NUL":    "ops.jane\x00",
	"U+202E": "ops.\u202Eenaj",
	"10k":    strings.Repeat("x", 10000),
}

// pricedFee sets up bu-syd/promo with a 10 AUD SMS fee and returns the decision of cmd's
// Prepare under billing b.
func pricedFee(t *testing.T, e *env, b budget.Billing, cmd string) budget.Decision {
	t.Helper()
	ctx := context.Background()
	e.rt.Budget.Billing = b
	if _, err := e.rt.Budget.GetView(ctx, "bu-syd", "promo"); errors.Is(err, store.ErrNotFound) {
		ensureCampaign(t, e, "bu-syd", "promo")
		if _, err := e.rt.Budget.CreateBudget(ctx, "bu-syd", "promo", budget.BudgetInput{Currency: "AUD", MaxCost: 100}, "seed"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.Budget.PutPolicy(ctx, "bu-syd", "ADD_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "SMS", TransferType: "SMS_FEE", Currency: "AUD"}, 0, "seed"); err != nil {
			t.Fatal(err)
		}
	}
	d, err := e.rt.Budget.Prepare(ctx, budget.Command{CommandID: cmd, BusinessUnitID: "bu-syd", CampaignID: "promo", ActionType: "ADD_SMS", LocalDate: "2026-10-05"})
	if err != nil {
		t.Fatalf("prepare: %+v %v", d, err)
	}
	return d
}

// TestConsoleResolveFormsRefuseHiddenOperatorAndReason: the campaign command, fee and row
// forms refuse (422, nothing changed) an operator or a reason carrying a NUL, a U+202E or
// 10,000 characters, by the audit rule the support API applies (automation.CheckAudit).
func TestConsoleResolveFormsRefuseHiddenOperatorAndReason(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	saveCampaign(t, e, "bu-syd", "welcome")
	cmd := startExecution(t, e, "bu-syd", "welcome", "exe-1", now)
	unknown := finishCommand(t, e, cmd, store.CampaignFinishParams{Now: now, Status: store.CommandUnknown, Error: "timeout"})
	d := pricedFee(t, e, unknownBilling{}, "cmd-1")
	fee, err := e.rt.Store.FeeTransferGet(ctx, d.OrderID)
	if err != nil || fee.Status != store.FeeUnknown {
		t.Fatalf("fee %+v %v", fee, err)
	}
	forms := map[string]struct {
		path    string
		v       url.Values
		changed func() bool
	}{
		"campaign": {"/api/console/campaigns", url.Values{"businessUnitId": {"bu-syd"}, "campaignId": {"welcome"}, "commandId": {cmd.CommandID},
			"version": {itoa(unknown.Version)}, "status": {"SUCCEEDED"}},
			func() bool {
				got, _ := e.rt.Store.CampaignCommandGet(ctx, cmd.CommandID)
				return got.Status != store.CommandUnknown || got.Version != unknown.Version
			}},
		"fee": {"/api/console/fees", url.Values{"businessUnitId": {"bu-syd"}, "orderId": {d.OrderID}, "revision": {itoa(fee.Revision)}, "status": {"FAILED"}},
			func() bool {
				got, _ := e.rt.Store.FeeTransferGet(ctx, d.OrderID)
				return got.Status != store.FeeUnknown || got.Revision != fee.Revision
			}},
		"row release": {fmt.Sprintf("/api/console/rows/%d/release", e.held.ID), url.Values{"version": {itoa(e.held.Version)}},
			func() bool {
				audit, _ := e.rt.Store.SupportAuditList(ctx, []int64{e.held.ID}, 10)
				return len(audit) != 0
			}},
	}
	for name, f := range forms {
		for _, field := range []string{"operator", "reason"} {
			for what, bad := range hiddenInputs {
				v := url.Values{"operator": {"ops.jane"}, "reason": {"checked with the provider"}}
				for k, vs := range f.v {
					v[k] = vs
				}
				v.Set(field, bad)
				code, body := e.form(t, http.DefaultClient, f.path, v, "Authorization", "Bearer "+token)
				if code != 422 || f.changed() {
					t.Errorf("%s form, %s with %s: %d (changed %v) %.300s", name, field, what, code, f.changed(), body)
				} else if !strings.Contains(body, field) {
					t.Errorf("%s form, %s with %s: the answer does not name the field: %.500s", name, field, what, body)
				}
			}
		}
	}
}

// gatedBilling holds CreateTransfer until released, then answers SUCCEEDED: a charge in
// flight (the worker called the provider; the provider commits it).
type gatedBilling struct {
	unknownBilling
	started, release chan struct{}
}

func (g gatedBilling) CreateTransfer(_ context.Context, r billing.TransferRequest) (billing.Transfer, error) {
	g.started <- struct{}{}
	<-g.release
	return billing.Transfer{OrderID: r.OrderID, BusinessUnitID: r.BusinessUnitID, Status: billing.StatusSucceeded, Amount: r.Amount,
		Currency: r.Currency, TransferType: r.TransferType, Reference: "prov-1", CreatedOn: now}, nil
}

type prepared struct {
	d   budget.Decision
	err error
}

// startGatedCharge starts cmd's Prepare with its charge call held open and returns the
// PENDING fee, the gate and the Prepare's answer channel.
func startGatedCharge(t *testing.T, e *env, cmd string) (store.FeeTransfer, gatedBilling, chan prepared) {
	t.Helper()
	ctx := context.Background()
	pricedFee(t, e, unknownBilling{}, "setup-"+cmd) // the budget and the policy
	g := gatedBilling{started: make(chan struct{}, 1), release: make(chan struct{})}
	e.rt.Budget.Billing = g
	done := make(chan prepared, 1)
	go func() {
		d, err := e.rt.Budget.Prepare(ctx, budget.Command{CommandID: cmd, BusinessUnitID: "bu-syd", CampaignID: "promo", ActionType: "ADD_SMS", LocalDate: "2026-10-05"})
		done <- prepared{d, err}
	}()
	<-g.started
	list, err := e.rt.Store.FeeTransferList(ctx, store.FeeTransferListParams{BusinessUnitID: "bu-syd", Statuses: []string{store.FeePending}, Limit: 10})
	if err != nil || len(list) != 1 || list[0].CommandID != cmd {
		t.Fatalf("pending fees: %+v %v", list, err)
	}
	fee := list[0]
	return fee, g, done
}

func resolveFeeAPI(t *testing.T, e *env, order string, revision int64, status string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.url("/api/budgets/fees/unknown/"+order+"/resolve"),
		strings.NewReader(`{"businessUnitId":"bu-syd","status":"`+status+`","reason":"checked the provider portal"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Automation-Operator", "ops.jane")
	req.Header.Set("If-Match", fmt.Sprintf(`"%d"`, revision))
	return do(t, http.DefaultClient, req)
}

// TestFeeQueueNeverOffersAChargeInFlight: a PENDING fee whose charge call is running (not
// yet InDoubtAfter old) is neither listed in the fee queue (page and service) nor resolvable
// (console form and API answer 409 naming its state; nothing changes); the worker's answer
// then records the provider's SUCCEEDED.
func TestFeeQueueNeverOffersAChargeInFlight(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	fee, g, done := startGatedCharge(t, e, "cmd-2")
	fees, err := e.rt.Budget.UnknownFees(ctx, "bu-syd", 0, 50)
	for _, f := range fees {
		if f.OrderID == fee.OrderID || err != nil {
			t.Errorf("the service lists the fee in flight: %+v %v", fees, err)
		}
	}
	if body, _ := e.page(t, "/api/console/fees?businessUnitId=bu-syd", "", 200); strings.Contains(body, fee.OrderID) {
		t.Errorf("the fee queue page lists the fee in flight")
	}
	v := url.Values{"businessUnitId": {"bu-syd"}, "orderId": {fee.OrderID}, "revision": {itoa(fee.Revision)}, "status": {"FAILED"},
		"operator": {"ops.jane"}, "reason": {"no charge in the portal"}}
	if code, body := e.form(t, http.DefaultClient, "/api/console/fees", v, "Authorization", "Bearer "+token); code != 409 || !strings.Contains(body, "PENDING") {
		t.Errorf("console resolve of the fee in flight: %d %.400s", code, body)
	}
	if code, body := resolveFeeAPI(t, e, fee.OrderID, fee.Revision, "FAILED"); code != 409 || !strings.Contains(body, "PENDING") {
		t.Errorf("API resolve of the fee in flight: %d %.400s", code, body)
	}
	if got, _ := e.rt.Store.FeeTransferGet(ctx, fee.OrderID); got.Status != store.FeePending || got.Revision != fee.Revision {
		t.Errorf("the refused resolves changed the fee: %+v", got)
	}
	close(g.release)
	r := <-done
	got, _ := e.rt.Store.FeeTransferGet(ctx, fee.OrderID)
	if r.err != nil || r.d.Kind != budget.Proceed || got.Status != store.FeeSucceeded {
		t.Fatalf("the worker's answer: %+v %v; ledger %s", r.d, r.err, got.Status)
	}
}

// TestFeeResolveRacingTheWorkerHasOneWinner: once a PENDING fee is past InDoubtAfter (its
// charge call stalled) a person may resolve it; the person's write and the worker's late
// answer are both guarded by the revision they read, so exactly one is written. When the
// person's FAILED wins and the provider then says SUCCEEDED, the worker is told (an error,
// ErrConflict) instead of the ledger silently saying FAILED; when the worker wins, the
// person's resolve of the revision they read answers 412.
func TestFeeResolveRacingTheWorkerHasOneWinner(t *testing.T) {
	t.Run("person first", func(t *testing.T) {
		e := newEnv(t, nil)
		ctx := context.Background()
		fee, g, done := startGatedCharge(t, e, "cmd-3")
		e.clock.Set(now.Add(3 * time.Minute)) // past InDoubtAfter (2 minutes)
		fees, err := e.rt.Budget.UnknownFees(ctx, "bu-syd", 0, 50)
		if err != nil || len(fees) == 0 || fees[len(fees)-1].OrderID != fee.OrderID {
			t.Fatalf("the stalled fee is not listed: %+v %v", fees, err)
		}
		if code, body := resolveFeeAPI(t, e, fee.OrderID, fee.Revision, "FAILED"); code != 200 {
			t.Fatalf("resolve of the stalled fee: %d %.400s", code, body)
		}
		close(g.release)
		r := <-done
		got, _ := e.rt.Store.FeeTransferGet(ctx, fee.OrderID)
		if !errors.Is(r.err, store.ErrConflict) || got.Status != store.FeeFailed || got.ResolvedBy != "ops.jane" {
			t.Fatalf("the worker losing to the person: %+v err=%v; ledger %s by %q", r.d, r.err, got.Status, got.ResolvedBy)
		}
	})
	t.Run("worker first", func(t *testing.T) {
		e := newEnv(t, nil)
		ctx := context.Background()
		fee, g, done := startGatedCharge(t, e, "cmd-4")
		e.clock.Set(now.Add(3 * time.Minute))
		close(g.release)
		if r := <-done; r.err != nil || r.d.Kind != budget.Proceed {
			t.Fatalf("worker: %+v %v", r.d, r.err)
		}
		if code, body := resolveFeeAPI(t, e, fee.OrderID, fee.Revision, "FAILED"); code != 412 && code != 409 {
			t.Fatalf("the person's resolve of revision %d after the worker's answer: %d %.400s", fee.Revision, code, body)
		}
		if got, _ := e.rt.Store.FeeTransferGet(ctx, fee.OrderID); got.Status != store.FeeSucceeded {
			t.Fatalf("ledger %s", got.Status)
		}
	})
}

// TestFeeResolveAPIRefusesIfMatchZero: If-Match "0" names no revision (they start at 1): 412,
// nothing done (the store never reads 0 from a person as "unguarded").
func TestFeeResolveAPIRefusesIfMatchZero(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	d := pricedFee(t, e, unknownBilling{}, "cmd-1")
	before, _ := e.rt.Store.FeeTransferGet(ctx, d.OrderID)
	code, body := resolveFeeAPI(t, e, d.OrderID, 0, "SUCCEEDED")
	after, _ := e.rt.Store.FeeTransferGet(ctx, d.OrderID)
	if code != 412 || after.Status != store.FeeUnknown || after.Revision != before.Revision {
		t.Fatalf("If-Match \"0\" on a fee at revision %d: %d %s; fee now %s rev %d", before.Revision, code, body, after.Status, after.Revision)
	}
}

// TestBudgetResumeRefusesIfMatchZero: the same for resuming a paused budget.
func TestBudgetResumeRefusesIfMatchZero(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ensureCampaign(t, e, "bu-syd", "promo")
	if _, err := e.rt.Budget.CreateBudget(ctx, "bu-syd", "promo", budget.BudgetInput{Currency: "AUD", MaxCost: 100}, "seed"); err != nil {
		t.Fatal(err)
	}
	paused, err := e.rt.Store.BudgetSetStatus(ctx, store.BudgetSetStatusParams{BusinessUnitID: "bu-syd", CampaignID: "promo", Status: store.BudgetPaused,
		Reason: store.ShortBudget, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", e.url("/api/budgets/campaigns/promo/resume?businessUnitId=bu-syd"), strings.NewReader(`{"reason":"blind"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Automation-Operator", "ops.jane")
	req.Header.Set("If-Match", `"0"`)
	code, body := do(t, http.DefaultClient, req)
	after, _ := e.rt.Store.BudgetGet(ctx, "bu-syd", "promo")
	if code != 412 || after.Status != store.BudgetPaused || after.Version != paused.Version {
		t.Fatalf("If-Match \"0\" on a budget at version %d: %d %.300s; budget now %s v%d", paused.Version, code, body, after.Status, after.Version)
	}
	// The store itself refuses a person's unguarded change.
	if _, err := e.rt.Store.BudgetSetStatus(ctx, store.BudgetSetStatusParams{BusinessUnitID: "bu-syd", CampaignID: "promo", Status: store.BudgetActive,
		Now: now, Operator: "ops.jane", AuditReason: "blind"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("store resume with an operator and version 0: %v", err)
	}
}
