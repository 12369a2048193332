// Package deadletter makes the bus's dead letters visible and actionable: a page of them
// with the reason, the original message and its route, scoped by business unit; a requeue
// after a fix, or a discard with a reason; counts per route for the metrics
// (docs/operations.md#dead-letters). It reads a
// bus.DeadLetterBox: the in-process bus's bounded list, or a Service Bus implementation over
// each entity's dead-letter subqueue.
//
// A dead letter's business unit is read from its body: the gateway's fat payload and the
// attribute engine's triggers carry "business_unit_id", a CloudEvent the "businessunitid"
// extension, the product's own JSON messages "businessUnitId". A message naming none (a
// dispatch message carries only its delivery key) is shown only to a caller who sees every
// business unit, like every platform-wide figure.
//
// Actions (actions.go) are audited in store.DeadLetterAuditStore, one per dead letter, keyed by
// its ETag (ETagOf):
//
//	listed ──Requeue (paced: RequeuePerMinute, counted from the audit)──▶ requeued (audit row)
//	listed ──Discard (a reason)──────────────────────────────────────────▶ discarded (audit row)
//	requeued/discarded ──the same action again──▶ replayed (the first's answer, nothing done)
//	requeued/discarded ──the other action──▶ 412, naming who did what
//	audit row written, bus call still running ──the same etag again──▶ 409 (it may yet fail)
//
// An action whose ETag no longer matches what its id names is 412; a bus that refuses the
// action removes the audit row, so nothing is recorded as done that was not.
//
// The embedded runtime's list (the in-process bus's, bounded, in memory) is kept across
// restarts by Kept (kept.go) in the diagnostics store: a record blob per dead letter and one
// index blob of the list, written after each change and read once at start-up, so after a
// restart the list shows the same dead letters with the same ids and ETags, new ones are
// numbered after every earlier id, and an action that died between its audit row and the bus
// call is taken over as before. On Service Bus the dead-letter subqueues are durable already. The list masks personal data in the message
// (shared/logmask); a requeue sends the original bytes.
package deadletter
