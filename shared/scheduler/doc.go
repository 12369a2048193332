// Package scheduler is stage ② of the pipeline, the due-work poller: it rescues expired
// leases, claims due AutomationScheduler rows with a lease and a Version token, runs each
// claimed row through the Handler registered for its AutomationType, and records the outcome
// with that token — complete, deactivate, retry with backoff, or support hold. Design:
// docs/architecture.md#claim and docs/architecture.md#failure-backoff-and-rescue.
//
// # Life of a row
//
// The statuses are automation.Status. Ensure (automation.DecideEnsure, called by every store
// dialect) creates and reactivates rows; this package moves Pending → Processing → an end;
// support (shared/support) acts on held and ended rows. The same diagram, with every
// deactivation reason, is in docs/state-machines.md#scheduler-row.
//
//	                 ensure: no row                     ensure: no row, window already passed
//	                       │                                           │
//	                       ▼                                           ▼
//	   ┌──────────────► Pending ◄──────────────────────┐        Deactivated (MissedWindow)
//	   │                 │   ▲                         │
//	   │          claim  │   │ fail (retryable): RetryCount+1,
//	   │   (lease = now  │   │   NextRetryOn = now + 5 min → 15 min → 1 h (+0–10 % jitter)
//	   │   + Lease,      │   │ rescue: the lease expired before the attempt finished —
//	   │   Version+1)    ▼   │   counted as a failed attempt, same backoff
//	   │              Processing ───────────────────────────────────────┐
//	   │        complete │         │ deactivate                         │ ladder exhausted, or
//	   │  (deliveries +  │         │ (revalidation said no:             │ a permanent error:
//	   │   outbox, one   │         │  an outcome, not a failure)        │ hold
//	   │   transaction)  ▼         ▼                                    ▼
//	   │             Completed   Deactivated                 Failed + IsOnSupportHold
//	   │             (final)       │                                    │
//	   │                           │ ensure, same InputHash:            │ support release / retry:
//	   └───────────────────────────┴─ reactivate ◄─────────────────────┘   due at once
//
//	support cancel:   Pending | Failed | Deactivated → Cancelled (ReasonSupportCancelled);
//	                  ensure with the same InputHash leaves such a row Cancelled (any other
//	                  Cancelled row is reactivated like a Deactivated one)
//	support retry:    Completed | Deactivated | Cancelled stay as they are; a new row
//	                  {key}:support-retry:v{version} is ensured, due now
//	ensure conflict:  same key, another InputHash → IsOnSupportHold on the row as it is,
//	                  both hashes recorded; Processing and Completed rows are never touched
//
// # Claim and token
//
// SchedulerClaimDue selects Pending rows with ScheduledOn <= now, NextRetryOn null or due and
// not on hold, in schedule order, and claims them in one statement: Status=Processing, the
// lease, Version+1. The Version after the claim is the token; every later write is
// guarded by it, so a worker whose lease expired and whose row was claimed again gets
// store.ErrLeaseLost and writes nothing (Result.LeaseLost). Rescue runs before every claim
// (Poller.RunOnce, Poller.Claim). Any number of pollers may run against one store.
//
// # Steps of RunOnce
//
// One RunOnce is: rescue expired leases; claim a batch (Hooks.AfterClaim runs here: the
// batch is claimed, nothing executed); one BatchScope per handler type in the batch;
// execute with bounded concurrency (handlers write nothing); settle - failures and
// deactivations one by one, every completion of the batch in one SchedulerCompleteBatch
// transaction; then the batch's trace rows, written in the background while the next
// RunOnce runs. At most one trace write is in flight: the next batch's write waits for it,
// and so do a RunOnce that claims nothing and Flush (the runtime flushes before it closes
// the trace store). Execute (one row, the fan-out path) and rescue write their trace rows
// before they return. docs/performance.md describes the costs of each step.
//
// # Handler intents
//
// A Handler returns an Outcome (complete, with deliveries, outbox messages and follow-up
// candidates written in the completing transaction; or Deactivate with a reason code), or an
// error: a plain error retries on the Backoff ladder, an error marked permanent holds the
// row at once. Handlers that implement LongRunning retry daily after the ladder instead of
// being held. Every attempt writes one trace row, and a failed one a diagnostics blob.
package scheduler
