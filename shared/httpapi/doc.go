// Package httpapi holds what every HTTP API of the platform shares, so the route handlers
// (reminder settings, report subscriptions, support) stay thin:
//
//   - One typed endpoint (Endpoint[Req, Resp]): every JSON route is declared once — method,
//     path, where the business unit is named, If-Match, the audited operator, the body,
//     paging, success status, ETag and the service call — and Serve runs the one prelude in
//     one order before Call (docs/conventions.md#adding-an-api-route). Mount registers a
//     package's routes; Meta is what openapitest checks against the OpenAPI documents.
//
//   - Problem details (RFC 9457): every error answer is application/problem+json with type,
//     title, status, detail, the stable error code and, for validation, one entry per field.
//     WriteError is the one place that maps error codes to statuses:
//
//     automation.CodeMalformed              400  unreadable JSON, unknown field, bad query
//     automation.CodeUnauthorized           401  missing, wrong, revoked or expired credential
//     automation.CodeForbidden              403  the credential's roles lack the route's role
//     automation.CodeNotFound, ErrNotFound  404  unknown, or outside the caller's business units
//     automation.CodeConflict, ErrConflict  409  state conflict
//     automation.CodeInProgress             409  same Idempotency-Key still running
//     automation.CodePreconditionFailed     412  If-Match names an old Version
//     store.ErrLeaseLost                    412  the Version moved on between read and write
//     automation.CodeInvalidInput           422  validation, with field errors
//     automation.CodeIdempotencyMismatch    422  Idempotency-Key reused with another body
//     CodeContentTooLarge                   413  body over Options.MaxBodyBytes (announced or chunked)
//     automation.CodePreconditionRequired   428  update without If-Match
//     automation.CodeTooManyRequests        429  a throttled credential or a tenant over its quota, with Retry-After
//     automation.RetryAfter(d, …), no code  503  with Retry-After: d in whole seconds
//     anything else                         500  no detail leaves the process; it is logged
//
//   - Strict JSON bodies (DecodeJSON: unknown fields, members named twice, bytes that are
//     not UTF-8 and trailing data rejected, size bounded) and strict query strings (a
//     malformed query string is refused by API.Handler; Query rejects unknown parameters).
//
//   - Optimistic concurrency on the integer Version of a resource: ETag is the strong tag
//     "<version>", If-Match must name it (IfMatch).
//
//   - Idempotency-Key on POST (docs/api-conventions.md#idempotency-key): same key + same body → the stored
//     response (with header Idempotent-Replayed: true); same key + another body → 422; while
//     the first request runs → 409 with Retry-After. Records live in SQL
//     (store.IdempotencyStore). Handlers that create resources derive their ids from the key
//     with DeterministicID, so a retry after a crash between "created" and "response stored"
//     finds the same resource instead of creating a second one.
//
//   - Who is calling (Caller, Principal; docs/security.md): a bearer credential — the
//     bootstrap token (Options.Token, constant-time compare), or what Options.Authenticator
//     knows (API keys, OIDC tokens, recipient tokens) — resolves to a Principal with roles
//     and a business-unit scope. Each route's role is looked up by r.Pattern in
//     Options.RouteRoles (a route missing there is refused, 403). The caller sees the
//     configured units, capped by the principal's, narrowed by one X-Automation-Business-Units
//     header (repeated, or "*" mixed with ids: 400). The operator audited is the principal,
//     the stated X-Automation-Operator (or X-MS-CLIENT-PRINCIPAL-NAME) following as the
//     reason. Options.Admit applies per-tenant quotas; Throttle slows failing credentials. A
//     resource of another business unit answers 404, never 403, so ids cannot be probed.
//
//   - Opaque page cursors bound to their query (EncodeCursor / DecodeCursor): a cursor of
//     other filters is refused. They are not signed: a position is no secret, and every
//     query applies the caller's scope whatever the cursor says. Every list answers one
//     Page ({"items":[…],"nextCursor":"…"}), built by NewPage.
package httpapi
