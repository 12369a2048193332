// Package app is the composition root: it wires the store, trace, bus, scheduler,
// reminder and delivery services for a runtime. Only this package knows every other one.
package app

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace/localtrace"
	"github.com/automation-platform/automation/sql/sqlite"
)

// EmbeddedOptions configure the embedded runtime (SQLite, in-process bus, local trace).
type EmbeddedOptions struct {
	DBPath   string // SQLite file
	TraceDir string // trace.db and diagnostics blobs
	Clock    automation.Clock
	// Channels are the delivery channels by name (e.g. "log").
	Channels map[string]delivery.Channel
	// Poller tunes the due-work poller (zero values: defaults).
	Poller scheduler.Config
	// Seed makes backoff jitter deterministic (replay); 0 uses seed 1.
	Seed uint64
	Log  *slog.Logger
}

// Embedded is a wired embedded runtime.
type Embedded struct {
	Store      store.Store
	Trace      *localtrace.Store
	Bus        *bus.Memory
	Poller     *scheduler.Poller
	Relay      *delivery.Relay
	Dispatcher *delivery.Dispatcher
	Reminders  *reminder.Service
	Router     *events.Router
	Clock      automation.Clock
}

// NewEmbedded opens the store and trace and wires the services.
func NewEmbedded(ctx context.Context, o EmbeddedOptions) (*Embedded, error) {
	if o.Clock == nil {
		return nil, errors.New("app: a Clock is required")
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := sqlite.Open(ctx, o.DBPath, nil)
	if err != nil {
		return nil, err
	}
	tr, err := localtrace.Open(o.TraceDir)
	if err != nil {
		st.Close()
		return nil, err
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pc := o.Poller
	if pc.Backoff.Rand == nil {
		pc.Backoff.Rand = rng.Float64
	}
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, &reminder.Handler{Store: st})
	poller, err := scheduler.NewPoller(pc, st, reg, o.Clock, tr, log)
	if err != nil {
		st.Close()
		tr.Close()
		return nil, err
	}
	b := bus.NewMemory(nil)
	names := map[string]bool{}
	for n := range o.Channels {
		names[n] = true
	}
	e := &Embedded{
		Store: st, Trace: tr, Bus: b, Poller: poller, Clock: o.Clock,
		Relay:      &delivery.Relay{Store: st, Publisher: b, Clock: o.Clock, Log: log},
		Dispatcher: &delivery.Dispatcher{Store: st, Channels: o.Channels, Clock: o.Clock, Log: log},
		Reminders:  &reminder.Service{Store: st, Clock: o.Clock, Channels: names, Log: log},
		Router:     events.NewRouter(),
	}
	b.Subscribe(delivery.DispatchQueue, e.Dispatcher.Handle)
	e.Router.RegisterAll(e.Reminders)
	return e, nil
}

// Close closes the store and trace.
func (e *Embedded) Close() error {
	return errors.Join(e.Store.Close(), e.Trace.Close())
}

// TickResult counts one pass of the pipeline.
type TickResult struct {
	scheduler.Result
	Published  int
	Dispatched int
}

// maxRelayRounds bounds the relay/dispatch rounds of one tick.
const maxRelayRounds = 100

// Tick runs one pass of stages ② and ③ at the clock's now: the due-work poller (rescue,
// claim, execute), the outbox relay, and dispatch of what the relay published.
func (e *Embedded) Tick(ctx context.Context) (TickResult, error) {
	var tr TickResult
	r, err := e.Poller.RunOnce(ctx)
	tr.Result = r
	if err != nil {
		return tr, err
	}
	for i := 0; i < maxRelayRounds; i++ {
		n, err := e.Relay.RunOnce(ctx)
		tr.Published += n
		if err != nil {
			return tr, err
		}
		d, err := e.Bus.Drain(ctx, 0)
		tr.Dispatched += d
		if err != nil {
			return tr, err
		}
		if n == 0 {
			break
		}
	}
	return tr, nil
}
