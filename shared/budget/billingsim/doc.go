// Package billingsim is a simulated billing provider: a real HTTP server speaking the
// billing contract of docs/billing.md (shared/budget/billing is its client), with an
// in-memory ledger of transfers and balances and fault switches for tests and demos.
//
// Ledger rules (the contract): one entry per orderId; creating an existing order answers the
// entry and changes nothing (200), or 409 ORDER_MISMATCH when the amount, currency or unit
// differ; a charge above the unit's available balance is committed as FAILED with reason
// INSUFFICIENT_BALANCE; a SUCCEEDED charge debits the balance once.
//
// Faults (Server.Inject), each consumed by the next matching request: Fail (500, nothing
// committed), Slow (answer after Delay), TimeoutAfterCommit (commit, then hold the answer
// for Delay so the client gives up), LostAnswer (commit, then drop the connection without
// an answer), WrongOrder and WrongCurrency (commit, then answer another orderId or
// currency), OutOfBalance (the balance reads 0 and the charge is declined).
package billingsim
