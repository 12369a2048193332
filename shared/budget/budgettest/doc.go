// Package budgettest is the one crash rig of the budget flow's tests (budget, campaignbudget):
// a budget store and a billing client that die — panic, as a worker process would — at a
// named point of reserve → charge → record, so a test can prove that a recovery after a
// crash at every step never charges twice.
//
// Points are "after:<call>" for the store calls CommandPriceFreeze, BudgetReserve,
// FeeTransferBegin and FeeTransferRecord (the call committed, its answer is lost) and for the
// billing calls GetBalance and CreateTransfer (the provider answered), "after:CommandPriceGet"
// (the price read back: a claim that froze it committed), "in:CommandPriceFreezeInTx" (inside
// the claim's transaction, after its freeze: both roll back) and "before:CreateTransfer"
// (nothing reached the provider). It is imported by tests only.
package budgettest
