// Package deliveryapi holds the delivery support routes of the SupportApi function
// (docs/architecture.md#unknown-outcomes, docs/architecture.md#facts, docs/operations.md#support-api): the manual-resolution queue of UNKNOWN deliveries and the
// delivery counts per business unit and local day. Thin adapters over delivery.Support on
// shared/httpapi (problem details, strict JSON and query, If-Match, cursors, business-unit
// scope: a delivery of a unit the caller may not see answers 404).
//
//	GET  /api/support/deliveries/unknown?businessUnitId=bu-1[&limit=50][&cursor=…]
//	     → 200 {"items":[{deliveryKey, schedulerKey, businessUnitId, channel, recipient,
//	        template, localDate, attemptCount, lastError, version, updatedOn}], "nextCursor":"…"}
//	POST /api/support/deliveries/unknown/{deliveryKey}/resolve   If-Match: "<version>"
//	     {"businessUnitId":"bu-1","status":"Sent"|"Failed","reason":"…","providerReference":"…"}
//	     → 200 the resolved delivery, ETag its new version; the operator is the caller's name
//	       (X-MS-CLIENT-PRINCIPAL-NAME or X-Automation-Operator), required.
//	     412 the version moved on; 409 no longer Unknown; 404 unknown or out of scope.
//	GET  /api/support/deliveries/held?businessUnitId=bu-1[&limit=50][&cursor=…]
//	     → 200 the deliveries waiting Failed on support hold (a template missing, retries run
//	       out), the same item shape as unknown.
//	POST /api/support/deliveries/{deliveryKey}/release   If-Match: "<version>"
//	     {"businessUnitId":"bu-1","reason":"…"}
//	     → 200 the delivery, Queued and due now (the dispatcher's sweep sends it once), ETag its
//	       new version; the operator as for resolve (logged with the reason).
//	     412 the version moved on; 409 not held (released already); 404 unknown or out of scope.
//	GET  /api/support/deliveries/counts?businessUnitId=bu-1&from=2026-10-01&to=2026-10-31
//	     → 200 {"businessUnitId","from","to","days":[{localDate,sent,failed,unknown}],"freshTo"}
package deliveryapi
