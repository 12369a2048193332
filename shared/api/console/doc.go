// Package console is the support console in the browser (docs/console.md): server-rendered
// pages (html/template, with the stylesheet embedded in the binary; no script is needed) over
// the same services the support API uses — shared/support for rows, explain, metrics,
// throughput and the row actions, shared/delivery for the UNKNOWN queue and shared/report for
// subscriptions, runs and ownership. Handlers only read a form or a query, call one service
// method and render its answer; every rule stays in the services.
//
//	GET  /api/console/                      overview: due backlog, oldest due age, holds,
//	                                        outbox age now and charted from the metrics
//	                                        history (support.Sampler) with the reading now as
//	                                        each chart's last point, deliveries and campaign
//	                                        commands per minute
//	GET  /api/console/rows                  search: key, source, business unit, status,
//	                                        on hold; cursor paging
//	GET  /api/console/rows/{id}             detail: timeline, deliveries, explain, diagnostics
//	POST /api/console/rows/{id}/{action}    release, retry, cancel, run-now (operator,
//	                                        reason, the version read: If-Match semantics)
//	GET  /api/console/releases              paced release form; POST sets one up
//	GET  /api/console/releases/watch        where a paced release's rows are now
//	GET  /api/console/unknown               UNKNOWN deliveries; POST …/{key}/resolve
//	GET  /api/console/reports               subscriptions, runs, ownership (rollout modes)
//	POST /api/console/login, /logout        sign in with the API token or an API key, sign out
//	GET  /api/console/oidc/start, /callback sign in with OpenID Connect (Options.OIDC)
//	GET  /api/console/static/{file}         the embedded stylesheet
//
// More pages plug in through Options.Pages (Page) with their own navigation entry; this
// package has those of the other services (more.go, budget.go):
//
//	GET  /api/console/events                event metrics (gateway.Service.ReadMetrics)
//	GET  /api/console/registry              event types, versions, a diff (platform
//	                                        callers); POST creates, saves, rolls back
//	                                        (gateway.Admin.Save, the version read)
//	GET  /api/console/attributes            an entity's attributes (attribute.Read)
//	GET  /api/console/campaigns             campaigns; why one is not ACTIVE, its chain
//	                                        with providers and prices, its audit, its
//	                                        executions (filters, cursor paging) and UNKNOWN
//	                                        commands; an execution's history;
//	                                        POST resolves an UNKNOWN command (version)
//	POST /api/console/campaign-status       pause, resume, stop (campaign.Admin.SetStatus,
//	                                        the version read; audited); action=SAVE
//	                                        creates or edits (campaign.Admin.Save, as the
//	                                        campaigns API's PUT; the version read on edit)
//	GET  /api/console/budgets               a campaign's budget, audit, fees, waiting
//	                                        commands; POST creates one, raises maxCost or
//	                                        resumes (budget.Service, the version read)
//	GET  /api/console/fees                  UNKNOWN fees; POST resolves one (revision)
//	GET  /api/console/dead-letters          dead letters of every route (deadletters.go);
//	                                        POST requeues (paced) or discards the ticked ones,
//	                                        each with the ETag read (deadletter.Service)
//	GET  /api/console/templates             a unit's templates and versions; POST saves
//	                                        the unit's override (delivery.Templates)
//	POST /api/console/template-preview      renders a draft with a sample payload
//	GET  /api/console/activity              a recipient's activity feed (one cursor)
//
// Wherever a form asks for a business unit it offers a picker of the units the caller's
// scope sees (units.go, Deps.Units; PageCall.UnitSelect for added pages).
//
// Sign-in state machine of one browser:
//
//	anonymous ──POST login (the API token)──────────▶ signed in (cookie v1: expiry, nonce, MAC)
//	anonymous ──POST login (an API key: read+)──────▶ signed in as the key (cookie v2: + principal)
//	anonymous ──OIDC callback (a person with a role)▶ signed in as the person (cookie v2)
//	signed in ──the lifetime passes / POST logout / the token changes──▶ anonymous
//	signed in ──the key revoked or rotated out / the claims map to no role──▶ anonymous
//
// The last transition is the session guard's (shared/session, in the composition root): it
// re-checks every request and hands the principal as it stands now to the console
// (session.PrincipalFrom), which then counts instead of the cookie's.
//
// An anonymous request gets the sign-in form with 401; a request with the Authorization
// header (the bearer token) is authenticated without a cookie and needs no CSRF token. Every
// POST from a cookie session must carry the session's CSRF token and must not be marked
// cross-site (Sec-Fetch-Site, Origin). Without a configured token the console is served only
// when Options.WithoutToken says so (serve on 127.0.0.1); otherwise it answers 503.
package console
