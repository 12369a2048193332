// Package keysapi is the admin HTTP API of API keys (/api/keys, the ApiKeysApi function;
// docs/security.md#api-keys): httpapi.Endpoint declarations (Routes) over apikey.Service,
// described by openapi.yaml (OpenAPI 3.1, checked both ways and against real answers, and
// bundled into docs/openapi.json by shared/api/apidoc).
//
// Keys are platform-wide: only an admin whose scope is every business unit manages them (a
// narrower caller gets 404, as for the event registry), since a key may name any unit.
// The API it is registered with must have no Idempotency store: a replayed response would
// be the stored key itself (httpapi refuses the Idempotency-Key header then, with 400).
package keysapi
