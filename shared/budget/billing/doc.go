// Package billing is the client side of the billing contract (docs/billing.md): create a
// transfer under a caller-chosen orderId, fetch a transfer by orderId, read a business
// unit's balance. The contract is idempotent by orderId — creating an order that exists
// answers the existing transfer and never charges again — which is what lets the charging
// service (shared/budget) retry and reconcile with the same orderId instead of guessing.
//
// State machine of one order as the provider keeps it: absent → SUCCEEDED | FAILED
// (final; a declined charge is a committed FAILED entry with a reason).
//
// Errors a caller must tell apart (errors.Is):
//   - ErrNotFound: the provider has no such order (GetTransfer) — nothing was charged;
//   - ErrRejected: the provider refused the request before committing anything (400, 422);
//   - ErrOutcomeUnknown: the request may have reached the provider and we do not know what
//     it did (timeout, connection lost, 5xx, 409 order mismatch, an unreadable answer, or an
//     answer naming another orderId, amount or currency): look the order up later by the
//     same orderId, never create a new one.
package billing
