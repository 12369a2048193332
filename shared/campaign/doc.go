// Package campaign runs campaigns (docs/campaigns.md): an event of the gateway's DIRECT route
// starts, for one recipient, an execution of a campaign's ordered action chain; each action
// is a command with a stable identity that a worker claims with a lease, runs once through
// a provider and records; the chain moves on only on a terminal result.
//
// # Identities
//
// ExecutionID = f(business unit, campaign, run, recipient, sourceEventId); CommandID and
// EffectKey = f(execution, action index, action identity (key, type, provider)). A retry,
// a redelivered message and a replayed event keep every identity; a deliberate re-run
// (Campaign.RunID changed) makes new executions for the same events.
//
// # Execution states
//
//	            first command QUEUED (one transaction: execution + command + outbox)
//	event ─────────────────────► RUNNING(CurrentIndex = i)
//	                               │ result of command i: terminal, at its current revision
//	                               ├──► RUNNING(CurrentIndex = j)   next action whose condition holds
//	                               ├──► COMPLETED                   no further action
//	                               └──► CANCELLED                   command i CANCELLED (campaign stopped)
//
// A result that is not terminal, carries another revision, or names a command the chain is
// no longer waiting on changes nothing (store.CampaignAdvance): a duplicate never advances
// the chain twice and a stale one never skips an action.
//
// # Command states (actionStatus)
//
//	            claim (lease, Version+1; parameters frozen on the first claim)
//	QUEUED ─────────────────────────► RUNNING ──provider ok──────────────► SUCCEEDED
//	  ▲ ▲ ▲                            │ │ │ │──permanent / guard denies──► FAILED
//	  │ │ └── paused campaign, guard   │ │ │ └──campaign stopped, nothing
//	  │ │     wait, provider busy ◄────┘ │ │     sent yet ────────────────► CANCELLED
//	  │ └──── transient error: ladder ◄──┘ │
//	  │                                    │ timeout / lost answer / crash in doubt
//	  │                                    ▼
//	  │                                 UNKNOWN ── NextAttemptOn set: resend with the same
//	  │                                    │       key (provider dedupes) or look up
//	  │                                    └─ NextAttemptOn nil: manual-resolution queue,
//	  │                                       resolved SUCCEEDED or FAILED by a person
//	  └─ a RUNNING command whose lease expired is claimed again "in doubt": it is resent only
//	     to a provider that dedupes by EffectKey, else looked up, else UNKNOWN for a person.
//
// A provider timeout is UNKNOWN, never FAILED. Stopping a campaign cancels only commands
// that cannot have reached a provider; an in-doubt command still resolves (lookup or a
// person), never a blind send.
//
// # Worker steps and seams
//
// Worker.Handle (and Worker.Sweep for retries, lookups and expired leases) runs these steps,
// each a separate function so hooks can be put between them:
//
//  1. load: read the command and its campaign (no transaction held);
//  2. claim: store.CampaignClaim with a lease and Version; freeze the parameters if unset;
//     with a ClaimGuard and an ACTIVE campaign, the guard's in-claim work (the budget's
//     price freeze) runs in the claim's transaction (docs/budgets.md, "Frozen price");
//  3. status: PAUSED → QUEUED again after PauseRecheck (no attempt counted); STOPPED →
//     CANCELLED unless in doubt;
//     3b. recipient gate: for a GatedProvider's command (the NOTIFICATION_* actions of a
//     ChannelProvider) on a clean claim, Worker.Gate (shared/preference) decides the
//     recipient's preferences and quiet hours: opted out → SKIPPED with the reason; inside
//     quiet hours → QUEUED until the window ends (no attempt counted). It runs before the
//     guard, so a skipped or waiting action is never charged a fee;
//  4. guard: Worker.Guard (optional PreCallGuard) may answer Proceed, Wait(until) or
//     Deny(reason) — the seam for budget reservations before a paid action; after a
//     guard that proceeds the campaign's status is read again, because the guard may have
//     taken a billing call: a campaign STOPPED meanwhile cancels the command (in doubt:
//     resolved without a call), and a fee the guard confirmed stays charged (seed 002);
//  5. admit: the provider's concurrency slot and rate token (ProviderConfig); a busy
//     provider sends the command back to QUEUED shortly (backpressure: nothing queues in
//     memory beyond the claimed batch);
//  6. call: the provider, outside any SQL transaction, with a context that ends with the
//     provider's timeout or the lease, whichever is first;
//  7. record: store.CampaignFinish writes actionStatus, provider reference, result, the
//     fact and (terminal) the result message in one transaction, and runs Worker.AfterResult
//     (optional PostResultHook) inside that same transaction — the seam for settling a
//     budget reservation with the result. In a HandleBatch batch the outcomes of the
//     commands that run side by side share one transaction (store.CampaignFinishMany: each
//     written as CampaignFinish writes it, a lost lease its own; finishGroup).
//
// A crash between any two steps leaves either a QUEUED command (before the claim), or a
// RUNNING one whose lease expires and is claimed in doubt: exactly one provider call, or one
// UNKNOWN with a resolution path.
//
// # Batches
//
// The CampaignWorker function takes its messages in batches (Worker.HandleBatch): step 1 for
// each command, step 2 for all of them in one transaction (store.CampaignClaimMany, each
// with its guard's in-claim work), then steps 3–7 for each claimed command as Run does, at
// most Parallel at once, each after reading its campaign again (a batch-mate's guard may
// have paused it for budget, or a person stopped it, since the load). A crash after the batch's claim leaves every command of it RUNNING
// under its lease, each claimed again in doubt as above (the simulator's
// campaign-claim-crash); one that was WAITING_BUDGET still asks the guard, in doubt, to
// resume its campaign paused for budget (PausedResumer). The CampaignDispatch function takes its trigger events in batches
// too (Dispatcher.HandleEventBatch): the executions they start are written in one
// transaction (store.CampaignStartMany). When a batch's transaction fails, each command is
// run (each event started) alone, so one the store refuses holds back no other.
package campaign
