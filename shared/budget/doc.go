// Package budget is the charging service of paid campaign actions (docs/budgets.md): it
// freezes a command's price, holds budget with one conditional update, charges the billing
// provider under a fixed orderId, confirms, adds the cost and consumes the reservation
// exactly once, and reconciles every unclear charge by the same orderId. It never holds a
// SQL transaction across an HTTP call: each step below is one store transaction or one
// billing call, and the store's state says which step comes next after a crash.
//
// The campaign worker calls it per command:
//
//	d, err := svc.Prepare(ctx, budget.Command{CommandID, BusinessUnitID, CampaignID, ActionType, Quantity, LocalDate})
//	// d.Kind: PROCEED → run the action; WAITING_BUDGET (d.Short BUDGET|BALANCE) → command
//	// WAITING_BUDGET, pause the campaign; FEE_UNKNOWN → retry later, do not run; FEE_REJECTED → fail.
//	st, err := svc.Settle(ctx, cmd, budget.ActionSucceeded|ActionFailed|ActionUnknown|ActionAbandoned)
//
// and a timer calls Reconcile(ctx, limit) for in-doubt fees.
//
// Reservation state machine (BudgetReservation, one row per command):
//
//	(none) ──reserve: cost+reservedCost+amount <= maxCost──▶ HELD
//	HELD ──charge SUCCEEDED (cost += amount, reservedCost -= amount, once)──▶ CONSUMED
//	HELD ──charge FAILED, or released with no charge sent──▶ RELEASED
//	HELD ──charge PENDING/UNKNOWN──▶ HELD (only reconciliation or support moves it)
//	RELEASED ──reserve again (attempt+1, new orderId)──▶ HELD
//
// Transfer state machine (FeeTransfer, one row per orderId; every change writes a
// CampaignFeeEvent fact to the outbox with revision+1):
//
//	(none) ──intent recorded before the billing call──▶ PENDING
//	PENDING ──answer SUCCEEDED / FAILED──▶ SUCCEEDED / FAILED (final)
//	PENDING ──timeout, lost or untrustworthy answer (other orderId, amount or currency)──▶ UNKNOWN
//	PENDING (left by a crash) / UNKNOWN ──lookup by the same orderId──▶ SUCCEEDED / FAILED,
//	    or, when the provider has no such order, the same order sent again (idempotent by orderId)
//	UNKNOWN ──support resolution after a manual check (audited)──▶ SUCCEEDED / FAILED
//
// Budget status: ACTIVE ⇄ PAUSED (reason BUDGET when a reservation does not fit, BALANCE
// when the billing balance is short); raising maxCost above cost + reservedCost resumes a
// BUDGET pause; support resumes either.
package budget
