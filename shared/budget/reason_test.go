package budget_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/money"
)

// The budget actions take the one audit rule for reasons (automation.CheckReasonText): a
// reason with a NUL, a right-to-left override or more than MaxReasonChars characters is
// refused with CodeInvalidInput on "reason" and changes nothing; new lines are allowed and an
// empty reason is allowed (the reason is optional on budgets).
func TestBudgetReasonsTakeTheAuditRule(t *testing.T) {
	ctx := context.Background()
	bad := map[string]string{
		"NUL":      "raised\x00by ops",
		"RLO":      "raised \u202Eby ops",
		"escape":   "raised \x1b[31m",
		"too long": strings.Repeat("é", automation.MaxReasonChars+1),
	}
	for name, reason := range bad {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, 1000)
			before, err := e.svc.GetView(ctx, "bu-1", "c1")
			if err != nil {
				t.Fatal(err)
			}
			wantInvalid := func(action string, err error) {
				t.Helper()
				var inv *automation.Error
				if !errors.As(err, &inv) || inv.Code != automation.CodeInvalidInput || !strings.Contains(err.Error(), "reason") {
					t.Fatalf("%s with a %s reason: got %v, want CodeInvalidInput on reason", action, name, err)
				}
			}
			_, err = e.svc.CreateBudget(ctx, "bu-1", "c2", budget.BudgetInput{Currency: "USD", MaxCost: 500, Reason: reason}, "ops")
			wantInvalid("create", err)
			_, err = e.svc.SetMaxCost(ctx, "bu-1", "c1", budget.BudgetInput{MaxCost: 2000, Reason: reason}, before.Version, "ops")
			wantInvalid("maxCost change", err)
			_, err = e.svc.Resume(ctx, "bu-1", "c1", before.Version, "ops", reason)
			wantInvalid("resume", err)
			after, err := e.svc.GetView(ctx, "bu-1", "c1")
			if err != nil {
				t.Fatal(err)
			}
			if after.Version != before.Version || after.MaxCost != before.MaxCost {
				t.Fatalf("a refused action changed the budget: %+v -> %+v", before, after)
			}
			if _, err := e.svc.GetView(ctx, "bu-1", "c2"); err == nil {
				t.Fatal("a refused create made a budget")
			}
		})
	}
	t.Run("multi-line and empty reasons are accepted", func(t *testing.T) {
		e := newEnv(t, 1000)
		v, err := e.svc.GetView(ctx, "bu-1", "c1")
		if err != nil {
			t.Fatal(err)
		}
		if v, err = e.svc.SetMaxCost(ctx, "bu-1", "c1", budget.BudgetInput{MaxCost: money.Minor(2000), Reason: "ticket 42\n\tapproved"}, v.Version, "ops"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.CreateBudget(ctx, "bu-1", "c2", budget.BudgetInput{Currency: "USD", MaxCost: 500}, "ops"); err != nil {
			t.Fatal(err)
		}
	})
}
