package campaign_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/campaigntest"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// event is the SignedUp event id of customer in bu-1; appEvent its identity.
var event, appEvent = campaigntest.SignedUp, campaigntest.AppEvent

// rig is one campaign runtime (campaigntest.Rig) over a fresh SQLite store, a manual clock
// and simulated providers: "sim" (dedupes, answers lookups), "lookup" (no dedupe, lookups),
// "plain" (neither), and the "log" channel, whose messages it keeps in logged. Settle pumps:
// each message goes to its consumer.
type rig struct {
	*campaigntest.Rig
	sims   map[string]*providersim.Server
	logged []delivery.Message
	mu     sync.Mutex
}

func newRig(t testing.TB, cfg campaign.ProviderConfig) *rig {
	t.Helper()
	st := sqlitetest.Open(t)
	r := &rig{sims: map[string]*providersim.Server{}}
	r.Rig = campaigntest.New(t, st, t0, func(cr *campaigntest.Rig) {
		for name, c := range map[string]providersim.Config{"sim": {Dedupe: true, Lookup: true}, "lookup": {Lookup: true}, "plain": {}} {
			r.sims[name] = campaigntest.StartSim(t, c)
			cr.Providers.Add(name, campaigntest.HTTPProvider(r.sims[name], c, "TOP_UP", "ADD_DATA", "ADD_POINTS", "RENEW_LAOTV"), cfg)
		}
		cr.Providers.Add("log", &campaign.ChannelProvider{Name: "log", Clock: cr.Clock, Channel: delivery.FuncChannel(func(_ context.Context, m delivery.Message) (string, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.logged = append(r.logged, m)
			return "log-" + m.DeliveryKey, nil
		})}, cfg)
	})
	r.Flush = func() { r.Pump() }
	return r
}

func threeSteps(provider string) campaign.Definition {
	return campaign.Definition{Name: "Welcome pack", Status: store.CampaignActive, Triggers: []string{"SignedUp"},
		Actions: []campaign.Action{
			{Key: "greet", Type: "NOTIFICATION_LOG", Provider: "log", Params: json.RawMessage(`{"subject":"Hi","text":"Welcome"}`)},
			{Key: "topup", Type: "TOP_UP", Provider: provider, Params: json.RawMessage(`{"amountMinor":500,"currency":"AUD"}`)},
			{Key: "data", Type: "ADD_DATA", Provider: provider, Params: json.RawMessage(`{"packageCode":"WELCOME_1GB","dataMb":1024}`), When: campaign.WhenSucceeded},
		}}
}

// save stores def as campaign id of bu-1 (checked by the catalog first).
func (r *rig) save(id string, def campaign.Definition, runID string) store.Campaign {
	r.T.Helper()
	if err := r.Catalog.Check(def); err != nil {
		r.T.Fatalf("definition: %v", err)
	}
	raw, _ := json.Marshal(def)
	c, err := r.Store.CampaignSave(context.Background(), store.CampaignSaveParams{Campaign: store.Campaign{BusinessUnitID: "bu-1", CampaignID: id,
		Name: def.Name, Status: def.Status, RunID: runID, Triggers: def.Triggers, DefinitionJSON: string(raw)}, Now: r.Clock.Now()})
	if err != nil {
		r.T.Fatal(err)
	}
	return c
}

// topUpOnly saves campaign id (run r1) as threeSteps(provider)'s top-up alone and returns
// its definition.
func (r *rig) topUpOnly(id, provider string) campaign.Definition {
	r.T.Helper()
	d := threeSteps(provider)
	d.Actions = d.Actions[1:2]
	r.save(id, d, "r1")
	return d
}

// faults sets the faults of the simulated provider named provider.
func (r *rig) faults(provider string, f providersim.Faults) {
	r.T.Helper()
	if err := r.sims[provider].SetFaults(f); err != nil {
		r.T.Fatal(err)
	}
}

// fireOne fires SignedUp evt-1 of cust-1 and returns the id of the execution it starts in
// campaign id (run r1).
func (r *rig) fireOne(id string) string {
	r.T.Helper()
	r.Fire(r.T, "evt-1", "cust-1")
	return campaign.ExecutionID("bu-1", id, "r1", "cust-1", appEvent("evt-1"))
}

// welcomeThree saves campaign welcome (run r1) as threeSteps("sim") and fires SignedUp events
// e1, e2 and e3 of customers cust-e1, cust-e2 and cust-e3.
func (r *rig) welcomeThree() {
	r.T.Helper()
	r.save("welcome", threeSteps("sim"), "r1")
	for _, id := range []string{"e1", "e2", "e3"} {
		r.Fire(r.T, id, "cust-"+id)
	}
}

func statuses(cs []store.CampaignCommand) []store.CommandStatus {
	var out []store.CommandStatus
	for _, c := range cs {
		out = append(out, c.Status)
	}
	return out
}
