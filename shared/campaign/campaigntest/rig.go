package campaigntest

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// BusinessUnit is the unit every rig's campaigns, events and budgets belong to.
const BusinessUnit = "bu-1"

// MaxDrainRounds bounds Drain: pages of 100 outbox rows it publishes before it fails the test.
const MaxDrainRounds = 1000

// Rig is one campaign runtime over a test's store and a manual clock. Worker is built with
// a one-minute lease; a test that needs more (a guard, a pause recheck) sets its fields
// before the first message.
type Rig struct {
	T          testing.TB
	Store      store.Store
	Clock      *automation.ManualClock
	Providers  *campaign.Providers
	Catalog    *campaign.Catalog
	Dispatcher *campaign.Dispatcher
	Worker     *campaign.Worker
	Projection *campaign.Projection
	// Flush publishes the outbox between sweeps in Settle; nil: Drain(nil).
	Flush func()
	// BeforeSweep runs in each Settle round after Flush (a budget reconcile, as the
	// OutboxRelay timer runs it); nil: nothing.
	BeforeSweep func(ctx context.Context) error
}

// New builds the runtime over st with the clock at start (UTC); addProviders registers the
// test's providers on r.Providers (r.Clock is set) before the catalog (built from
// campaign.BuiltinActionTypes) is checked against them.
func New(t testing.TB, st store.Store, start time.Time, addProviders func(r *Rig)) *Rig {
	t.Helper()
	r := &Rig{T: t, Store: st, Clock: automation.NewManualClock(start)}
	r.Providers = campaign.NewProviders(r.Clock)
	addProviders(r)
	var err error
	if r.Catalog, err = campaign.NewCatalog(campaign.BuiltinActionTypes(), r.Providers); err != nil {
		t.Fatal(err)
	}
	r.Dispatcher = &campaign.Dispatcher{Store: st, Clock: r.Clock}
	r.Worker = &campaign.Worker{Store: st, Clock: r.Clock, Providers: r.Providers, Lease: time.Minute}
	r.Projection = &campaign.Projection{Store: st, Clock: r.Clock}
	return r
}

// StartSim starts a simulated action provider on 127.0.0.1 and closes it when t ends.
func StartSim(t testing.TB, cfg providersim.Config) *providersim.Server {
	t.Helper()
	s := providersim.New(cfg)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// HTTPProvider is the real HTTP provider in front of s, with s's dedupe and lookup
// capabilities and the action types given, over its own transport (no shared pool).
func HTTPProvider(s *providersim.Server, cfg providersim.Config, actionTypes ...string) *campaign.HTTPProvider {
	return &campaign.HTTPProvider{BaseURL: s.URL(), Client: &http.Client{Transport: &http.Transport{}}, Dedupe: cfg.Dedupe,
		HasLookup: cfg.Lookup, ActionTypes: actionTypes}
}

// SignedUp is a CloudEvents SignedUp event of BusinessUnit: id from source "/app" (its
// identity is AppEvent(id)), for customer.
func SignedUp(id, customer string) []byte {
	return fmt.Appendf(nil, `{"specversion":"1.0","id":%q,"source":"/app","type":"SignedUp","businessunitid":"bu-1","customerid":%q,"data":{}}`, id, customer)
}

// AppEvent is the identity (events.Identity) of SignedUp(id, …): source "/app".
func AppEvent(id string) string { return events.Identity("/app", id) }

// Fire hands SignedUp(id, customer) to the dispatcher, failing t on an error.
func (r *Rig) Fire(t testing.TB, id, customer string) {
	t.Helper()
	if _, err := r.Dispatcher.HandleEvent(context.Background(), SignedUp(id, customer)); err != nil {
		t.Fatal(err)
	}
}

// Unpublished is the outbox's unpublished messages to destination (every destination when
// ""), oldest first, up to 100; an error fails the test.
func (r *Rig) Unpublished(destination string) []store.OutboxMessage {
	r.T.Helper()
	msgs, err := r.Store.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 100})
	if err != nil {
		r.T.Fatal(err)
	}
	if destination == "" {
		return msgs
	}
	var out []store.OutboxMessage
	for _, m := range msgs {
		if m.Destination == destination {
			out = append(out, m)
		}
	}
	return out
}

// Drain marks every unpublished outbox message published, handing each to fn (when not nil)
// first, page by page, until none is left; more than MaxDrainRounds pages fail the test.
func (r *Rig) Drain(fn func(store.OutboxMessage)) {
	r.T.Helper()
	ctx := context.Background()
	for range MaxDrainRounds {
		msgs, err := r.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
		if err != nil {
			r.T.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		ids := make([]int64, 0, len(msgs))
		for _, m := range msgs {
			if fn != nil {
				fn(m)
			}
			ids = append(ids, m.ID)
		}
		if err := r.Store.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: ids, Now: r.Clock.Now()}); err != nil {
			r.T.Fatal(err)
		}
	}
	r.T.Fatal("the outbox did not drain")
}

// Pump publishes the outbox the way the relay does and hands each message to its consumer
// (commands → worker, results → dispatcher, facts → projection) until nothing is left. It
// returns every fact message body it delivered.
func (r *Rig) Pump() (facts [][]byte) {
	r.T.Helper()
	ctx := context.Background()
	r.Drain(func(m store.OutboxMessage) {
		switch m.Destination {
		case topology.CampaignCommandsQueue:
			if err := r.Worker.Handle(ctx, m.Body); err != nil {
				r.T.Fatalf("worker: %v", err)
			}
		case topology.CampaignResultsQueue:
			if _, err := r.Dispatcher.HandleResult(ctx, m.Body); err != nil {
				r.T.Fatalf("dispatcher: %v", err)
			}
		case topology.CampaignFactsTopic:
			facts = append(facts, m.Body)
			if err := r.Projection.Handle(ctx, m.Body); err != nil {
				r.T.Fatalf("projection: %v", err)
			}
		}
	})
	return facts
}

// Settle flushes (Flush), runs BeforeSweep and sweeps, moving the clock by step when nothing
// was due, rounds times; then flushes once more.
func (r *Rig) Settle(step time.Duration, rounds int) {
	r.T.Helper()
	ctx := context.Background()
	flush := r.Flush
	if flush == nil {
		flush = func() { r.Drain(nil) }
	}
	for range rounds {
		flush()
		if r.BeforeSweep != nil {
			if err := r.BeforeSweep(ctx); err != nil {
				r.T.Fatal(err)
			}
		}
		n, err := r.Worker.Sweep(ctx, 100)
		if err != nil {
			r.T.Fatal(err)
		}
		if n == 0 {
			r.Clock.Advance(step)
		}
	}
	flush()
}

// Command is the command id, failing the test when it cannot be read.
func (r *Rig) Command(id string) store.CampaignCommand {
	r.T.Helper()
	c, err := r.Store.CampaignCommandGet(context.Background(), id)
	if err != nil {
		r.T.Fatal(err)
	}
	return c
}

// Commands are the commands of execution exe.
func (r *Rig) Commands(exe string) []store.CampaignCommand {
	r.T.Helper()
	c, err := r.Store.CampaignCommandsOf(context.Background(), exe)
	if err != nil {
		r.T.Fatal(err)
	}
	return c
}

// Execution is the execution exe.
func (r *Rig) Execution(exe string) store.CampaignExecution {
	r.T.Helper()
	e, err := r.Store.CampaignExecutionGet(context.Background(), exe)
	if err != nil {
		r.T.Fatal(err)
	}
	return e
}
