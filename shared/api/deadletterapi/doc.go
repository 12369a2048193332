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
//	     {"id":"…","etag":"…","reason":"…"} → 200 the requeued dead letter (its message is
//	     delivered again as a first delivery); with the etag read, a repeat answers 200 again
//	     and sends nothing, and 412 when the id names another message now or it was
//	     discarded; 404 unknown or out of scope; 429 past the requeue pace.
//	POST /api/support/dead-letters/requeue-many   {"items":[{"id","etag"}…],"reason":"…"}
//	     → 200 {batchId, done, refused, deferred, ratePerMinute, nextOn}: paced, at most
//	     deadletter.MaxBulk, each one audited.
//	POST /api/support/dead-letters/discard   {"id","etag","reason"} → 200 the action
//	     (deadLetter, action, operator, reason, actedOn, replayed); nothing is delivered.
//
// Every action is recorded in the DeadLetterAudit table (who, why, when, batch) and a dead
// letter is acted on once (deadletter.Service).
package deadletterapi
