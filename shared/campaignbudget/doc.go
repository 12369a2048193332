// Package campaignbudget puts the charging service (shared/budget) into the campaign worker's
// seams (shared/campaign doc.go, steps 4 and 7; docs/budgets.md#in-the-worker):
//
//   - Guard.BeforeCall (the PreCallGuard, before the provider is admitted and called) runs
//     budget.Service.Prepare for the claimed command: the price is frozen on the first claim
//     that reaches it and read back on every retry; PROCEED lets the action run (its fee is
//     confirmed, or it is free); WAITING_BUDGET records the command WAITING_BUDGET and pauses
//     the campaign (the reason, BUDGET or BALANCE, is the budget's PausedReason and the
//     command's LastError); FEE_UNKNOWN sends the command back to QUEUED for FeeRecheck
//     without running it (the reservation stays HELD; Reconcile or the next claim looks the
//     order up by the same orderId); FEE_REJECTED, no billing provider, no price policy or
//     no budget fail the command (nothing is charged, nothing stays held).
//   - Guard.AfterResult (the PostResultHook, inside the transaction that records the
//     command's outcome) settles the reservation with that outcome: a confirmed fee is kept
//     whatever the action did; a HELD reservation with no charge sent, or a FAILED one, is
//     released; one whose charge is PENDING or UNKNOWN stays HELD for reconciliation.
//   - Guard.ResumePaused: a WAITING_BUDGET command claimed while its campaign is paused
//     resumes the campaign when its budget is ACTIVE again (maxCost raised, or a support
//     resume), and is checked again.
//
// Command state as this package adds to it:
//
//	RUNNING ──guard: WAITING_BUDGET──▶ WAITING_BUDGET (campaign PAUSED, due at PauseRecheck)
//	WAITING_BUDGET ──claimed, campaign PAUSED, budget still paused──▶ WAITING_BUDGET
//	WAITING_BUDGET ──claimed, campaign ACTIVE (API) or budget ACTIVE (raise)──▶ guard again
//	RUNNING ──guard: FEE_UNKNOWN──▶ QUEUED (due at FeeRecheck; the action has not run)
//
// No HTTP call is made inside a SQL transaction: Prepare runs between the claim and the
// provider call; the hook only writes.
package campaignbudget
