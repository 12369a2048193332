// Package reportapi is the HTTP face of report subscriptions (docs/architecture.md#report-subscriptions): thin
// handlers that decode a request, call one report.Service method and answer with
// shared/httpapi (problem details, strict JSON and query strings, ETag/If-Match on Version,
// Idempotency-Key, cursors, the caller's business-unit scope - another business unit's
// resource is 404). Routes are served by two Azure Functions whose function.json routes
// cover them - ReportSubscriptionsApi (report-subscriptions/{*path}) and ReportRunsApi
// (report-runs/{*path}) - and by `serve` through the same funchost router. openapi.json
// documents them; a test keeps it and Routes in step.
package reportapi
