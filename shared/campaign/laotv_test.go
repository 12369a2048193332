package campaign_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
)

// RENEW_LAOTV (seed 002's LaoTV renewal) is a catalog action type: its renewal-percent
// parameters are schema-checked at save, naming the member, and a configured HTTP provider
// that declares the type serves it like ADD_UPOINT: applied once, the command SUCCEEDED.
func TestRenewLaoTVIsACheckedActionServedByAnHTTPProvider(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	def := func(params string) campaign.Definition {
		return campaign.Definition{Name: "LaoTV renewal", Status: store.CampaignActive, Triggers: []string{"SignedUp"},
			Actions: []campaign.Action{{Key: "renew", Type: "RENEW_LAOTV", Provider: "sim", Params: json.RawMessage(params)}}}
	}
	for params, field := range map[string]string{
		`{"renewalPercent":50}`:                                            "actions[0].params",
		`{"packageCode":"LAOTV_BASIC"}`:                                    "actions[0].params",
		`{"packageCode":"LAOTV_BASIC","renewalPercent":0}`:                 "actions[0].params.renewalPercent",
		`{"packageCode":"LAOTV_BASIC","renewalPercent":101}`:               "actions[0].params.renewalPercent",
		`{"packageCode":"LAOTV_BASIC","renewalPercent":12.5}`:              "actions[0].params.renewalPercent",
		`{"packageCode":"LAOTV_BASIC","renewalPercent":5e1}`:               "actions[0].params.renewalPercent",
		`{"packageCode":"laotv basic","renewalPercent":50}`:                "actions[0].params.packageCode",
		`{"packageCode":"LAOTV_BASIC","renewalPercent":50,"x":1}`:          "actions[0].params",
		`{"packageCode":"LAOTV_BASIC","renewalPercent":50,"periodDays":0}`: "actions[0].params.periodDays",
	} {
		err := r.Catalog.Check(def(params))
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || !strings.HasPrefix(ae.Field, field) {
			t.Errorf("Check(%s) = %v (field %q), want InvalidInput at %s", params, err, fieldOf(err), field)
		}
	}
	// A provider that does not declare the type cannot serve it.
	other := def(`{"packageCode":"LAOTV_BASIC","renewalPercent":50}`)
	other.Actions[0].Provider = "log"
	if err := r.Catalog.Check(other); err == nil {
		t.Error("the log channel was accepted as a RENEW_LAOTV provider")
	}
	r.save("laotv", def(`{"packageCode":"LAOTV_BASIC","renewalPercent":50,"periodDays":30}`), "r1")
	if _, err := r.Dispatcher.HandleEvent(context.Background(), event("evt-1", "cust-1")); err != nil {
		t.Fatal(err)
	}
	r.Pump()
	exe := campaign.ExecutionID("bu-1", "laotv", "r1", "cust-1", appEvent("evt-1"))
	cs := r.Commands(exe)
	if len(cs) != 1 || cs[0].Status != store.CommandSucceeded || r.Execution(exe).Status != store.ExecutionCompleted {
		t.Fatalf("commands %v, execution %+v", statuses(cs), r.Execution(exe))
	}
	if n := r.sims["sim"].Applied(cs[0].EffectKey); n != 1 {
		t.Fatalf("applied %d times, want 1", n)
	}
}
