package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/money"
)

// Budget inputs (docs/budgets.md#replay):
//
//	"billing": {
//	  "balances": [{"businessUnitId": "bu-1", "currency": "USD", "available": "100000"}],
//	  "pricePolicies": [{"businessUnitId": "bu-1", "actionType": "ADD_UPOINT",
//	                     "policy": {"formula": "FIXED", "rate": "10", "unit": "POINT", "transferType": "POINT_FEE", "currency": "USD"}}],
//	  "budgets": [{"businessUnitId": "bu-1", "campaignId": "welcome", "currency": "USD", "maxCost": "30"}]}
//	    the simulated billing server (shared/budget/billingsim, on 127.0.0.1, under the
//	    scenario's clock) with these balances, and the price policies and budgets stored
//	    before the first input. A scenario without "billing" runs its campaigns without
//	    budgets (every action free), as campaign scenarios did before budgets existed.
//	{"at": "…", "budget": {"businessUnitId": "bu-1", "campaignId": "welcome", "maxCost": "50",
//	    "reason": "…"}}
//	    sets the campaign's maxCost as support would (guarded by the version it reads) and
//	    prints a "budget" line with the budget after the change, or a "rejected" line.
//
// Amounts are integer minor units, as strings or integers.

// Billing is a scenario's "billing" section.
type Billing struct {
	Balances []struct {
		BusinessUnitID string      `json:"businessUnitId"`
		Currency       string      `json:"currency"`
		Available      money.Minor `json:"available"`
	} `json:"balances"`
	PricePolicies []struct {
		BusinessUnitID string             `json:"businessUnitId"`
		ActionType     string             `json:"actionType"`
		Policy         budget.PolicyInput `json:"policy"`
	} `json:"pricePolicies"`
	Budgets []struct {
		BusinessUnitID string      `json:"businessUnitId"`
		CampaignID     string      `json:"campaignId"`
		Currency       string      `json:"currency"`
		MaxCost        money.Minor `json:"maxCost"`
	} `json:"budgets"`
}

// BudgetInput is a "budget" input: a new maxCost for one campaign.
type BudgetInput struct {
	BusinessUnitID string      `json:"businessUnitId"`
	CampaignID     string      `json:"campaignId"`
	MaxCost        money.Minor `json:"maxCost"`
	Reason         string      `json:"reason,omitempty"`
}

// BudgetLine is the output line of a budget input.
type BudgetLine struct {
	Kind         string `json:"kind"` // "budget"
	At           string `json:"at"`
	Input        int    `json:"input"`
	CampaignID   string `json:"campaignId"`
	MaxCost      string `json:"maxCost"`
	Cost         string `json:"cost"`
	ReservedCost string `json:"reservedCost"`
	Status       string `json:"status"`
}

func parseBilling(raw json.RawMessage, bad func(string, ...any)) *Billing {
	if len(raw) == 0 {
		return nil
	}
	var b Billing
	if err := strictDecode(raw, &b); err != nil {
		bad("billing: %v", err)
		return nil
	}
	for i, bal := range b.Balances {
		if bal.BusinessUnitID == "" || bal.Available < 0 {
			bad("billing.balances[%d]: a businessUnitId and an available amount >= 0 are required", i)
		}
		if _, err := money.ParseCurrency(bal.Currency); err != nil {
			bad("billing.balances[%d].currency: %v", i, err)
		}
	}
	return &b
}

func parseBudgetInput(i int, raw json.RawMessage, bad func(string, ...any)) *BudgetInput {
	var in BudgetInput
	if err := strictDecode(raw, &in); err != nil {
		bad("inputs[%d].budget: %v", i, err)
		return nil
	}
	if in.BusinessUnitID == "" || in.CampaignID == "" {
		bad("inputs[%d].budget: businessUnitId and campaignId are required", i)
	}
	return &in
}

// BillingObserver is implemented by a Driver that checks the simulated billing server (the
// simulator's budget invariants and billing faults): it gets the server before the first
// process starts, when the scenario has "billing".
type BillingObserver interface {
	Billing(*billingsim.Server)
}

// startBilling starts the simulated billing server of a scenario with billing and points
// the runtime at it; the returned stop closes it.
func (r *runner) startBilling() func() {
	if r.sc.billing == nil {
		return func() {}
	}
	sim := billingsim.New(r.clock)
	for _, b := range r.sc.billing.Balances {
		sim.SetBalance(b.BusinessUnitID, b.Currency, b.Available)
	}
	if bo, ok := r.driver.(BillingObserver); ok {
		bo.Billing(sim)
	}
	srv := httptest.NewServer(sim)
	r.appOpts.Billing = &billing.Client{BaseURL: srv.URL, Timeout: 5 * time.Second}
	return srv.Close
}

// setUpBilling stores the scenario's price policies and budgets (once, before any input).
func (r *runner) setUpBilling(ctx context.Context) error {
	if r.sc.billing == nil {
		return nil
	}
	for i, p := range r.sc.billing.PricePolicies {
		if _, err := r.e.Budget.PutPolicy(ctx, p.BusinessUnitID, p.ActionType, p.Policy, 0, "replay"); err != nil {
			return fmt.Errorf("billing.pricePolicies[%d]: %w", i, err)
		}
	}
	// The budgets are stored before any input, so before the campaigns the inputs save later:
	// a forward reference the budget service would refuse (budget.Service.Campaigns). The
	// scenario's own campaigns stand in for the check: a budget must name one of them.
	svc := *r.e.Budget
	svc.Campaigns = nil
	planned := map[[2]string]bool{}
	for _, in := range r.sc.Inputs {
		var c struct {
			CampaignID     string `json:"campaignId"`
			BusinessUnitID string `json:"businessUnitId"`
		}
		if len(in.Campaign) > 0 && json.Unmarshal(in.Campaign, &c) == nil {
			planned[[2]string{c.BusinessUnitID, c.CampaignID}] = true
		}
	}
	for i, b := range r.sc.billing.Budgets {
		if !planned[[2]string{b.BusinessUnitID, b.CampaignID}] {
			return fmt.Errorf("billing.budgets[%d]: campaignId: campaign %q of business unit %q is not among the scenario's campaign inputs", i, b.CampaignID, b.BusinessUnitID)
		}
		if _, err := svc.CreateBudget(ctx, b.BusinessUnitID, b.CampaignID, budget.BudgetInput{Currency: b.Currency, MaxCost: b.MaxCost}, "replay"); err != nil {
			return fmt.Errorf("billing.budgets[%d]: %w", i, err)
		}
	}
	return nil
}

func (r *runner) budgetInput(ctx context.Context, idx int) error {
	in := r.sc.Inputs[idx]
	b := in.Budget
	at := in.At.UTC().Format(time.RFC3339)
	cur, err := r.e.Budget.GetView(ctx, b.BusinessUnitID, b.CampaignID)
	if err == nil {
		cur, err = r.e.Budget.SetMaxCost(ctx, b.BusinessUnitID, b.CampaignID, budget.BudgetInput{Currency: cur.Currency, MaxCost: b.MaxCost, Reason: b.Reason},
			cur.Version, "replay")
	}
	if err != nil {
		r.rejected++
		return r.enc.Encode(RejectedLine{Kind: "rejected", At: at, Input: idx, Error: err.Error()})
	}
	return r.enc.Encode(BudgetLine{Kind: "budget", At: at, Input: idx, CampaignID: b.CampaignID, MaxCost: cur.MaxCost.String(),
		Cost: cur.Cost.String(), ReservedCost: cur.ReservedCost.String(), Status: cur.Status})
}
