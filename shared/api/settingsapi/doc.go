// Package settingsapi is the management HTTP API for business units and reminder settings
// (docs/architecture.md#inputs, docs/architecture.md#settings-changes; functions BusinessUnitsApi and ReminderSettingsApi). It is a
// thin adapter: decode the request, call one reminder.Admin method, answer JSON. The
// conventions come from shared/httpapi: RFC 9457 problem details, strict JSON and query
// strings, ETag/If-Match on Version, Idempotency-Key on POST, business-unit scope (a unit or
// setting outside the caller's scope answers 404), opaque cursors. openapi.yaml describes
// every route; a test checks it against the registered routes and validates real requests
// and responses against it.
//
//	GET  /api/business-units                      list (limit, cursor)
//	POST /api/business-units                      create (Idempotency-Key)
//	GET  /api/business-units/{id}                 read (ETag)
//	PUT  /api/business-units/{id}                 replace (If-Match required)
//	GET  /api/reminder-settings                   list (businessUnitId, sourceType, active, limit, cursor)
//	POST /api/reminder-settings                   create (Idempotency-Key; guid optional)
//	GET  /api/reminder-settings/{guid}            read (ETag)
//	PUT  /api/reminder-settings/{guid}            replace (If-Match required; docs/architecture.md#settings-changes rules)
//	POST /api/reminder-settings/{guid}/deactivate deactivate (If-Match required)
package settingsapi
