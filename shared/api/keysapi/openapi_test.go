package keysapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/keysapi"
	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

// newEnv opens the runtime with the bootstrap token "boot" and binds openapi.yaml to it.
func newEnv(t *testing.T) *apptest.API {
	t.Helper()
	return apptest.OpenAPI(t, keysapi.OpenAPI(), map[string]string{"AUTOMATION_API_TOKEN": "boot"}, time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC), app.Options{})
}

// TestOpenAPIDocumentMatchesRouter: openapi.yaml is valid OpenAPI 3.1 and documents exactly
// the routes keysapi.Register adds (both directions), which are exactly the runtime's
// routes under /api/keys; a renamed operation is caught both ways; and each declared
// endpoint (body read, success statuses) agrees with its operation.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.CheckRouter(t, func(r *funchost.Router, api *httpapi.API) { keysapi.Register(r, api, &apikey.Service{}) }, keysapi.PathKeys, keysapi.PathRevoke, "post", "get")
	openapitest.CheckEndpoints(t, e.Doc, httpapi.Metas(keysapi.Routes(nil)))
}

// TestKeysAPIMatchesOpenAPI makes every call of the keys API with the bootstrap token —
// create, list (two pages), get, rotate with and without a body, revoke, revoke again —
// and its error answers (400 unknown field, unknown query parameter, Idempotency-Key; 403
// a read key; 404 unknown prefix and a narrowed scope; 409 rotating a revoked key; 422
// bad input and overlap out of range), checking each request and answer against
// openapi.yaml (openapitest.Doc.Call).
func TestKeysAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc, rt := e.Doc, e.RT
	const boot = "Authorization: Bearer boot"
	call := openapitest.Client{Doc: doc, Handler: rt.ListenerHandler(false)}.Expecting(t)
	var a, b struct {
		Prefix, Key string
	}
	rec := call(201, "POST", "/api/keys", `{"name":"pos-a","roles":["ingest"],"businessUnits":"bu-a"}`, boot)
	if json.Unmarshal(rec.Body, &a) != nil || a.Key == "" || rec.Header.Get("Location") != "/api/keys/"+a.Prefix {
		t.Fatalf("create: %s %v", rec.Body, rec.Header)
	}
	rec = call(201, "POST", "/api/keys", `{"name":"support","roles":["read"],"businessUnits":"*"}`, boot)
	if json.Unmarshal(rec.Body, &b) != nil || b.Key == "" {
		t.Fatalf("create: %s", rec.Body)
	}
	call(400, "POST", "/api/keys", `{"name":"x","roles":["read"],"businessUnits":"*","extra":1}`, boot)
	call(400, "POST", "/api/keys", `{"name":"x","roles":["read"],"businessUnits":"*"}`, boot, httpapi.HeaderIdempotencyKey+": k1")
	call(422, "POST", "/api/keys", `{"name":"","roles":[],"businessUnits":""}`, boot)
	call(403, "GET", "/api/keys", "", "Authorization: Bearer "+b.Key)
	call(404, "GET", "/api/keys", "", boot, httpapi.HeaderBusinessUnits+": bu-a")

	page := call(200, "GET", "/api/keys?limit=1", "", boot)
	var p struct {
		Items      []apikey.Key
		NextCursor string
	}
	if json.Unmarshal(page.Body, &p) != nil || len(p.Items) != 1 || p.NextCursor == "" || strings.Contains(string(page.Body), a.Key) {
		t.Fatalf("first page: %s", page.Body)
	}
	call(200, "GET", "/api/keys?limit=1&cursor="+p.NextCursor, "", boot)
	call(400, "GET", "/api/keys?limit=0", "", boot)
	call(400, "GET", "/api/keys?after=x", "", boot)

	call(200, "GET", "/api/keys/"+a.Prefix, "", boot)
	call(404, "GET", "/api/keys/000000000000", "", boot)
	call(422, "POST", "/api/keys/"+a.Prefix+"/rotate", `{"overlapSeconds":-1}`, boot)
	rot := call(201, "POST", "/api/keys/"+a.Prefix+"/rotate", `{"overlapSeconds":60}`, boot)
	if !strings.HasPrefix(rot.Header.Get("Location"), "/api/keys/") {
		t.Fatalf("rotate: %v", rot.Header)
	}
	call(201, "POST", "/api/keys/"+b.Prefix+"/rotate", "", boot)
	call(200, "POST", "/api/keys/"+a.Prefix+"/revoke", "", boot)
	call(200, "POST", "/api/keys/"+a.Prefix+"/revoke", "", boot)
	call(409, "POST", "/api/keys/"+a.Prefix+"/rotate", "", boot)
}
