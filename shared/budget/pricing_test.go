package budget_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
)

func policy(t *testing.T, in budget.PolicyInput) budget.Policy {
	t.Helper()
	sp, err := budget.ValidatePolicy("bu-1", "ADD_SMS", in, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := budget.PolicyFromStore(sp)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFeeFormulasRoundOnceHalfUp(t *testing.T) {
	cases := []struct {
		in   budget.PolicyInput
		qty  string
		want money.Minor
		cur  string
	}{
		{budget.PolicyInput{Formula: "FIXED", Rate: "250", Currency: "USD"}, "7", 250, "USD"},
		{budget.PolicyInput{Formula: "PER_UNIT", Rate: "12.5", Currency: "USD"}, "1", 13, "USD"},    // 12.5 → 13
		{budget.PolicyInput{Formula: "PER_UNIT", Rate: "12.5", Currency: "USD"}, "3", 38, "USD"},    // 37.5 → 38, not 3 × 13 = 39
		{budget.PolicyInput{Formula: "PER_UNIT", Rate: "0.333", Currency: "USD"}, "3", 1, "USD"},    // 0.999 → 1
		{budget.PolicyInput{Formula: "PERCENT", Rate: "2.5", Currency: "VND"}, "10000", 250, "VND"}, // 2.5 % of 10,000
		{budget.PolicyInput{Formula: "PERCENT", Rate: "2.5", Currency: "VND", MinFee: 300}, "10000", 300, "VND"},
		{budget.PolicyInput{Formula: "PERCENT", Rate: "2.5", Currency: "VND", MaxFee: 200}, "10000", 200, "VND"},
		// 1.25 USD (125 cents) converted at 25,000 VND per USD: 31,250 VND, one rounding at the end.
		{budget.PolicyInput{Formula: "FIXED", Rate: "125", Currency: "USD", ConvertTo: "VND", ConversionRate: "25000"}, "", 31250, "VND"},
		// 0.5 cent at 25,001 VND/USD = 125.005 VND → 125 (no rounding to a cent first).
		{budget.PolicyInput{Formula: "PER_UNIT", Rate: "0.5", Currency: "USD", ConvertTo: "VND", ConversionRate: "25001"}, "1", 125, "VND"},
	}
	for i, tc := range cases {
		tc.in.Unit, tc.in.TransferType = "SMS", "SMS_FEE"
		got, err := policy(t, tc.in).Fee(tc.qty)
		if err != nil || got.Minor != tc.want || got.Currency.Code() != tc.cur {
			t.Errorf("case %d: %v %+v, want %d %s", i, err, got, tc.want, tc.cur)
		}
	}
	if _, err := policy(t, budget.PolicyInput{Formula: "PER_UNIT", Rate: "1", Currency: "USD", Unit: "SMS", TransferType: "X"}).Fee("-1"); err == nil {
		t.Error("negative quantity priced")
	}
}

func TestValidatePolicyRefusesBadInput(t *testing.T) {
	good := budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "COMMAND", TransferType: "FEE", Currency: "USD"}
	if _, err := budget.ValidatePolicy("bu-1", "TOP_UP", good, nil); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*budget.PolicyInput) string{
		"unknown action": func(p *budget.PolicyInput) string { return "SEND_PIGEON" },
		"formula":        func(p *budget.PolicyInput) string { p.Formula = "MAGIC"; return "TOP_UP" },
		"negative rate":  func(p *budget.PolicyInput) string { p.Rate = "-1"; return "TOP_UP" },
		"float rate":     func(p *budget.PolicyInput) string { p.Rate = "1e3"; return "TOP_UP" },
		"currency":       func(p *budget.PolicyInput) string { p.Currency = "XYZ"; return "TOP_UP" },
		"min above max":  func(p *budget.PolicyInput) string { p.MinFee, p.MaxFee = 10, 5; return "TOP_UP" },
		"self convert":   func(p *budget.PolicyInput) string { p.ConvertTo, p.ConversionRate = "USD", "1"; return "TOP_UP" },
		"zero rate conv": func(p *budget.PolicyInput) string { p.ConvertTo, p.ConversionRate = "VND", "0"; return "TOP_UP" },
		"no unit":        func(p *budget.PolicyInput) string { p.Unit = ""; return "TOP_UP" },
		// A rate no fee could ever be charged at: refused at save, not at run time (issue 33, item 11).
		"rate 10^30": func(p *budget.PolicyInput) string { p.Rate = "1" + strings.Repeat("0", 30); return "TOP_UP" },
	}
	for name, edit := range bad {
		p := good
		at := edit(&p)
		if _, err := budget.ValidatePolicy("bu-1", at, p, nil); automation.CodeOf(err) != automation.CodeInvalidInput {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The bound itself is accepted.
	atBound := good
	atBound.Rate = "1000000000000000"
	if _, err := budget.ValidatePolicy("bu-1", "TOP_UP", atBound, nil); err != nil {
		t.Errorf("a rate of money.MaxMinor: %v", err)
	}
	// The campaign catalog may know more types.
	if _, err := budget.ValidatePolicy("bu-1", "SEND_PIGEON", good, func(string) bool { return true }); err != nil {
		t.Errorf("custom known types: %v", err)
	}
	if budget.OrderID("cmd-1", 1) != budget.OrderID("cmd-1", 1) || budget.OrderID("cmd-1", 1) == budget.OrderID("cmd-1", 2) ||
		budget.OrderID("cmd-1", 1) == budget.OrderID("cmd-2", 1) {
		t.Error("order ids are not deterministic per command and attempt")
	}
	_ = store.FeeSucceeded
}
