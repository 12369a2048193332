package console_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
)

// pauseBudget creates a budget of maxCost for campaign id of bu and pauses it for BUDGET: a
// reservation that does not fit (as the worker's guard asks for one).
func pauseBudget(t *testing.T, e *env, bu, id string, maxCost int64) store.CampaignBudget {
	t.Helper()
	ctx := context.Background()
	ensureCampaign(t, e, bu, id)
	if _, err := e.rt.Budget.CreateBudget(ctx, bu, id, budget.BudgetInput{Currency: "AUD", MaxCost: money.Minor(maxCost)}, "ops"); err != nil {
		t.Fatal(err)
	}
	res, err := e.rt.Store.BudgetReserve(ctx, store.BudgetReserveParams{BusinessUnitID: bu, CampaignID: id, CommandID: "cmd-short",
		Amount: maxCost + 1, Currency: "AUD", OrderIDFor: func(a int64) string { return fmt.Sprintf("ord-short-%d", a) }, Now: now})
	if err != nil || res.Outcome != store.ReserveShort || res.Budget.Status != store.BudgetPaused {
		t.Fatalf("reserve short: %+v %v", res, err)
	}
	return res.Budget
}

// TestBudgetOperatePage: the budget page offers "change max cost" and, for a paused budget,
// "resume", each carrying the version shown. A stale version is 412 with the budget as it is
// now and changes nothing; no version 428; a bad maxCost 422; no operator 422; another unit's
// scope 404; a cookie session's post without the CSRF field 403. Raising maxCost through the
// budgets service resumes the BUDGET pause, is audited with the operator and reason, and a
// resume of the now-active budget is 409.
func TestBudgetOperatePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	b := pauseBudget(t, e, "bu-syd", "promo", 100)
	body, doc := e.page(t, "/api/console/budgets?businessUnitId=bu-syd&campaignId=promo", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `id="raise-form"`) || !strings.Contains(body, `id="resume-form"`) || !strings.Contains(body, `name="version" value="`+itoa(b.Version)+`"`) ||
		!strings.Contains(body, "PAUSED (BUDGET)") {
		t.Fatalf("page: %.5000s", body)
	}
	values := func(action string, ver int64, max string) url.Values {
		v := url.Values{"action": {action}, "businessUnitId": {"bu-syd"}, "campaignId": {"promo"}, "operator": {"ops.jane"}, "reason": {"approved by finance"}}
		if ver > 0 {
			v.Set("version", itoa(ver))
		}
		if max != "" {
			v.Set("maxCost", max)
		}
		return v
	}
	post := e.bearerPoster(t, "/api/console/budgets")
	if code, body := post(values("raise", b.Version+3, "500")); code != 412 || !strings.Contains(body, "The budget changed since you loaded it") ||
		!strings.Contains(body, "Nothing was done") || !strings.Contains(body, "at version "+itoa(b.Version)) || !strings.Contains(body, `name="version" value="`+itoa(b.Version)+`"`) {
		t.Fatalf("stale: %d %.5000s", code, body)
	}
	if code, _ := post(values("raise", 0, "500")); code != 428 {
		t.Fatalf("no version: %d", code)
	}
	if code, body := post(values("raise", b.Version, "5.00")); code != 422 || !strings.Contains(body, "maxCost") {
		t.Fatalf("bad maxCost: %d %.3000s", code, body)
	}
	noOp := values("raise", b.Version, "500")
	noOp.Del("operator")
	if code, body := post(noOp); code != 422 || !strings.Contains(body, "operator") {
		t.Fatalf("no operator: %d %.3000s", code, body)
	}
	e.refusesOutOfScopeAndWithoutCSRF(t, "/api/console/budgets", values("raise", b.Version, "500"))
	if got, _ := e.rt.Store.BudgetGet(ctx, "bu-syd", "promo"); got.Version != b.Version || got.MaxCost != 100 || got.Status != store.BudgetPaused {
		t.Fatalf("refused forms changed the budget: %+v", got)
	}
	code, body := post(values("raise", b.Version, "500"))
	if code != 200 || !strings.Contains(body, "Budget of promo: raise by ops.jane; it is ACTIVE, max cost 500 AUD") || strings.Contains(body, `id="resume-form"`) {
		t.Fatalf("raise: %d %.5000s", code, body)
	}
	got, _ := e.rt.Store.BudgetGet(ctx, "bu-syd", "promo")
	if got.MaxCost != 500 || got.Status != store.BudgetActive {
		t.Fatalf("after raise: %+v", got)
	}
	audit, _ := e.rt.Store.BudgetAuditList(ctx, "bu-syd", "promo", 5)
	if len(audit) == 0 || audit[0].Action != "SET_MAX_COST" || audit[0].Operator != "ops.jane" || audit[0].Reason != "approved by finance" {
		t.Fatalf("audit: %+v", audit)
	}
	if !strings.Contains(body, "<td>SET_MAX_COST</td><td>ops.jane</td><td>approved by finance</td>") {
		t.Fatalf("the audit is not shown: %.5000s", body)
	}
	if code, body := post(values("resume", got.Version, "")); code != 409 || !strings.Contains(body, "The budget is not paused") {
		t.Fatalf("resume of an active budget: %d %.3000s", code, body)
	}
}

// TestBudgetCreateForm: the budget page of a campaign without a budget offers "new budget"
// (action=create), which goes through budget.Service.CreateBudget, the service of PUT
// /api/budgets/campaigns/{id} without If-Match: a bad maxCost or currency 422 naming the
// member and keeping the draft, a campaign the unit does not have 422 naming campaignId, no
// operator 422, another unit 404, a cookie session's post without CSRF 403 — none creates
// anything. The create is audited with the operator; a second create is 409 showing the
// budget.
func TestBudgetCreateForm(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	ensureCampaign(t, e, "bu-syd", "welcome")
	body, doc := e.page(t, "/api/console/budgets?businessUnitId=bu-syd&campaignId=welcome", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, "No budget for that campaign.") || !strings.Contains(body, `id="create-budget-form"`) || !strings.Contains(body, `id="bgc-c" name="campaignId" value="welcome"`) {
		t.Fatalf("page: %.5000s", body)
	}
	values := func(id, max, cur string) url.Values {
		return url.Values{"action": {"create"}, "businessUnitId": {"bu-syd"}, "campaignId": {id}, "maxCost": {max}, "currency": {cur},
			"operator": {"ops.jane"}, "reason": {"launch"}}
	}
	post := e.bearerPoster(t, "/api/console/budgets")
	if code, body := post(values("welcome", "10.00", "AUD")); code != 422 || !strings.Contains(body, "maxCost") || !strings.Contains(body, `id="bgc-cur" name="currency" value="AUD"`) {
		t.Fatalf("bad maxCost: %d %.5000s", code, body)
	}
	if code, body := post(values("welcome", "1000", "dollars")); code != 422 || !strings.Contains(body, "<li>currency:") || !strings.Contains(body, `id="bgc-max" name="maxCost" value="1000"`) {
		t.Fatalf("bad currency: %d %.5000s", code, body)
	}
	if code, body := post(values("welcom", "1000", "AUD")); code != 422 || !strings.Contains(body, "<li>campaignId:") {
		t.Fatalf("a campaign the unit lacks: %d %.5000s", code, body)
	}
	noOp := values("welcome", "1000", "AUD")
	noOp.Del("operator")
	if code, body := post(noOp); code != 422 || !strings.Contains(body, "operator") {
		t.Fatalf("no operator: %d %.3000s", code, body)
	}
	e.refusesOutOfScopeAndWithoutCSRF(t, "/api/console/budgets", values("welcome", "1000", "AUD"))
	if _, err := e.rt.Store.BudgetGet(ctx, "bu-syd", "welcome"); err == nil {
		t.Fatal("a refused create made a budget")
	}
	code, body := post(values("welcome", "1000", "AUD"))
	if code != 200 || !strings.Contains(body, "Budget of welcome: create by ops.jane; it is ACTIVE, max cost 1000 AUD (version 1).") ||
		!strings.Contains(body, `id="raise-form"`) || strings.Contains(body, `id="create-budget-form"`) {
		t.Fatalf("create: %d %.5000s", code, body)
	}
	got, err := e.rt.Store.BudgetGet(ctx, "bu-syd", "welcome")
	if err != nil || got.MaxCost != 1000 || got.Currency != "AUD" || got.Status != store.BudgetActive {
		t.Fatalf("created: %+v %v", got, err)
	}
	if audit, _ := e.rt.Store.BudgetAuditList(ctx, "bu-syd", "welcome", 5); len(audit) != 1 || audit[0].Operator != "ops.jane" || audit[0].Reason != "launch" {
		t.Fatalf("audit: %+v", audit)
	}
	if code, body := post(values("welcome", "5000", "AUD")); code != 409 || !strings.Contains(body, "That campaign has a budget") || !strings.Contains(body, `id="raise-form"`) {
		t.Fatalf("create again: %d %.5000s", code, body)
	}
	if got, _ := e.rt.Store.BudgetGet(ctx, "bu-syd", "welcome"); got.MaxCost != 1000 || got.Version != 1 {
		t.Fatalf("the second create changed the budget: %+v", got)
	}
}
