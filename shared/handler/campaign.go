package handler

import (
	"context"
	"log/slog"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
)

// CampaignDeps are the campaign services the campaign functions call (docs/campaigns.md).
type CampaignDeps struct {
	Dispatcher *campaign.Dispatcher
	Worker     *campaign.Worker
	Projection *campaign.Projection
	// Purger runs after each sweep (bounded): published outbox rows and old dedupe keys.
	Purger *delivery.OutboxPurger
	// SweepBatch bounds the commands one CampaignWorker sweep claims (default 100).
	SweepBatch int
	// Fees projects fee facts (CampaignFeeProjection); nil: the function is not registered.
	Fees *budget.FeeProjector
	// Budget, when set, reconciles in-doubt fees on every sweep, at most ReconcileBatch
	// (default 50) per run (docs/budgets.md#reconciliation).
	Budget         *budget.Service
	ReconcileBatch int
	Trace          trace.Writer
	Clock          automation.Clock
	Log            *slog.Logger
}

// RegisterCampaigns adds the campaign functions: CampaignDispatch (the gateway's DIRECT
// events and the attribute engine's triggers start executions, a batch's in one
// transaction), CampaignWorker (a batch of commands claimed in one transaction, each run
// once), CampaignResults (terminal results move chains on) and CampaignFactProjection (facts
// to the counts). An unreadable
// message is dead-lettered with its record; a store failure answers non-2xx (redelivered).
func RegisterCampaigns(r *funchost.Router, c CampaignDeps) {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	d := Deps{Trace: c.Trace, Clock: c.Clock, Log: c.Log}
	consume := func(name string, fn func(ctx context.Context, body []byte) (map[string]any, error)) {
		r.Register(name, logged(func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
			msg, err := inv.ServiceBus("message")
			if err != nil {
				return funchost.Result{}, d.deadLetter(ctx, inv, nil, err)
			}
			out, err := fn(ctx, msg.Body)
			if automation.IsPermanent(err) {
				return funchost.Result{}, d.deadLetter(ctx, inv, msg, err)
			}
			if err != nil {
				return funchost.Result{}, err
			}
			out["messageId"] = msg.MessageID
			return ok(out)
		}))
	}
	// CampaignDispatch is a batch trigger (cardinality many) on its session-enabled
	// subscription: the trigger events waiting at once start their executions in one
	// transaction (Dispatcher.HandleEventBatch; docs/performance.md, "The welcome chain
	// in batches"), answered by batchInvocation's rule.
	r.Register(topology.CampaignDispatch, logged(func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		return d.batchInvocation(ctx, inv, topology.EventsTopic, "campaign trigger", func(ctx context.Context, msgs []bus.Message) []error {
			bodies, parents := tracedBodiesOf(msgs)
			_, errs := c.Dispatcher.HandleEventBatch(ctx, bodies, parents)
			return errs
		})
	}))
	// CampaignWorker is a batch trigger too: the commands of a batch are claimed in one
	// transaction and run at most Worker.Parallel at once (Worker.HandleBatch).
	r.Register(topology.CampaignWorker, logged(func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		return d.batchInvocation(ctx, inv, topology.CampaignCommandsQueue, "campaign commands", func(ctx context.Context, msgs []bus.Message) []error {
			bodies, parents := tracedBodiesOf(msgs)
			return c.Worker.HandleBatch(ctx, bodies, parents)
		})
	}))
	// Batch triggers (cardinality many): the results, and the facts, waiting at once are
	// applied in one transaction (docs/performance.md#consumers).
	r.Register(topology.CampaignResults, logged(func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		return d.batchInvocation(ctx, inv, topology.CampaignResultsQueue, "campaign results", func(ctx context.Context, msgs []bus.Message) []error {
			bodies, parents := tracedBodiesOf(msgs)
			return c.Dispatcher.HandleResultBatch(ctx, bodies, parents)
		})
	}))
	r.Register(topology.CampaignFactProjection, logged(func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		return d.batchInvocation(ctx, inv, topology.CampaignFactsTopic, "campaign facts", func(ctx context.Context, msgs []bus.Message) []error {
			return c.Projection.HandleBatch(ctx, bodiesOf(msgs))
		})
	}))
	if c.Fees != nil {
		consume(topology.CampaignFeeProjection, func(ctx context.Context, body []byte) (map[string]any, error) {
			return map[string]any{}, c.Fees.Handle(ctx, bus.Message{Destination: topology.CampaignFeeFactsTopic, Body: body})
		})
	}
}

// SweepCampaigns runs the campaign worker's sweep (retries, lookups, expired leases, lost
// command messages), the reconciliation of in-doubt fees (bounded) and the outbox retention
// purge; the OutboxRelay timer calls it.
func (c CampaignDeps) SweepCampaigns(ctx context.Context) (map[string]any, error) {
	batch := c.SweepBatch
	if batch <= 0 {
		batch = 100
	}
	n, err := c.Worker.Sweep(ctx, batch)
	out := map[string]any{"claimed": n}
	if err != nil {
		return out, err
	}
	if c.Budget != nil {
		limit := c.ReconcileBatch
		if limit <= 0 {
			limit = 50
		}
		rec, err := c.Budget.Reconcile(ctx, limit)
		out["feesReconciled"] = rec
		if err != nil {
			return out, err
		}
	}
	if c.Purger != nil {
		p, err := c.Purger.RunOnce(ctx)
		out["purgedOutbox"], out["purgedDedupeKeys"] = p.Outbox, p.ProcessedEvents
		return out, err
	}
	return out, nil
}

// bodiesOf returns the messages' bodies, in order.
func bodiesOf(msgs []bus.Message) [][]byte {
	bodies := make([][]byte, len(msgs))
	for i, m := range msgs {
		bodies[i] = m.Body
	}
	return bodies
}

// tracedBodiesOf returns the messages' bodies and their W3C traceparents, in order.
func tracedBodiesOf(msgs []bus.Message) (bodies [][]byte, traceParents []string) {
	bodies, traceParents = make([][]byte, len(msgs)), make([]string, len(msgs))
	for i, m := range msgs {
		bodies[i], traceParents[i] = m.Body, m.TraceParent
	}
	return bodies, traceParents
}
