package app_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/httpapi"
)

// TestEveryRouteByPrincipalAndUnit is the route × principal (role, scope) × target unit
// table (issue 37): every served route, by the role routeRoles declares for it, with an API
// key of each role over the served units, an admin key of a unit outside the deployment's
// cap, and a revoked key; each against bu-a's things (in scope) and bu-b's (out of scope).
//
//   - a key whose role does not include the route's: 403, nothing written, in local serve
//     and through the custom handler's listener alike (the function.json routes reach the
//     same mux, so r.Pattern names the same row);
//   - a revoked key: 401; the console (bootstrap token only, docs/security.md#console): 401;
//   - the admin key of bu-b (capped to no unit): what an unknown id answers, nothing written;
//   - a key whose role includes the route's: out of scope, what an unknown id answers, with no
//     bu-b in it; in scope, the narrowest such key gets the route's in-scope answer (and
//     writes, for a writing route) exactly as the bootstrap token does.
func TestEveryRouteByPrincipalAndUnit(t *testing.T) {
	table := routeTable()
	probe := newScopeEnv(t)
	for _, p := range probe.rt.Functions.HTTPPatterns() {
		c, ok := table[p]
		if !ok {
			t.Errorf("route %q is served but not in the route table: add it", p)
			continue
		}
		need, ok := app.RouteRole(p)
		if !ok {
			t.Error(httpapi.MissingRoleHint(p))
			continue
		}
		t.Run(strings.NewReplacer("/", "_", " ", "_").Replace(p), func(t *testing.T) {
			e := newScopeEnv(t)
			console := strings.Contains(p, "/api/console/")
			var narrowest *keyPrincipal
			for _, kp := range keyPrincipals {
				if !kp.revoked && kp.units == "bu-a,bu-c" && kp.role.Includes(need) {
					narrowest = &kp
					break
				}
			}
			for _, scope := range []string{"out of scope", "in scope"} {
				u, unitWant := e.b, c.out
				if scope == "in scope" {
					u = e.a
				}
				r := c.req(u)
				for _, kp := range keyPrincipals {
					want := unitWant
					switch {
					case c.public:
						// its own credential (the link's signed token): the key changes nothing
					case console || kp.revoked:
						want = http.StatusUnauthorized
					case !kp.role.Includes(need):
						want = http.StatusForbidden
					case kp.units == "bu-b":
						want = c.out
					case scope == "in scope":
						continue // the narrowest sufficient key, below
					}
					handlers := []http.Handler{e.h}
					if want == http.StatusForbidden {
						handlers = append(handlers, e.rt.ListenerHandler(true))
					}
					for i, h := range handlers {
						before := e.fingerprint(t)
						rec := e.doOn(h, r, e.keys[kp.name])
						// A dozen failed sign-ins from one address are slowed (docs/security.md#sessions):
						// after the first few, 429 with Retry-After is the refusal.
						slowed := p == "POST /api/console/login" && rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") != ""
						if rec.Code != want && !slowed {
							t.Errorf("%s %s (%s needs %s; %s, %s, listener %d): %d %s, want %d", r.method, r.path, p, need, kp.name, scope, i, rec.Code, rec.Body, want)
						}
						if e.fingerprint(t) != before {
							t.Errorf("%s %s (%s, %s) answered %d but wrote something", r.method, r.path, kp.name, scope, rec.Code)
						}
						if rec.Code/100 == 2 && bytes.Contains(rec.Body.Bytes(), []byte(e.b.bu)) {
							t.Errorf("%s %s (%s, %s): an answer shows bu-b: %s", r.method, r.path, kp.name, scope, rec.Body)
						}
					}
				}
			}
			if console {
				return
			}
			if narrowest == nil {
				t.Fatalf("no key's role includes %s", need)
			}
			r := c.req(e.a)
			before := e.fingerprint(t)
			rec := e.do(r, e.keys[narrowest.name])
			if rec.Code != c.in {
				t.Errorf("%s %s (%s, in scope): %d %s, want %d %s", r.method, r.path, narrowest.name, rec.Code, rec.Body, c.in, c.inNote)
			}
			if c.writes && rec.Code/100 == 2 && e.fingerprint(t) == before {
				t.Errorf("%s %s (%s): answered %d but wrote nothing", r.method, r.path, narrowest.name, rec.Code)
			}
		})
	}
}
