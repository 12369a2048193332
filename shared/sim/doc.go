// Package sim is the deterministic fault simulation (docs/simulation.md): from one 64-bit
// seed it generates a history (workload.go: business units in several zones, date-based
// and threshold reminders, source events with duplicates, out-of-order revisions, deletions
// and date moves, settings changes, a report subscription with run-now, gateway batches,
// loyalty events, a campaign with a budget, price policies and a billing server, poison
// events that are dead-lettered and an operator who fixes, requeues and discards them through
// deadletter.Service: deadletters.go),
// runs it through the real pipeline on the embedded stack with replay's simulated clock
// (replay.Driver), injects faults at named points (faults.go: app.Faults hooks, a broker
// wrapper, restarts on the same SQLite file, clock jumps, channel fault windows, the
// billing server's failures and lost answers, the dead-letter actions' deaths between audit
// and bus call, refusals, lost answers and contradicting operators), and checks
// invariants (check.go) at quiescent points and at the end against an oracle (oracle.go,
// resolve.go) computed from the history alone.
//
// One seed's run, as a state machine:
//
//	generated ─► running ─┬─► step ok ───────────────► running (every 20 steps: quiescent checks)
//	                      ├─► fault point fires crash ─► killed ─► restarted (same database) ─► running
//	                      ├─► random restart ──────────────────► restarted ─► running
//	                      └─► inputs and ticks done ─► draining (faults off, clock to the next wake-up)
//	                                                       └─► final checks ─► passed | failed
//
// A failed run is reported with its seed and the command that reproduces it; Shrink drops
// operations while the same invariant still fails.
package sim
