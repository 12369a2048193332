package sessionsapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/console"
	"github.com/automation-platform/automation/shared/api/sessionsapi"
	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/session"
)

// newEnv opens the runtime with the bootstrap token "boot" and binds openapi.yaml to it.
func newEnv(t *testing.T) *apptest.API {
	t.Helper()
	return apptest.OpenAPI(t, sessionsapi.OpenAPI(), map[string]string{"AUTOMATION_API_TOKEN": "boot"}, time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC), app.Options{})
}

// TestOpenAPIDocumentMatchesRouter: openapi.yaml documents exactly the routes Register adds,
// which are exactly the runtime's routes under /api/console-sessions, and each declared
// endpoint agrees with its operation.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.CheckRouter(t, func(r *funchost.Router, api *httpapi.API) { sessionsapi.Register(r, api, &session.Admin{}) }, "/api/console-sessions", sessionsapi.PathEnd, "post", "put")
	openapitest.CheckEndpoints(t, e.Doc, httpapi.Metas(sessionsapi.Routes(nil)))
}

// An admin ends a principal's console sessions (issue 37: "a person's sessions can be ended
// by an admin"): both live sessions of the principal end, their cookies open nothing at the
// next request (401), another principal's session lives on; ending again answers 0. Bad input
// (no principal) is 422, a read key 403, a narrowed scope 404, none of which ends anything.
// Every exchange is checked against openapi.yaml.
func TestEndingAPrincipalsSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc, rt := e.Doc, e.RT
	h := rt.ListenerHandler(false)
	ctx := context.Background()
	reader, err := rt.Keys.Create(ctx, apikey.CreateParams{Name: "support-desk", Roles: []httpapi.Role{httpapi.RoleRead}, Units: "*", Operator: "test"})
	if err != nil {
		t.Fatal(err)
	}
	signIn := func(token string) string {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		h.ServeHTTP(rec, r)
		for _, c := range rec.Result().Cookies() {
			if c.Name == console.CookieName && c.Value != "" {
				return c.Value
			}
		}
		t.Fatalf("sign-in: %d %s", rec.Code, rec.Body)
		return ""
	}
	page := func(cookie string) int {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/api/console/rows", nil)
		r.Header.Set("Cookie", console.CookieName+"="+cookie)
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	k1, k2, boot := signIn(reader.Secret), signIn(reader.Secret), signIn("boot")
	expect := openapitest.Client{Doc: doc, Handler: h}.Expecting(t)
	call := func(want int, body string, headers ...string) openapitest.Recorded {
		t.Helper()
		return expect(want, "POST", sessionsapi.PathEnd, body, headers...)
	}
	call(422, `{"principal":" "}`, "Authorization: Bearer boot")
	call(403, `{"principal":"key:support-desk"}`, "Authorization: Bearer "+reader.Secret)
	call(404, `{"principal":"key:support-desk"}`, "Authorization: Bearer boot", "X-Automation-Business-Units: bu-a")
	if page(k1) != 200 || page(k2) != 200 {
		t.Fatal("a refused request ended sessions")
	}
	if rec := call(200, `{"principal":"key:support-desk"}`, "Authorization: Bearer boot"); !strings.Contains(string(rec.Body), `"ended":2`) {
		t.Fatalf("end: %s", rec.Body)
	}
	if page(k1) != http.StatusUnauthorized || page(k2) != http.StatusUnauthorized {
		t.Fatal("an ended session still opens the console")
	}
	if page(boot) != 200 {
		t.Fatal("another principal's session was ended")
	}
	if s, _ := rt.Store.ConsoleSessionGet(ctx, session.Hash(k1)); s.EndReason != session.ReasonAdmin {
		t.Fatalf("the row: %+v", s)
	}
	if rec := call(200, `{"principal":"key:support-desk"}`, "Authorization: Bearer boot"); !strings.Contains(string(rec.Body), `"ended":0`) {
		t.Fatalf("end again: %s", rec.Body)
	}
}
