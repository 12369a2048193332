// Package console is the support console in the browser (docs/console.md): server-rendered
// pages (html/template, with the stylesheet embedded in the binary; no script is needed) over
// the same services the support API uses — shared/support for rows, explain, metrics,
// throughput and the row actions, shared/delivery for the UNKNOWN queue and shared/report for
// subscriptions, runs and ownership. Handlers only read a form or a query, call one service
// method and render its answer; every rule stays in the services.
//
//	GET  /api/console/                      overview: due backlog, oldest due age, holds,
//	                                        outbox age now and charted from the metrics
//	                                        history (support.Sampler), deliveries per minute
//	GET  /api/console/rows                  search: key, source, business unit, status,
//	                                        on hold; cursor paging
//	GET  /api/console/rows/{id}             detail: timeline, deliveries, explain, diagnostics
//	POST /api/console/rows/{id}/{action}    release, retry, cancel, run-now (operator,
//	                                        reason, the version read: If-Match semantics)
//	GET  /api/console/releases              paced release form; POST sets one up
//	GET  /api/console/releases/watch        where a paced release's rows are now
//	GET  /api/console/unknown               UNKNOWN deliveries; POST …/{key}/resolve
//	GET  /api/console/reports               subscriptions, runs, ownership (rollout modes)
//	POST /api/console/login, /logout        sign in with the API token, sign out
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
//	                                        the version read; audited)
//	GET  /api/console/budgets               a campaign's budget, audit, fees, waiting
//	                                        commands; POST raises maxCost or resumes
//	                                        (budget.Service, the version read)
//	GET  /api/console/fees                  UNKNOWN fees; POST resolves one (revision)
//	GET  /api/console/templates             a unit's templates and versions; POST saves
//	                                        the unit's override (delivery.Templates)
//	POST /api/console/template-preview      renders a draft with a sample payload
//	GET  /api/console/activity              a recipient's activity feed (one cursor)
//
// Sign-in state machine of one browser:
//
//	anonymous ──POST login (the API token)──▶ signed in (cookie: expiry, nonce, MAC)
//	signed in ──the lifetime passes / POST logout / the token changes──▶ anonymous
//
// An anonymous request gets the sign-in form with 401; a request with the Authorization
// header (the bearer token) is authenticated without a cookie and needs no CSRF token. Every
// POST from a cookie session must carry the session's CSRF token and must not be marked
// cross-site (Sec-Fetch-Site, Origin). Without a configured token the console is served only
// when Options.WithoutToken says so (serve on 127.0.0.1); otherwise it answers 503.
package console
