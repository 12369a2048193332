package registryapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

type env struct{ *apptest.API }

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{apptest.OpenAPI(t, registryapi.OpenAPI(), nil, time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC), app.Options{})}
}

// resp is one recorded answer.
type resp = openapitest.Recorded

// TestOpenAPIDocumentMatchesRouter: openapi.yaml is valid OpenAPI 3.1 and documents exactly
// the routes registryapi.Register adds (both directions), which are exactly the runtime's
// routes under /api/event-registry; a renamed operation is caught both ways.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.CheckRouter(t, func(r *funchost.Router, api *httpapi.API) { registryapi.Register(r, api, &gateway.Admin{}) }, registryapi.Prefix, registryapi.Prefix+"/export", "get", "post")
}

const (
	viewItem  = `{"eventType":"ViewItem","class":"COUNTER","schema":{"type":"object","required":["itemId"]},"counterInstructions":[{"attribute_code":"views","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`
	viewItem2 = `{"eventType":"ViewItem","class":"COUNTER","schema":{"type":"object","required":["itemId","shelf"]},"counterInstructions":[{"attribute_code":"views","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`
	login     = `{"eventType":"Login","class":"DIRECT","schema":{"type":"object"}}`
	op        = "X-Automation-Operator: ops@example.test"
)

// TestRegistryAPIMatchesOpenAPI makes every call of the registry API — create, read, a new
// version with If-Match, versions, export, import twice — and its error answers (400 without
// an operator, 404 unknown and out of scope, 409, 412, 422 naming the pointer, 428), checking
// each request and answer against openapi.yaml.
func TestRegistryAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := func(r resp, code int) resp { t.Helper(); return r.Want(t, code) }
	base := registryapi.Prefix
	want(e.Call(t, "GET", base+"/types", ""), 200)
	want(e.Call(t, "POST", base+"/types", viewItem), 400) // no operator
	r := want(e.Call(t, "POST", base+"/types", viewItem, op, "Idempotency-Key: create-1"), 201)
	if r.Header.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", r.Header.Get("ETag"))
	}
	want(e.Call(t, "POST", base+"/types", viewItem, op), 409)
	want(e.Call(t, "POST", base+"/types", login, op), 201)
	bad := want(e.Call(t, "POST", base+"/types", `{"eventType":"Bad","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"a","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"T","reset_policy":"RESET_ON_TRIGGER"}]}]}`, op), 422)
	if !strings.Contains(string(bad.Body), "/counterInstructions/0/thresholds/0/reset_policy") {
		t.Errorf("refusal does not name the member: %s", bad.Body)
	}
	want(e.Call(t, "POST", base+"/types", `{"eventType":"X","class":"DIRECT","schema":{},"extra":1}`, op), 422)
	want(e.Call(t, "POST", base+"/types", `not json`, op), 400)
	want(e.Call(t, "GET", base+"/types/ViewItem", ""), 200)
	want(e.Call(t, "GET", base+"/types/Nope", ""), 404)
	want(e.Call(t, "PUT", base+"/types/ViewItem", viewItem2, op), 428)
	want(e.Call(t, "PUT", base+"/types/ViewItem", viewItem2, op, `If-Match: "1"`), 200)
	want(e.Call(t, "PUT", base+"/types/ViewItem", viewItem2, op, `If-Match: "1"`), 412)
	want(e.Call(t, "PUT", base+"/types/ViewItem", login, op, `If-Match: "2"`), 422) // the body names another type
	want(e.Call(t, "PUT", base+"/types/Nope", login, op, `If-Match: "1"`), 422)
	want(e.Call(t, "GET", base+"/types/ViewItem/versions", ""), 200)
	want(e.Call(t, "GET", base+"/types/Nope/versions", ""), 404)
	want(e.Call(t, "GET", base+"/types/ViewItem/versions/1", ""), 200)
	want(e.Call(t, "GET", base+"/types/ViewItem/versions/9", ""), 404)
	want(e.Call(t, "GET", base+"/types/ViewItem/versions/x", ""), 404)
	list := want(e.Call(t, "GET", base+"/types", ""), 200)
	if !strings.Contains(string(list.Body), `"version":2`) {
		t.Errorf("list: %s", list.Body)
	}
	exp := want(e.Call(t, "GET", base+"/export", ""), 200)
	imp := want(e.Call(t, "POST", base+"/import", string(exp.Body), op), 200)
	if strings.Contains(string(imp.Body), `"changed":true`) {
		t.Errorf("importing the export changed something: %s", imp.Body)
	}
	want(e.Call(t, "POST", base+"/import", `{"events":[`+login+`,{"eventType":"Y","class":"NOPE","schema":{}}]}`, op), 422)
	want(e.Call(t, "POST", base+"/import", `{"types":[]}`, op), 422)
	// Out of scope: a caller narrowed to one business unit does not see the registry.
	want(e.Call(t, "GET", base+"/types", "", "X-Automation-Business-Units: bu-1"), 404)
	want(e.Call(t, "GET", base+"/export", "", "X-Automation-Business-Units: bu-1"), 404)
}

// A document that disagrees with the answers fails the validation: the check is real.
func TestBrokenDocumentFailsValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	broken := e.Doc.Edit(t, func(s string) string {
		// Entry's createdOn renamed: every real answer now lacks a required member.
		return strings.Replace(s, "required: [eventType, version, operator, createdOn, definition]", "required: [eventType, version, operator, savedOn, definition]", 1)
	})
	create := func() *http.Request {
		return openapitest.Request("POST", registryapi.Prefix+"/types", login, "X-Automation-Operator: ops")
	}
	rec := httptest.NewRecorder()
	e.RT.Functions.ServeHTTP(rec, create())
	if rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	exchange := func() (*http.Request, *http.Response) {
		req := create()
		return req, openapitest.Answer(req, rec.Code, rec.Header(), rec.Body.Bytes())
	}
	e.Doc.CheckCaught(t, broken, exchange)
}
