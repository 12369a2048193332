// Package deadletter makes the bus's dead letters visible and actionable: a page of them
// with the reason, the original message and its route, scoped by business unit; a requeue
// after a fix; counts per route for the metrics (docs/operations.md#dead-letters). It reads a
// bus.DeadLetterBox: the in-process bus's bounded list, or a Service Bus implementation over
// each entity's dead-letter subqueue.
//
// A dead letter's business unit is read from its body: the gateway's fat payload and the
// attribute engine's triggers carry "business_unit_id", a CloudEvent the "businessunitid"
// extension, the product's own JSON messages "businessUnitId". A message naming none (a
// dispatch message carries only its delivery key) is shown only to a caller who sees every
// business unit, like every platform-wide figure.
package deadletter
