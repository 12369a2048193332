package app

import (
	"context"
	"maps"
	"slices"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/recipienttoken"
)

// routeRoles is the role every HTTP route needs (docs/security.md#roles), keyed by its
// http.ServeMux pattern exactly as the API package registers it. It is the one place a
// route's role is declared: httpapi.API.Handler looks r.Pattern up here in local serve and
// in handler mode alike (the Functions host forwards each function.json route to the same
// mux), and refuses a route that is missing with 403. TestEveryRouteDeclaresARole fails on
// a served route missing here, naming the line to add.
//
// The console's routes are listed too: the bootstrap token (AUTOMATION_API_TOKEN) and its
// sessions are an admin; a person's OIDC session may use a console route only with the role
// here (console.Options.RoleOf, docs/security.md#console). The sign-in routes are open to
// everyone and listed with read.
//
// Roles: ingest posts events and registers the member app's push devices (the domain
// app's backend does both); read reads (the inbox included); operate acts on what exists
// (support actions, releases, resolves, requeues, report runs); admin changes configuration
// (business units, settings, registry, campaigns, budgets, subscriptions, roll-out, keys).
var routeRoles = httpapi.RouteRoles{
	// Ingest.
	LocalEventsPath:    httpapi.RoleIngest,
	"POST /api/events": httpapi.RoleIngest,

	// Push devices (docs/channels.md#device-registry): the domain app registers them.
	"PUT /api/devices/{customerId}/{token}":    httpapi.RoleIngest,
	"DELETE /api/devices/{customerId}/{token}": httpapi.RoleIngest,
	"GET /api/devices/{customerId}":            httpapi.RoleRead,

	// Recipient preferences and quiet hours (docs/channels.md#recipient-preferences): support
	// changes a recipient's opt-outs (operate); a unit's quiet hours are configuration
	// (admin); ACS's inbound SMS arrive through Event Grid with an ingest key. The one-click
	// unsubscribe carries its own credential (the signed token) and is served without the
	// API's guard; it is listed with read, like the console's sign-in.
	"GET /api/preferences/recipients/{recipientId}": httpapi.RoleRead,
	"PUT /api/preferences/recipients/{recipientId}": httpapi.RoleOperate,
	"GET /api/preferences/quiet-hours":              httpapi.RoleRead,
	"PUT /api/preferences/quiet-hours":              httpapi.RoleAdmin,
	"DELETE /api/preferences/quiet-hours":           httpapi.RoleAdmin,
	"POST /api/preferences/sms-inbound":             httpapi.RoleIngest,
	"GET /api/unsubscribe":                          httpapi.RoleRead,
	"POST /api/unsubscribe":                         httpapi.RoleRead,

	// Templates (docs/channels.md#templates): the preview renders and writes nothing.
	"GET /api/templates/{key}":          httpapi.RoleRead,
	"PUT /api/templates/{key}":          httpapi.RoleAdmin,
	"DELETE /api/templates/{key}":       httpapi.RoleAdmin,
	"POST /api/templates/{key}/preview": httpapi.RoleRead,
	// A test send reaches a real recipient: the template's authors only.
	"POST /api/templates/{key}/test-send": httpapi.RoleAdmin,

	// Business units and reminder settings.
	"GET /api/business-units":                       httpapi.RoleRead,
	"GET /api/business-units/{id}":                  httpapi.RoleRead,
	"POST /api/business-units":                      httpapi.RoleAdmin,
	"PUT /api/business-units/{id}":                  httpapi.RoleAdmin,
	"GET /api/reminder-settings":                    httpapi.RoleRead,
	"GET /api/reminder-settings/{guid}":             httpapi.RoleRead,
	"POST /api/reminder-settings":                   httpapi.RoleAdmin,
	"PUT /api/reminder-settings/{guid}":             httpapi.RoleAdmin,
	"POST /api/reminder-settings/{guid}/deactivate": httpapi.RoleAdmin,

	// Event gateway metrics and the event registry.
	"GET /api/events/metrics":                                      httpapi.RoleRead,
	"GET /api/event-registry/types":                                httpapi.RoleRead,
	"GET /api/event-registry/types/{eventType}":                    httpapi.RoleRead,
	"GET /api/event-registry/types/{eventType}/versions":           httpapi.RoleRead,
	"GET /api/event-registry/types/{eventType}/versions/{version}": httpapi.RoleRead,
	"GET /api/event-registry/export":                               httpapi.RoleRead,
	"POST /api/event-registry/types":                               httpapi.RoleAdmin,
	"PUT /api/event-registry/types/{eventType}":                    httpapi.RoleAdmin,
	"POST /api/event-registry/import":                              httpapi.RoleAdmin,

	// Support.
	"GET /api/support/scheduler-rows":                            httpapi.RoleRead,
	"GET /api/support/scheduler-rows/{id}":                       httpapi.RoleRead,
	"GET /api/support/explain":                                   httpapi.RoleRead,
	"GET /api/support/metrics":                                   httpapi.RoleRead,
	"GET /api/support/dead-letters":                              httpapi.RoleRead,
	"GET /api/support/deliveries/unknown":                        httpapi.RoleRead,
	"GET /api/support/deliveries/held":                           httpapi.RoleRead,
	"GET /api/support/deliveries/counts":                         httpapi.RoleRead,
	"POST /api/support/scheduler-rows/{id}/release":              httpapi.RoleOperate,
	"POST /api/support/scheduler-rows/{id}/retry":                httpapi.RoleOperate,
	"POST /api/support/scheduler-rows/{id}/cancel":               httpapi.RoleOperate,
	"POST /api/support/scheduler-rows/{id}/run-now":              httpapi.RoleOperate,
	"POST /api/support/releases":                                 httpapi.RoleOperate,
	"POST /api/support/dead-letters/requeue":                     httpapi.RoleOperate,
	"POST /api/support/dead-letters/requeue-many":                httpapi.RoleOperate,
	"POST /api/support/dead-letters/discard":                     httpapi.RoleOperate,
	"POST /api/support/deliveries/unknown/{deliveryKey}/resolve": httpapi.RoleOperate,
	"POST /api/support/deliveries/{deliveryKey}/release":         httpapi.RoleOperate,

	// Budgets and fees.
	"GET /api/budgets/campaigns/{campaignId}":          httpapi.RoleRead,
	"GET /api/budgets/campaigns/{campaignId}/costs":    httpapi.RoleRead,
	"GET /api/budgets/price-policies":                  httpapi.RoleRead,
	"GET /api/budgets/price-policies/{actionType}":     httpapi.RoleRead,
	"GET /api/budgets/fees/unknown":                    httpapi.RoleRead,
	"GET /api/budgets/waiting":                         httpapi.RoleRead,
	"PUT /api/budgets/campaigns/{campaignId}":          httpapi.RoleAdmin,
	"POST /api/budgets/campaigns/{campaignId}/resume":  httpapi.RoleAdmin,
	"PUT /api/budgets/price-policies/{actionType}":     httpapi.RoleAdmin,
	"POST /api/budgets/fees/unknown/{orderId}/resolve": httpapi.RoleOperate,

	// Reports.
	"GET /api/report-subscriptions":                                            httpapi.RoleRead,
	"GET /api/report-subscriptions/{guid}":                                     httpapi.RoleRead,
	"GET /api/report-subscriptions/{guid}/automation-runs":                     httpapi.RoleRead,
	"GET /api/report-subscriptions/{guid}/automation-runs/{runKeyHash}":        httpapi.RoleRead,
	"GET /api/report-subscriptions/{guid}/shadow-comparison":                   httpapi.RoleRead,
	"GET /api/report-runs/failed":                                              httpapi.RoleRead,
	"GET /api/report-runs/ownership":                                           httpapi.RoleRead,
	"GET /api/report-runs/rollout":                                             httpapi.RoleRead,
	"GET /api/report-runs/{runKeyHash}/file":                                   httpapi.RoleRead,
	"POST /api/report-subscriptions":                                           httpapi.RoleAdmin,
	"PUT /api/report-subscriptions/{guid}":                                     httpapi.RoleAdmin,
	"DELETE /api/report-subscriptions/{guid}":                                  httpapi.RoleAdmin,
	"POST /api/report-subscriptions/{guid}/runs":                               httpapi.RoleOperate,
	"POST /api/report-subscriptions/{guid}/automation-runs/{runKeyHash}/retry": httpapi.RoleOperate,
	"POST /api/report-runs/ownership/acquire":                                  httpapi.RoleOperate,
	"POST /api/report-runs/ownership/delivery-created":                         httpapi.RoleOperate,
	"POST /api/report-runs/ownership/release":                                  httpapi.RoleOperate,
	"PUT /api/report-runs/rollout/business-units/{businessUnitId}":             httpapi.RoleAdmin,
	"DELETE /api/report-runs/rollout/business-units/{businessUnitId}":          httpapi.RoleAdmin,
	"PUT /api/report-runs/rollout/subscriptions/{guid}":                        httpapi.RoleAdmin,
	"DELETE /api/report-runs/rollout/subscriptions/{guid}":                     httpapi.RoleAdmin,

	// Attributes.
	"GET /api/attributes/{entityType}":            httpapi.RoleRead,
	"GET /api/attributes/{entityType}/{entityId}": httpapi.RoleRead,

	// Campaigns.
	"GET /api/campaigns":                                                    httpapi.RoleRead,
	"GET /api/campaigns/_metrics":                                           httpapi.RoleRead,
	"GET /api/campaigns/{campaignId}":                                       httpapi.RoleRead,
	"GET /api/campaigns/{campaignId}/counts":                                httpapi.RoleRead,
	"GET /api/campaigns/{campaignId}/executions":                            httpapi.RoleRead,
	"GET /api/campaigns/{campaignId}/unknown-commands":                      httpapi.RoleRead,
	"PUT /api/campaigns/{campaignId}":                                       httpapi.RoleAdmin,
	"POST /api/campaigns/{campaignId}/rerun":                                httpapi.RoleOperate,
	"POST /api/campaigns/{campaignId}/unknown-commands/{commandId}/resolve": httpapi.RoleOperate,

	// Inbox (the member app's reads, marking a message read included).
	"GET /api/inbox/{recipientId}":                     httpapi.RoleRead,
	"GET /api/inbox/{recipientId}/stream":              httpapi.RoleRead,
	"POST /api/inbox/{recipientId}/messages/{id}/read": httpapi.RoleRead,

	// API keys (platform-wide: an admin of every unit).
	"GET /api/openapi.json":          httpapi.RoleRead, // the product's API description: no unit, no data
	MetricsPattern:                   httpapi.RoleRead, // GET /metrics, the Prometheus scrape, when it has no token of its own (AUTOMATION_METRICS_TOKEN)
	"GET /api/keys":                  httpapi.RoleAdmin,
	"POST /api/keys":                 httpapi.RoleAdmin,
	"GET /api/keys/{prefix}":         httpapi.RoleAdmin,
	"POST /api/keys/{prefix}/revoke": httpapi.RoleAdmin,
	"POST /api/keys/{prefix}/rotate": httpapi.RoleAdmin,
	// Ending a principal's console sessions (platform-wide, like keys).
	"POST /api/console-sessions/end": httpapi.RoleAdmin,

	// Console.
	"GET /api/console/":                               httpapi.RoleRead,
	"GET /api/console/static/{file}":                  httpapi.RoleRead,
	"POST /api/console/login":                         httpapi.RoleRead,
	"GET /api/console/oidc/start":                     httpapi.RoleRead,
	"GET /api/console/oidc/callback":                  httpapi.RoleRead,
	"POST /api/console/logout":                        httpapi.RoleRead,
	"GET /api/console/rows":                           httpapi.RoleRead,
	"GET /api/console/rows/{id}":                      httpapi.RoleRead,
	"POST /api/console/rows/{id}/{action}":            httpapi.RoleOperate,
	"GET /api/console/releases":                       httpapi.RoleRead,
	"POST /api/console/releases":                      httpapi.RoleOperate,
	"GET /api/console/releases/watch":                 httpapi.RoleRead,
	"GET /api/console/unknown":                        httpapi.RoleRead,
	"POST /api/console/unknown/{deliveryKey}/resolve": httpapi.RoleOperate,
	"GET /api/console/reports":                        httpapi.RoleRead,
	"GET /api/console/events":                         httpapi.RoleRead,
	"GET /api/console/registry":                       httpapi.RoleRead,
	"POST /api/console/registry":                      httpapi.RoleAdmin, // create, save, roll back: as the registry API's POST and PUT
	"GET /api/console/attributes":                     httpapi.RoleRead,
	"GET /api/console/campaigns":                      httpapi.RoleRead,
	"POST /api/console/campaigns":                     httpapi.RoleOperate,
	"GET /api/console/campaign-status":                httpapi.RoleRead,
	"POST /api/console/campaign-status":               httpapi.RoleAdmin, // pause, resume, stop: as the campaigns API's PUT
	"GET /api/console/budgets":                        httpapi.RoleRead,
	"POST /api/console/budgets":                       httpapi.RoleAdmin, // raise maxCost, resume: as the budgets API's PUT and resume
	"GET /api/console/fees":                           httpapi.RoleRead,
	"GET /api/console/activity":                       httpapi.RoleRead,
	"GET /api/console/templates":                      httpapi.RoleRead,
	"POST /api/console/templates":                     httpapi.RoleAdmin, // a new version: as the templates API's PUT
	"GET /api/console/template-preview":               httpapi.RoleRead,
	"POST /api/console/template-preview":              httpapi.RoleRead, // renders the draft, writes nothing: as the API's preview
	"POST /api/console/fees":                          httpapi.RoleOperate,
	"GET /api/console/dead-letters":                   httpapi.RoleRead,
	"POST /api/console/dead-letters":                  httpapi.RoleOperate,
}

// RouteRole returns the role the route with ServeMux pattern needs, and whether one is
// declared (tests, docs).
func RouteRole(pattern string) (httpapi.Role, bool) {
	r, ok := routeRoles[pattern]
	return r, ok
}

// RoutePatterns returns the patterns routeRoles declares, sorted.
func RoutePatterns() []string {
	return slices.Clip(slices.Sorted(maps.Keys(routeRoles)))
}

// recipientRoutes are the routes a recipient token opens, for its own recipient only
// (docs/security.md#recipient-tokens).
var recipientRoutes = map[string]bool{
	"GET /api/inbox/{recipientId}":                     true,
	"GET /api/inbox/{recipientId}/stream":              true,
	"POST /api/inbox/{recipientId}/messages/{id}/read": true,
}

// queryCredentialRoutes also take the credential from ?access_token=: a browser's
// EventSource cannot send a header.
var queryCredentialRoutes = map[string]bool{"GET /api/inbox/{recipientId}/stream": true}

// credentials sends a bearer credential to the authenticator its shape names: an API key
// ("ak_<prefix>_<secret>") to the key store, a recipient token (HS256 with a known kid) to
// its verifier, anything else to the OIDC verifier (nil ones: unknown credential).
type credentials struct {
	keys       httpapi.Authenticator
	recipients *recipienttoken.Verifier
	tokens     httpapi.Authenticator
}

func (c credentials) Authenticate(ctx context.Context, credential string) (httpapi.Principal, error) {
	if _, ok := apikey.PrefixOf(credential); ok {
		return c.keys.Authenticate(ctx, credential)
	}
	if c.recipients != nil && c.recipients.Is(credential) {
		return c.recipients.Authenticate(ctx, credential)
	}
	if c.tokens != nil {
		return c.tokens.Authenticate(ctx, credential)
	}
	return httpapi.Principal{}, httpapi.ErrUnknownCredential
}
