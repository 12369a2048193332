// Package session keeps the console's sign-in sessions server-side
// (docs/security.md#sessions). The console (shared/api/console) signs its session cookie
// itself; Guard wraps its routes in the composition root and makes the cookie count only
// while its row in the ConsoleSession table is live:
//
//	sign-in (a new cookie is set) ──▶ live ──logout──────────────▶ ended (the cookie is refused at once)
//	                                    ├──idle for Idle──────────▶ refused
//	                                    └──Absolute after sign-in─▶ refused
//
// A request whose cookie has no live row reaches the console without it, so the console
// answers as for no session (the sign-in page, 401; a form post does nothing).
//
// Every request also re-checks what the session signed in with (Guard.Resolve, from the
// row's KeyPrefix or Claims, which the sign-in named with Begin): the API key as it stands
// (revoked or rotated out: the session ends, ReasonRevoked), or the person's kept claims
// mapped with today's configuration (no role left: ReasonRoles). The principal it
// re-establishes reaches the console through PrincipalFrom, so the roles and units that count
// are today's, never the cookie's. Admin.EndPrincipal ends a principal's sessions on an
// admin's word (ReasonAdmin). The row holds
// the SHA-256 of the cookie, never the cookie. Guard also slows sign-in storms per client
// address (httpapi.Throttle; every refusal, 401, of a SignInPatterns route counts: the token
// form's and the OIDC callback's): after a few failures the sign-in answers 429 with
// Retry-After, with a delay that grows while the storm lasts, and the right token works once
// the delay has passed.
package session
