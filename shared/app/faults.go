package app

import (
	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/scheduler"
)

// Faults gathers the named fault points of every stage for the deterministic simulator
// (shared/sim, docs/simulation.md). Production passes none (Options.Faults nil): every hook
// stays nil and every path is the production one. A later capability adds its stage's hook
// struct here and wires it in Open.
type Faults struct {
	// Scheduler: the due-work poller's points (after claim).
	Scheduler *scheduler.Hooks
	// Dispatch: the dispatcher's points (after send, before record).
	Dispatch *delivery.DispatchHooks
	// Relay: the outbox relay's points (after publish, before mark).
	Relay *delivery.RelayHooks
	// Publisher, when set, wraps the publisher the outbox relay publishes to: the bus faults
	// (duplicates, reordering, delayed redelivery) live in the wrapper.
	Publisher func(bus.Publisher) bus.Publisher
	// Attribute: the attribute engine's points (between the attribute update and the outbox
	// write, inside the event's transaction).
	Attribute *attribute.Hooks
	// Campaign: the campaign worker's points (after the provider call, before the outcome
	// is recorded).
	Campaign *campaign.WorkerHooks
	// Budget: the charging service's points (after a billing call, before its answer is
	// recorded).
	Budget *budget.Hooks
}

func (f *Faults) publisher(p bus.Publisher) bus.Publisher {
	if f == nil || f.Publisher == nil {
		return p
	}
	return f.Publisher(p)
}
