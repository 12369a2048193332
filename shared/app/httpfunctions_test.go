package app_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/funchost/funchosttest"
	"github.com/automation-platform/automation/shared/topology"
)

// routeMatches reports whether an Azure Functions route template (below the "api" prefix)
// matches a ServeMux path pattern: literal segments equal, {name} one segment, {*name} the
// rest (possibly nothing).
func routeMatches(template, path string) bool {
	ts := strings.Split(strings.Trim(template, "/"), "/")
	ps := strings.Split(strings.Trim(strings.TrimPrefix(path, "/api/"), "/"), "/")
	for i, t := range ts {
		if strings.HasPrefix(t, "{*") {
			return true
		}
		if i >= len(ps) {
			return false
		}
		if !(strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}")) && t != ps[i] {
			return false
		}
	}
	return len(ps) == len(ts)
}

// Every HTTP route the router serves in Azure has exactly one function folder whose
// httpTrigger (authLevel function, with an http output for forwarding) covers its path and
// method; every HTTP function folder covers at least one route.
func TestHTTPFunctionFoldersCoverRoutes(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, nil)
	defs := funchosttest.Folders(t, "../../functions")
	var httpDefs []funchost.FunctionDef
	for _, d := range defs {
		if d.Trigger.Type != funchost.TriggerHTTP {
			continue
		}
		httpDefs = append(httpDefs, d)
		hasOut := false
		for _, b := range d.Bindings {
			hasOut = hasOut || (b.Type == "http" && b.Direction == "out")
		}
		// The console is the one anonymous HTTP function: a browser cannot send the function
		// key on navigation, so the console signs in with the API token itself and answers
		// 503 when none is configured (shared/api/console, docs/console.md#sign-in).
		// Unsubscribe is anonymous too: a mailbox provider's one-click POST (RFC 8058) carries
		// no key; the link's signed token is its credential (docs/channels.md#one-click-unsubscribe).
		level := "function"
		if d.Name == topology.Console || d.Name == topology.Unsubscribe {
			level = "anonymous"
		}
		if d.Trigger.Name != "req" || d.Trigger.AuthLevel != level || d.Trigger.Route == "" || !hasOut || len(d.Bindings) != 2 {
			t.Errorf("%s: want exactly an httpTrigger \"req\" (authLevel function, a route) and an http output: %+v", d.Name, d.Bindings)
		}
	}
	used := map[string]bool{}
	for _, p := range e.rt.Functions.HTTPPatterns() {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		if path == app.LocalEventsPath {
			continue // serve only: stands in for Service Bus
		}
		var covering []string
		for _, d := range httpDefs {
			if routeMatches(d.Trigger.Route, path) && slices.Contains(d.Trigger.Methods, strings.ToLower(method)) {
				covering = append(covering, d.Name)
			}
		}
		if len(covering) != 1 {
			t.Errorf("route %s is covered by %v, want exactly one function folder", p, covering)
			continue
		}
		used[covering[0]] = true
	}
	for _, d := range httpDefs {
		if !used[d.Name] {
			t.Errorf("HTTP function %s covers no registered route", d.Name)
		}
	}
	if len(used) == 0 {
		t.Fatal("no HTTP routes checked")
	}
}

func TestRouteMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tpl, path string
		want      bool
	}{
		{"reminder-settings/{*rest}", "/api/reminder-settings", true},
		{"reminder-settings/{*rest}", "/api/reminder-settings/{guid}/deactivate", true},
		{"reminder-settings/{*rest}", "/api/business-units", false},
		{"orders/{id}", "/api/orders/{id}", true},
		{"orders/{id}", "/api/orders", false},
	}
	for _, c := range cases {
		if got := routeMatches(c.tpl, c.path); got != c.want {
			t.Errorf("%s vs %s: %v", c.tpl, c.path, got)
		}
	}
}
