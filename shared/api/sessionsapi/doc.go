// Package sessionsapi is the admin HTTP API that ends console sessions
// (/api/console-sessions, the ConsoleSessionsApi function; docs/security.md#sessions):
// POST /api/console-sessions/end {"principal": "oidc:jane"} ends every live console session
// of that principal at once (session.Admin.EndPrincipal), for a person who left or whose
// access changed at the identity provider. Described by openapi.yaml (checked both ways
// against the router, and bundled into docs/openapi.json by shared/api/apidoc).
//
// Sessions are platform-wide: only an admin whose scope is every business unit ends them (a
// narrower caller gets 404, as for API keys).
package sessionsapi
