package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/campaigntest"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
)

// A provider declared only in AUTOMATION_CAMPAIGN_PROVIDERS (no app.Options) serves a
// campaign: the runtime `serve` and the Function App build calls the simulated provider over
// real HTTP with the configured bearer token, the action applies once and the chain ends
// SUCCEEDED. Without the token the same provider refuses every call (401) and the command
// FAILS, so the token is what made it pass.
func TestConfiguredCampaignProviderRunsOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, tokens string
		want         store.CommandStatus
		applied      int
	}{
		{"with its token", `{"telco":"sim-token-0123456789"}`, store.CommandSucceeded, 1},
		{"without a token", "", store.CommandFailed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := campaigntest.StartSim(t, providersim.Config{Dedupe: true, Lookup: true, Token: "sim-token-0123456789"})
			env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(),
				"AUTOMATION_CAMPAIGN_PROVIDERS": `[{"name":"telco","baseUrl":"` + sim.URL() + `","actionTypes":["TOP_UP"],"dedupe":true,"lookup":true,
					"concurrency":2,"ratePerSecond":50,"timeoutSeconds":5}]`,
				"AUTOMATION_CAMPAIGN_PROVIDER_TOKENS": tc.tokens}
			cfg, err := config.Load(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			clock := automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC))
			// TOP_UP is priced: this test is about the provider, so the budget seams are off.
			rt, err := app.Open(context.Background(), cfg, app.Options{Clock: clock, LogOutput: io.Discard, Seed: 7, Log: quietLog,
				WithoutBudgets: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rt.Close() })
			if _, err := rt.LocalHost("../../functions", cfg, true, quietLog); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// A campaign's trigger must be a registered event type (campaign.Admin.KnownTriggers).
			if _, err := rt.Registry.Save(ctx, gateway.SaveParams{EventType: "SignedUp", Operator: "test",
				Definition: []byte(`{"eventType":"SignedUp","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
				t.Fatal(err)
			}
			var def campaign.Definition
			if err := json.Unmarshal([]byte(`{"name":"Top up","status":"ACTIVE","triggers":["SignedUp"],
				"actions":[{"key":"topup","type":"TOP_UP","provider":"telco","params":{"amountMinor":500,"currency":"AUD"}}]}`), &def); err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Campaigns.Save(ctx, "bu-1", "welcome", def, nil); err != nil {
				t.Fatal(err)
			}
			n, err := rt.Campaign.Dispatcher.HandleEvent(ctx, []byte(`{"specversion":"1.0","id":"evt-1","type":"SignedUp","source":"/crm",
				"businessunitid":"bu-1","customerid":"cust-1"}`))
			if err != nil || n != 1 {
				t.Fatalf("HandleEvent = %d, %v", n, err)
			}
			for range 5 {
				if _, err := rt.Tick(ctx); err != nil {
					t.Fatal(err)
				}
			}
			st := sim.Stats()
			if st.Applied != tc.applied {
				t.Fatalf("applied %d times, want %d (%+v)", st.Applied, tc.applied, st)
			}
			if tc.applied == 0 && st.Unauthorized == 0 {
				t.Fatalf("the provider was never called: %+v", st)
			}
			cmds, err := rt.Store.CampaignListUnknown(ctx, "bu-1", "", 0, 10)
			if err != nil || len(cmds) != 0 {
				t.Fatalf("unknown commands: %v %v", cmds, err)
			}
			var status string
			db := rt.Store.(interface{ DB() *sql.DB }).DB()
			if err := db.QueryRow(`SELECT Status FROM CampaignCommand WHERE BusinessUnitId = 'bu-1'`).Scan(&status); err != nil {
				t.Fatal(err)
			}
			if status != string(tc.want) {
				t.Fatalf("command %s, want %s", status, tc.want)
			}
		})
	}
}

// A configured provider whose action type no campaign knows, or whose name the caller's
// Options use too, stops app.Open with an error naming it.
func TestConfiguredCampaignProviderRefusedByOpen(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_CAMPAIGN_PROVIDERS": `[{"name":"telco","baseUrl":"https://t.example.test","actionTypes":["TOP_UPP"]}]`}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.CampaignProvidersFromConfig(cfg, nil); err == nil || !strings.Contains(err.Error(), `unknown action type "TOP_UPP"`) {
		t.Fatalf("err = %v", err)
	}
	cfg.CampaignProviders[0].ActionTypes = []string{"TOP_UP"}
	if _, err := app.CampaignProvidersFromConfig(cfg, map[string]app.CampaignProvider{"telco": {}}); err == nil || !strings.Contains(err.Error(), `"telco" is registered by the caller too`) {
		t.Fatalf("err = %v", err)
	}
	got, err := app.CampaignProvidersFromConfig(cfg, map[string]app.CampaignProvider{"other": {}})
	if err != nil || len(got) != 2 {
		t.Fatalf("%v %v", got, err)
	}
	if p, ok := got["telco"].Provider.(*campaign.HTTPProvider); !ok || p.BaseURL != "https://t.example.test" || !p.Serves("TOP_UP") {
		t.Fatalf("%+v", got["telco"])
	}
}
