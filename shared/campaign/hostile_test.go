package campaign_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/store"
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
			err := r.Catalog.Check(d)
			var ae *automation.Error
			if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || !strings.HasPrefix(ae.Field, c.field) {
				t.Fatalf("Check(%s) = %v (field %q), want InvalidInput at %s", c.params, err, fieldOf(err), c.field)
			}
		})
	}
	// Plain integers and real currencies (VND has no minor unit) still pass.
	d := threeSteps("sim")
	d.Actions[1].Params = json.RawMessage(`{"amountMinor":50000,"currency":"VND"}`)
	if err := r.Catalog.Check(d); err != nil {
		t.Fatalf("a good top-up refused: %v", err)
	}
}

// The refusal says what is wrong with the member, in the words of the format.
func TestParamsFormatErrorNamesTheProblem(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	d := threeSteps("sim")
	d.Actions[1].Params = json.RawMessage(`{"amountMinor":5e2,"currency":"AUD"}`)
	if err := r.Catalog.Check(d); err == nil || !strings.Contains(err.Error(), "plain integer") {
		t.Fatalf("Check = %v, want the plain-integer refusal", err)
	}
}

// A manual resolution's reason and provider reference are stored in columns of 1000 and 400
// characters on SQL Server: longer ones were stored on SQLite and would fail the update (500)
// on SQL Server. They are refused naming the field, and the UNKNOWN command is left as it is.
func TestResolveBoundsReasonAndProviderRef(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{Timeout: 300 * time.Millisecond})
	r.topUpOnly("c", "plain")
	r.faults("plain", providersim.Faults{Mode: providersim.ModeLoseAnswer})
	r.Fire(t, "evt-1", "cust-1")
	r.Pump()
	exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-1", appEvent("evt-1"))
	c := r.Commands(exe)[0]
	if c.Status != store.CommandUnknown {
		t.Fatalf("after the fault: %s", c.Status)
	}
	admin := &campaign.Admin{Store: r.Store, Catalog: r.Catalog, Clock: r.Clock}
	for _, tc := range []struct{ field, reason, ref string }{
		{"reason", strings.Repeat("r", 1001), ""},
		{"providerRef", "checked with the provider", strings.Repeat("p", 401)},
	} {
		_, err := admin.Resolve(context.Background(), store.CampaignResolveParams{CommandID: c.CommandID, BusinessUnitID: "bu-1",
			ExpectedVersion: c.Version, Status: store.CommandSucceeded, Operator: "jane", Reason: tc.reason, ProviderRef: tc.ref})
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || ae.Field != tc.field {
			t.Fatalf("%s: Resolve = %v, want InvalidInput on %s", tc.field, err, tc.field)
		}
	}
	if after := r.Commands(exe)[0]; after.Status != store.CommandUnknown || after.Version != c.Version {
		t.Fatalf("a refused resolution changed the command: %s v%d", after.Status, after.Version)
	}
	if _, err := admin.Resolve(context.Background(), store.CampaignResolveParams{CommandID: c.CommandID, BusinessUnitID: "bu-1",
		ExpectedVersion: c.Version, Status: store.CommandSucceeded, Operator: "jane", Reason: strings.Repeat("r", 1000), ProviderRef: strings.Repeat("p", 400)}); err != nil {
		t.Fatalf("resolution at the bounds: %v", err)
	}
}

// A campaign's name shows in the console and in audit lines: a NUL, a right-to-left override
// or more than 200 UTF-16 units is refused naming "name" (422), as a unit's and a setting's
// name are, by the one display-name rule.
func TestCampaignNameTakesTheDisplayNameRule(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	for _, name := range []string{"", " ", "welcome\x00", "welcome \u202Eevil", strings.Repeat("n", 201)} {
		d := threeSteps("sim")
		d.Name = name
		err := r.Catalog.Check(d)
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || ae.Field != "name" {
			t.Errorf("Check(name %q) = %v, want InvalidInput at name", name, err)
		}
	}
	d := threeSteps("sim")
	d.Name = "Chào mừng 🎉"
	if err := r.Catalog.Check(d); err != nil {
		t.Fatalf("a good name refused: %v", err)
	}
}
