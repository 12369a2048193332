package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
)

// TestBudgetPage: the runtime's console has the budget page; it shows a campaign's budget
// and the unit's WAITING_BUDGET queue, escapes what it prints, and answers 404 for a
// business unit outside the caller's scope.
func TestBudgetPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	ensureCampaign(t, e, "bu-syd", "promo")
	if _, err := e.rt.Budget.CreateBudget(ctx, "bu-syd", "promo", budget.BudgetInput{Currency: "AUD", MaxCost: money.Minor(1234)}, "ops"); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.Store.BudgetWaitPut(ctx, store.BudgetWait{CommandID: "cmd-<1>", BusinessUnitID: "bu-syd", CampaignID: "promo",
		Reason: store.ShortBudget, Amount: 10, Currency: "AUD", Since: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	bearer := []string{"Authorization", "Bearer " + token}
	code, body := e.get(t, http.DefaultClient, "/api/console/budgets?businessUnitId=bu-syd&campaignId=promo", bearer...)
	if code != 200 || !strings.Contains(body, ">Budgets</a>") || !strings.Contains(body, "1234 AUD") || !strings.Contains(body, `id="budget"`) ||
		!strings.Contains(body, "cmd-&lt;1&gt;") || !strings.Contains(body, `<p id="unknown-fees">None.</p>`) {
		t.Fatalf("page: %d %.3000s", code, body)
	}
	code, body = e.get(t, http.DefaultClient, "/api/console/budgets?businessUnitId=bu-syd&campaignId=promo",
		append(bearer, "X-Automation-Business-Units", "bu-nyc")...)
	if code != 404 || strings.Contains(body, "1234") || strings.Contains(body, "cmd-") {
		t.Fatalf("out of scope: %d %.3000s", code, body)
	}
	if code, _ := e.get(t, http.DefaultClient, "/api/console/budgets"); code != 401 {
		t.Fatalf("anonymous: %d", code)
	}
}
