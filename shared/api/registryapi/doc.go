// Package registryapi manages the event registry over HTTP (the EventRegistryApi function,
// docs/gateway.md#registry-api): every version kept, ETag/If-Match on changes, the operator
// named on every change, import and export as one JSON file. The registry is platform-wide,
// so only a caller that sees every business unit reaches it; any other caller gets 404, as
// for an unknown resource (docs/api-conventions.md#business-unit-scope). Thin handlers.
package registryapi
