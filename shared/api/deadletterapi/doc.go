// Package deadletterapi holds the dead-letter routes of the SupportApi function
// (docs/operations.md#dead-letters): the messages a route gave up on, with the reason and
// the original message, scoped by business unit, and their requeue after a fix. Thin
// adapters over deadletter.Service on shared/httpapi (problem details, strict JSON and
// query, cursors, business-unit scope: a dead letter of a unit the caller may not see
// answers 404 like an unknown one). Documented in supportapi's openapi.yaml.
//
//	GET  /api/support/dead-letters[?businessUnitId=bu-1][&destination=tracking][&limit=50][&cursor=…]
//	     → 200 {"items":[{id, destination, messageId, sessionId, businessUnitId, reason,
//	        deliveryCount, deadLetteredOn, body | bodyText}], "nextCursor":"…"}, oldest first.
//	     Without businessUnitId: every unit the caller sees (a dead letter naming no unit
//	     only for a caller of every unit).
//	POST /api/support/dead-letters/requeue   X-Automation-Operator: jane
//	     {"id":"…","reason":"…"} → 200 the requeued dead letter (its message is delivered
//	     again as a first delivery); 404 unknown, requeued already, or out of scope.
package deadletterapi
