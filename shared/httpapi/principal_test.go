package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// keys is a fixed set of credentials for the tests.
var keys = httpapi.AuthenticatorFunc(func(_ context.Context, cred string) (httpapi.Principal, error) {
	switch cred {
	case "k-ingest":
		return httpapi.Principal{Name: "key:pos", Roles: []httpapi.Role{httpapi.RoleIngest}, Scope: automation.ParseScope("bu-a")}, nil
	case "k-read":
		return httpapi.Principal{Name: "key:reader", Roles: []httpapi.Role{httpapi.RoleRead}, Scope: automation.ParseScope("bu-a,bu-b")}, nil
	case "k-operate":
		return httpapi.Principal{Name: "key:ops", Roles: []httpapi.Role{httpapi.RoleOperate}, Scope: automation.ParseScope("bu-b")}, nil
	}
	return httpapi.Principal{}, httpapi.ErrUnknownCredential
})

// Each route needs the role the table declares, looked up by the ServeMux pattern; a route
// the table does not name is refused for every credential, the bootstrap token included.
// The scope is the key's, capped by the configured units and narrowed (never widened) by
// the header.
func TestRolesByRoutePatternAndKeyScope(t *testing.T) {
	t.Parallel()
	cap := automation.ParseScope("bu-a,bu-b,bu-c")
	api := httpapi.New(httpapi.Options{Token: "boot", BusinessUnits: &cap, Authenticator: keys, RouteRoles: httpapi.RouteRoles{
		"POST /api/events": httpapi.RoleIngest, "GET /api/rows/{id}": httpapi.RoleRead, "POST /api/rows/{id}/release": httpapi.RoleOperate,
		"PUT /api/units/{id}": httpapi.RoleAdmin,
	}})
	echo := api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		c := httpapi.CallerFrom(r.Context())
		httpapi.WriteJSON(w, 200, map[string]string{"scope": c.Scope.String(), "principal": c.Principal.Name})
		return nil
	})
	mux := http.NewServeMux()
	for _, p := range []string{"POST /api/events", "GET /api/rows/{id}", "POST /api/rows/{id}/release", "PUT /api/units/{id}", "GET /api/undeclared"} {
		mux.Handle(p, echo)
	}
	call := func(method, path, cred string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		if cred != "" {
			r.Header.Set("Authorization", "Bearer "+cred)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		rr := httptest.NewRecorder()
		mux.ServeHTTP(rr, r)
		return rr
	}
	want := map[string]map[string]int{ // credential → route → status
		"boot":      {"POST /api/events": 200, "GET /api/rows/1": 200, "POST /api/rows/1/release": 200, "PUT /api/units/1": 200, "GET /api/undeclared": 403},
		"k-ingest":  {"POST /api/events": 200, "GET /api/rows/1": 403, "POST /api/rows/1/release": 403, "PUT /api/units/1": 403, "GET /api/undeclared": 403},
		"k-read":    {"POST /api/events": 403, "GET /api/rows/1": 200, "POST /api/rows/1/release": 403, "PUT /api/units/1": 403, "GET /api/undeclared": 403},
		"k-operate": {"POST /api/events": 403, "GET /api/rows/1": 200, "POST /api/rows/1/release": 200, "PUT /api/units/1": 403, "GET /api/undeclared": 403},
		"revoked":   {"POST /api/events": 401, "GET /api/rows/1": 401, "POST /api/rows/1/release": 401, "PUT /api/units/1": 401, "GET /api/undeclared": 401},
		"":          {"POST /api/events": 401, "GET /api/rows/1": 401, "POST /api/rows/1/release": 401, "PUT /api/units/1": 401, "GET /api/undeclared": 401},
	}
	for cred, routes := range want {
		for route, code := range routes {
			method, path, _ := strings.Cut(route, " ")
			if rr := call(method, path, cred); rr.Code != code {
				t.Errorf("%s with %q: %d %s, want %d", route, cred, rr.Code, rr.Body, code)
			}
		}
	}
	for _, c := range []struct{ cred, header, scope string }{
		{"boot", "", "bu-a,bu-b,bu-c"}, // the bootstrap token sees the configured units
		{"k-read", "", "bu-a,bu-b"},    // a key sees its own
		{"k-read", "bu-b", "bu-b"},     // narrowed
		{"k-read", "*", "bu-a,bu-b"},   // "*" widens nothing
		{"k-read", "bu-c", ""},         // a unit outside the key is not added
		{"k-operate", "bu-a,bu-b", "bu-b"},
	} {
		var hdr []string
		if c.header != "" {
			hdr = []string{httpapi.HeaderBusinessUnits, c.header}
		}
		rr := call("GET", "/api/rows/1", c.cred, hdr...)
		if rr.Code != 200 || !strings.Contains(rr.Body.String(), `"scope":"`+c.scope+`"`) {
			t.Errorf("%s with header %q: %d %s, want scope %q", c.cred, c.header, rr.Code, rr.Body, c.scope)
		}
	}
	if rr := call("GET", "/api/undeclared", "boot"); !strings.Contains(rr.Body.String(), "declares no role") {
		t.Errorf("undeclared route: %s", rr.Body)
	}
}

func TestRoleIncludes(t *testing.T) {
	t.Parallel()
	for held, needs := range map[httpapi.Role][]httpapi.Role{
		httpapi.RoleAdmin:   {httpapi.RoleIngest, httpapi.RoleRead, httpapi.RoleOperate, httpapi.RoleAdmin},
		httpapi.RoleOperate: {httpapi.RoleRead, httpapi.RoleOperate},
		httpapi.RoleRead:    {httpapi.RoleRead},
		httpapi.RoleIngest:  {httpapi.RoleIngest},
	} {
		for _, need := range httpapi.Roles {
			if got, want := held.Includes(need), containsRole(needs, need); got != want {
				t.Errorf("%s includes %s: %v, want %v", held, need, got, want)
			}
		}
	}
	if _, err := httpapi.ParseRole("role", "root"); err == nil {
		t.Error("role root accepted")
	}
}

func containsRole(rs []httpapi.Role, r httpapi.Role) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// A throttled credential (Throttle) is answered 429 with Retry-After, not 401 or 503.
func TestThrottledCredentialIs429WithRetryAfter(t *testing.T) {
	t.Parallel()
	api := httpapi.New(httpapi.Options{Token: "boot", Authenticator: httpapi.AuthenticatorFunc(func(context.Context, string) (httpapi.Principal, error) {
		return httpapi.Principal{}, httpapi.Throttled(1500*time.Millisecond, "attempts")
	})})
	r := httptest.NewRequest("GET", "/api/x", nil)
	r.Header.Set("Authorization", "Bearer ak_x")
	rr := httptest.NewRecorder()
	api.Handler(func(http.ResponseWriter, *http.Request) error { t.Fatal("ran"); return nil }).ServeHTTP(rr, r)
	if rr.Code != 429 || rr.Header().Get("Retry-After") != "2" {
		t.Fatalf("%d Retry-After %q %s", rr.Code, rr.Header().Get("Retry-After"), rr.Body)
	}
}

// Every write records the principal: a key's name is the operator, the stated operator
// follows it as the reason; the bootstrap token names nobody, so the stated operator stays
// alone; a key needs no operator header to be audited.
func TestOperatorIsThePrincipal(t *testing.T) {
	t.Parallel()
	api := httpapi.New(httpapi.Options{Token: "boot", Authenticator: keys})
	h := api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		op, err := httpapi.RequireOperator(r, "change")
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, 200, map[string]string{"operator": op})
		return nil
	})
	for _, c := range []struct{ cred, stated, want string }{
		{"k-operate", "jane", "key:ops / jane"},
		{"k-operate", "", "key:ops"},
		{"k-operate", "key:ops", "key:ops"},
		{"k-operate", strings.Repeat("x", 400), "key:ops / " + strings.Repeat("x", automation.MaxOperatorBytes-len("key:ops / "))},
		{"boot", "jane", "jane"},
	} {
		r := httptest.NewRequest("POST", "/api/x", nil)
		r.Header.Set("Authorization", "Bearer "+c.cred)
		if c.stated != "" {
			r.Header.Set(httpapi.HeaderOperator, c.stated)
		}
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, r)
		if rr.Code != 200 || !strings.Contains(rr.Body.String(), `"operator":"`+c.want+`"`) {
			t.Errorf("%s stating %q: %d %s, want operator %q", c.cred, c.stated, rr.Code, rr.Body, c.want)
		}
	}
	r := httptest.NewRequest("POST", "/api/x", nil)
	r.Header.Set("Authorization", "Bearer boot")
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, r)
	if rr.Code != 400 {
		t.Errorf("bootstrap without an operator: %d", rr.Code)
	}
}
