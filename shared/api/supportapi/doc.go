// Package supportapi is the support API's HTTP surface (function SupportApi, route
// support/{*path}; docs/operations.md#support-api): thin handlers that decode a request, call one
// shared/support method and encode its answer. Authentication, business-unit scope, the
// operator's name, Idempotency-Key and RFC 9457 problem details come from shared/httpapi.
//
//	GET  /api/support/scheduler-rows                 find: schedulerKey, sourceType+sourceGuid,
//	                                                 businessUnitId, status, onHold,
//	                                                 scheduledFrom, scheduledTo, limit, cursor
//	GET  /api/support/scheduler-rows/{id}            one row (Id or Guid): attempts, audit,
//	                                                 deliveries, diagnostics; ETag = Version
//	POST /api/support/scheduler-rows/{id}/release    release its support hold   ┐ If-Match,
//	POST /api/support/scheduler-rows/{id}/retry      retry now / support retry  │ operator,
//	POST /api/support/scheduler-rows/{id}/cancel     cancel                     │ {"reason"}
//	POST /api/support/scheduler-rows/{id}/run-now    make a Pending row due now ┘
//	POST /api/support/releases                       paced release of a filtered set of holds
//	GET  /api/support/explain?sourceType=&sourceGuid=  why a source's reminders did (not) go out
//	GET  /api/support/metrics[?businessUnitId=]      pipeline health figures
//
// Register adds these routes to a funchost.Router; other packages register more routes
// under /api/support/ on the same router (the function's route covers the whole prefix).
package supportapi
