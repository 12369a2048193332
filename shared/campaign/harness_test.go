package campaign_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlite"
)

var t0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// rig is one campaign runtime over a fresh SQLite store, a manual clock and simulated
// providers: "sim" (dedupes, answers lookups), "lookup" (no dedupe, lookups), "plain" (neither),
// and the "log" channel.
type rig struct {
	t          testing.TB
	st         store.Store
	clock      *automation.ManualClock
	providers  *campaign.Providers
	catalog    *campaign.Catalog
	dispatcher *campaign.Dispatcher
	worker     *campaign.Worker
	projection *campaign.Projection
	sims       map[string]*providersim.Server
	logged     []delivery.Message
	mu         sync.Mutex
}

func newRig(t testing.TB, cfg campaign.ProviderConfig) *rig {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r := &rig{t: t, st: st, clock: automation.NewManualClock(t0), sims: map[string]*providersim.Server{}}
	r.providers = campaign.NewProviders(r.clock)
	types := []string{"TOP_UP", "ADD_DATA", "ADD_POINTS", "RENEW_LAOTV"}
	for name, c := range map[string]providersim.Config{"sim": {Dedupe: true, Lookup: true}, "lookup": {Lookup: true}, "plain": {}} {
		s := providersim.New(c)
		if err := s.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		r.sims[name] = s
		r.providers.Add(name, &campaign.HTTPProvider{BaseURL: s.URL(), Client: &http.Client{Transport: &http.Transport{}}, Dedupe: c.Dedupe, HasLookup: c.Lookup, ActionTypes: types}, cfg)
	}
	r.providers.Add("log", &campaign.ChannelProvider{Name: "log", Clock: r.clock, Channel: delivery.FuncChannel(func(_ context.Context, m delivery.Message) (string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.logged = append(r.logged, m)
		return "log-" + m.DeliveryKey, nil
	})}, cfg)
	if r.catalog, err = campaign.NewCatalog(campaign.BuiltinActionTypes(), r.providers); err != nil {
		t.Fatal(err)
	}
	r.dispatcher = &campaign.Dispatcher{Store: st, Clock: r.clock}
	r.worker = &campaign.Worker{Store: st, Clock: r.clock, Providers: r.providers, Lease: time.Minute}
	r.projection = &campaign.Projection{Store: st, Clock: r.clock}
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
	r.t.Helper()
	if err := r.catalog.Check(def); err != nil {
		r.t.Fatalf("definition: %v", err)
	}
	raw, _ := json.Marshal(def)
	c, err := r.st.CampaignSave(context.Background(), store.CampaignSaveParams{Campaign: store.Campaign{BusinessUnitID: "bu-1", CampaignID: id,
		Name: def.Name, Status: def.Status, RunID: runID, Triggers: def.Triggers, DefinitionJSON: string(raw)}, Now: r.clock.Now()})
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

func event(id, customer string) []byte {
	return fmt.Appendf(nil, `{"specversion":"1.0","id":%q,"source":"/app","type":"SignedUp","businessunitid":"bu-1","customerid":%q,"data":{}}`, id, customer)
}

// fire hands the SignedUp event id of customer (event) to the dispatcher, failing t on an
// error.
func (r *rig) fire(t testing.TB, id, customer string) {
	t.Helper()
	if _, err := r.dispatcher.HandleEvent(context.Background(), event(id, customer)); err != nil {
		t.Fatal(err)
	}
}

// pump publishes the outbox the way the relay does and hands each message to its consumer
// (commands → worker, results → dispatcher, facts → projection) until nothing is left.
// It returns every fact message body it delivered.
func (r *rig) pump() (facts [][]byte) {
	r.t.Helper()
	ctx := context.Background()
	for range 1000 {
		msgs, err := r.st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
		if err != nil {
			r.t.Fatal(err)
		}
		if len(msgs) == 0 {
			return facts
		}
		var ids []int64
		for _, m := range msgs {
			switch m.Destination {
			case topology.CampaignCommandsQueue:
				if err := r.worker.Handle(ctx, m.Body); err != nil {
					r.t.Fatalf("worker: %v", err)
				}
			case topology.CampaignResultsQueue:
				if _, err := r.dispatcher.HandleResult(ctx, m.Body); err != nil {
					r.t.Fatalf("dispatcher: %v", err)
				}
			case topology.CampaignFactsTopic:
				facts = append(facts, m.Body)
				if err := r.projection.Handle(ctx, m.Body); err != nil {
					r.t.Fatalf("projection: %v", err)
				}
			}
			ids = append(ids, m.ID)
		}
		if err := r.st.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: ids, Now: r.clock.Now()}); err != nil {
			r.t.Fatal(err)
		}
	}
	r.t.Fatal("pump did not settle")
	return nil
}

// settle pumps and sweeps, moving the clock by step, until nothing is due or rounds run out.
func (r *rig) settle(step time.Duration, rounds int) {
	r.t.Helper()
	for range rounds {
		r.pump()
		n, err := r.worker.Sweep(context.Background(), 100)
		if err != nil {
			r.t.Fatal(err)
		}
		if n == 0 {
			r.clock.Advance(step)
		}
	}
	r.pump()
}

func (r *rig) commands(exe string) []store.CampaignCommand {
	r.t.Helper()
	c, err := r.st.CampaignCommandsOf(context.Background(), exe)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

func (r *rig) execution(exe string) store.CampaignExecution {
	r.t.Helper()
	e, err := r.st.CampaignExecutionGet(context.Background(), exe)
	if err != nil {
		r.t.Fatal(err)
	}
	return e
}

func statuses(cs []store.CampaignCommand) []store.CommandStatus {
	var out []store.CommandStatus
	for _, c := range cs {
		out = append(out, c.Status)
	}
	return out
}

// appEvent is the identity (events.Identity) of event(id, …): source "/app".
func appEvent(id string) string { return events.Identity("/app", id) }
