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
// answers as for no session (the sign-in page, 401; a form post does nothing). The row holds
// the SHA-256 of the cookie, never the cookie. Guard also slows sign-in storms per client
// address (httpapi.Throttle): after a few wrong tokens the sign-in answers 429 with
// Retry-After, with a delay that grows while the storm lasts, and the right token works once
// the delay has passed.
package session
