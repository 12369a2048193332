package app

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/local"
	"github.com/automation-platform/automation/shared/store"
)

// wireThroughput builds the eager publisher (r.Pump, hooked to the store's commits) and the
// ingest backpressure gate (r.Backlog) from cfg (docs/performance.md#publish-on-the-commit-path,
// docs/gateway.md#backpressure). Nothing runs until StartPublisher.
func (r *Runtime) wireThroughput(cfg config.Config, log *slog.Logger) {
	if n, ok := r.Store.(store.OutboxCommitNotifier); ok && cfg.EagerPublish {
		r.Pump = delivery.NewPump(r.Relay)
		r.Pump.Budget, r.Pump.Log = cfg.RelayBudget, log
		// The commits of pumpGather are one drain: one claim of many rows, not a claim of a
		// few after each commit (docs/performance.md, "Claims past the rows in flight").
		r.Pump.Gather = pumpGather
		n.OnOutboxCommit(r.Pump.NotifyRows)
	}
	if m := r.Memory; m != nil {
		// Bounded in flight: the relay (eager or timer) claims only while the in-process
		// bus holds fewer than relayInFlight messages; the bus's drains wake it again.
		r.Relay.Room = func() bool { return m.Waiting() < relayInFlight }
		// Within it, each destination holds at most relayShare: the claims leave out the rows
		// of a destination past it (delivery.Relay.FullDestinations), so a slow consumer
		// (campaign-commands under W6) stops only its own rows, not the whole relay.
		r.Relay.FullDestinations = func() []string { return fullDestinations(m.Lengths(), relayShare) }
	}
	if b, ok := r.Store.(store.OutboxBacklogReader); ok && cfg.IngestMaxBacklog > 0 {
		r.Backlog = &delivery.Backlog{Store: b, Clock: r.Clock, Max: cfg.IngestMaxBacklog}
		if m := r.Memory; m != nil {
			r.Backlog.Pending = m.Waiting
		}
	}
}

// StartPublisher runs the eager publisher (r.Pump) until the returned stop is called (stop
// waits for it; call it before Close). h, the embedded runtime's local host (nil on Service
// Bus), is woken after each drain that published something, so the consumers run at once
// instead of at their next interval. The first drain starts at once: rows an earlier
// process committed and did not publish go out without waiting for the OutboxRelay timer.
// While it runs, the marks of the messages the in-process bus settled are gathered, one
// transaction at most every settledMarkDelay instead of one after every drain; stop writes
// the last of them. No-op without a pump.
func (r *Runtime) StartPublisher(ctx context.Context, h *local.Host) (stop func()) {
	if r.Pump == nil {
		return func() {}
	}
	if h != nil {
		r.Pump.AfterDrain = func(int) { h.Wake() }
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	if r.Memory != nil {
		r.marks.start()
	}
	go func() { defer close(done); _ = r.Pump.Run(ctx) }()
	r.Pump.Notify()
	return func() {
		cancel()
		<-done
		if r.Memory != nil {
			r.marks.stop()
		}
	}
}

// pumpGather is how long the eager publisher lets commits gather before it drains: a few
// milliseconds on each hop's latency for fewer, fuller claims.
const pumpGather = 5 * time.Millisecond

// relayInFlight bounds the messages the in-process bus holds before the relay claims more
// (delivery.Relay.Room): enough for several full consumer batches, small enough that a
// claim's walk over the leased, unsettled rows stays short.
const relayInFlight = 1000

// relayShare bounds the messages one destination of the in-process bus holds before the
// relay's claims leave its rows out (delivery.Relay.FullDestinations): half of relayInFlight,
// so one slow destination leaves the other half to the rest (issue 39: campaign-commands held
// all 1,000 and tracking and events waited in the outbox behind it).
const relayShare = relayInFlight / 2

// fullDestinations returns the destinations of lengths (messages held per destination,
// bus.Memory.Lengths) that hold share or more, sorted.
func fullDestinations(lengths map[string]int, share int) []string {
	var out []string
	for d, n := range lengths {
		if n >= share {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}
