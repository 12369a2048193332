package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Every route the runtime serves declares the role it needs in the one table
// (shared/app/roles.go); a route added without one fails here with the line to add. The
// table has no row for a route that is not served.
func TestEveryRouteDeclaresARole(t *testing.T) {
	e := newScopeEnv(t)
	served := map[string]bool{}
	for _, p := range e.rt.Functions.HTTPPatterns() {
		served[p] = true
		if _, ok := app.RouteRole(p); !ok {
			t.Error(httpapi.MissingRoleHint(p))
		}
	}
	// A route that changes state needs operate or admin, but for the few named here.
	readWrites := map[string]bool{
		"POST /api/inbox/{recipientId}/messages/{id}/read": true,                                   // the member app marks its own message read
		"POST /api/console/login":                          true, "POST /api/console/logout": true, // the sign-in itself
		"POST /api/templates/{key}/preview":  true, // renders, writes nothing
		"POST /api/console/template-preview": true, // renders the draft, writes nothing
		"POST /api/unsubscribe":              true, // the recipient's own one-click opt-out; its signed token is the credential
	}
	// Ingest writes: events, and the member app's push devices, which the domain app registers.
	ingestWrites := map[string]bool{"POST /api/events": true, app.LocalEventsPath: true,
		"PUT /api/devices/{customerId}/{token}": true, "DELETE /api/devices/{customerId}/{token}": true,
		"POST /api/preferences/sms-inbound": true} // ACS's inbound SMS (STOP) through Event Grid
	for _, p := range app.RoutePatterns() {
		r, _ := app.RouteRole(p)
		if !strings.HasPrefix(p, "GET ") && !readWrites[p] && r != httpapi.RoleOperate && r != httpapi.RoleAdmin &&
			!(r == httpapi.RoleIngest && ingestWrites[p]) {
			t.Errorf("%q changes state but needs only %s: declare operate or admin in shared/app/roles.go", p, r)
		}
		if !served[p] && p != app.MetricsPattern { // MetricsPattern: served beside the router
			t.Errorf("routeRoles in shared/app/roles.go names %q, which is not served: remove it", p)
		}
	}
}

// A route the table does not name is refused (403) for every credential, the bootstrap
// token included, in local serve and in handler mode (the Functions host forwards the
// function.json route to the same mux): fail closed, never open.
func TestRouteWithoutRoleIsRefused(t *testing.T) {
	e := newScopeEnv(t)
	e.rt.Functions.RegisterHTTP("GET /api/support/undeclared", e.rt.API.Handler(func(w http.ResponseWriter, r *http.Request) error {
		httpapi.WriteJSON(w, 200, map[string]string{"ok": "yes"})
		return nil
	}))
	for _, hostMode := range []bool{false, true} {
		req := httptest.NewRequest("GET", "/api/support/undeclared", nil)
		req.Header.Set("Authorization", "Bearer "+scopeToken)
		rec := httptest.NewRecorder()
		e.rt.ListenerHandler(hostMode).ServeHTTP(rec, req)
		if rec.Code != 403 {
			t.Errorf("hostMode %v: %d %s, want 403", hostMode, rec.Code, rec.Body)
		}
	}
}
