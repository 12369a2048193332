// Package campaigntest is the one campaign runtime rig of the tests that drive the real
// campaign worker (campaign, campaignbudget): a store, a manual clock, the providers, the
// catalog, the dispatcher, the worker and the fact projection, wired as the app wires them,
// with the relay replaced by a deterministic drain of the outbox.
//
// A test builds a Rig with New over a store it opened (this package depends on no SQL
// dialect), adds its providers in the callback New takes (simulated ones with StartSim and
// HTTPProvider), then fires SignedUp events and settles:
//
//	Fire → dispatcher.HandleEvent → outbox (commands) → Drain / Pump → Worker.Handle
//	     → outbox (results, facts) → Pump → Dispatcher.HandleResult, Projection.Handle
//	Settle: Flush, BeforeSweep, Worker.Sweep, clock + step when nothing was due; rounds times.
//
// Drain is bounded (MaxDrainRounds pages of 100): a flow that keeps writing outbox rows fails
// the test instead of spinning. It is imported by tests only (it imports "testing").
package campaigntest
