package campaign_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
)

// A paid action's amounts and counts are whole numbers written as integers, and a top-up's
// currency is an ISO 4217 currency: JSON Schema's "integer" alone also admits 1.0 and 1e3,
// and the pattern ^[A-Z]{3}$ admits "ZZZ". Such a definition must be refused naming the
// member (422), not stored to fail, or pay the wrong amount, when a provider reads it.
func TestParamsNumbersAreIntegerLiteralsAndCurrenciesAreISO(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	cases := []struct {
		name, params string
		action       int
		field        string
	}{
		{"fraction zero", `{"amountMinor":500.0,"currency":"AUD"}`, 1, "actions[1].params.amountMinor"},
		{"exponent", `{"amountMinor":5e2,"currency":"AUD"}`, 1, "actions[1].params.amountMinor"},
		{"upper exponent", `{"amountMinor":5E+2,"currency":"AUD"}`, 1, "actions[1].params.amountMinor"},
		{"unknown currency", `{"amountMinor":500,"currency":"ZZZ"}`, 1, "actions[1].params.currency"},
		{"no-currency code", `{"amountMinor":500,"currency":"XXX"}`, 1, "actions[1].params.currency"},
		{"data exponent", `{"packageCode":"WELCOME_1GB","dataMb":1.024e3}`, 2, "actions[2].params.dataMb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := threeSteps("sim")
			d.Actions[c.action].Params = json.RawMessage(c.params)
			err := r.catalog.Check(d)
			var ae *automation.Error
			if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || !strings.HasPrefix(ae.Field, c.field) {
				t.Fatalf("Check(%s) = %v (field %q), want InvalidInput at %s", c.params, err, fieldOf(err), c.field)
			}
		})
	}
	// Plain integers and real currencies (VND has no minor unit) still pass.
	d := threeSteps("sim")
	d.Actions[1].Params = json.RawMessage(`{"amountMinor":50000,"currency":"VND"}`)
	if err := r.catalog.Check(d); err != nil {
		t.Fatalf("a good top-up refused: %v", err)
	}
}

// The refusal says what is wrong with the member, in the words of the format.
func TestParamsFormatErrorNamesTheProblem(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	d := threeSteps("sim")
	d.Actions[1].Params = json.RawMessage(`{"amountMinor":5e2,"currency":"AUD"}`)
	if err := r.catalog.Check(d); err == nil || !strings.Contains(err.Error(), "plain integer") {
		t.Fatalf("Check = %v, want the plain-integer refusal", err)
	}
}
