package registryapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
)

// openAPIDoc parses the embedded document, optionally edited by edit (a deliberate mismatch).
func openAPIDoc(t *testing.T, edit func(string) string) libopenapi.Document {
	t.Helper()
	raw := string(registryapi.OpenAPI())
	if edit != nil {
		raw = edit(raw)
	}
	doc, err := libopenapi.NewDocument([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// documentedRoutes lists "METHOD /path" for every operation of doc.
func documentedRoutes(t *testing.T, doc libopenapi.Document) []string {
	t.Helper()
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// routeDiff names the routes only one side has ("" when both list the same).
func routeDiff(documented, registered []string) string {
	var msgs []string
	for _, d := range documented {
		if !contains(registered, d) {
			msgs = append(msgs, "documented but not registered: "+d)
		}
	}
	for _, r := range registered {
		if !contains(documented, r) {
			msgs = append(msgs, "registered but not documented: "+r)
		}
	}
	return strings.Join(msgs, "\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type env struct {
	rt *app.Runtime
	v  validator.Validator
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string { return map[string]string{"AUTOMATION_DATA_DIR": dir}[k] })
	if err != nil {
		t.Fatal(err)
	}
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC)),
		Log: slog.New(slog.DiscardHandler), LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	v, errs := validator.NewValidator(openAPIDoc(t, nil))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return &env{rt: rt, v: v}
}

type resp struct {
	code int
	hdr  http.Header
	body []byte
}

// call sends a request through the runtime's Functions router and checks request and
// answer against the document: a 2xx must match its operation (parameters, body, headers,
// response schema); an error answer must be a documented problem of that status.
func (e *env) call(t *testing.T, method, path, body string, headers ...string) resp {
	t.Helper()
	mk := func() *http.Request {
		var rd io.Reader = http.NoBody
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ":")
			req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		return req
	}
	rec := httptest.NewRecorder()
	e.rt.Functions.ServeHTTP(rec, mk())
	r := resp{code: rec.Code, hdr: rec.Header(), body: rec.Body.Bytes()}
	req := mk()
	res := &http.Response{StatusCode: r.code, Header: r.hdr, Body: io.NopCloser(bytes.NewReader(r.body)), Request: req}
	var ok bool
	var errs []*verrors.ValidationError
	if r.code < 400 {
		ok, errs = e.v.ValidateHttpRequestResponse(req, res)
	} else {
		ok, errs = e.v.ValidateHttpResponse(req, res)
	}
	if !ok {
		var msgs []string
		for _, ve := range errs {
			msgs = append(msgs, ve.Message+": "+ve.Reason)
			for _, se := range ve.SchemaValidationErrors {
				msgs = append(msgs, "  "+se.FieldPath+" ("+se.KeywordLocation+"): "+se.Reason)
			}
		}
		t.Errorf("%s %s → %d does not match openapi.yaml:\n%s\nbody: %.2000s", method, path, r.code, strings.Join(msgs, "\n"), r.body)
	}
	return r
}

// TestOpenAPIDocumentMatchesRouter: openapi.yaml is valid OpenAPI 3.1 and documents exactly
// the routes registryapi.Register adds (both directions), which are exactly the runtime's
// routes under /api/event-registry; a renamed operation is caught both ways.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t, nil)
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("OpenAPI version %q", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("document: %s %s", e.Message, e.Reason)
		}
	}
	documented := documentedRoutes(t, doc)
	r := funchost.NewRouter(nil)
	registryapi.Register(r, httpapi.New(httpapi.Options{}), &gateway.Admin{})
	registered := r.HTTPPatterns()
	sort.Strings(registered)
	if diff := routeDiff(documented, registered); diff != "" {
		t.Fatalf("openapi.yaml and the router differ:\n%s", diff)
	}
	e := newEnv(t)
	var runtime []string
	for _, p := range e.rt.Functions.HTTPPatterns() {
		if _, path, _ := strings.Cut(p, " "); strings.HasPrefix(path, registryapi.Prefix) {
			runtime = append(runtime, p)
		}
	}
	sort.Strings(runtime)
	if diff := routeDiff(documented, runtime); diff != "" {
		t.Fatalf("openapi.yaml and the runtime's %s routes differ:\n%s", registryapi.Prefix, diff)
	}
	broken := documentedRoutes(t, openAPIDoc(t, func(s string) string {
		return strings.Replace(s, "  /api/event-registry/export:\n    get:", "  /api/event-registry/export:\n    post:", 1)
	}))
	diff := routeDiff(broken, registered)
	if !strings.Contains(diff, "documented but not registered: POST /api/event-registry/export") ||
		!strings.Contains(diff, "registered but not documented: GET /api/event-registry/export") {
		t.Fatalf("a renamed operation was not caught:\n%s", diff)
	}
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
	want := func(r resp, code int) resp {
		t.Helper()
		if r.code != code {
			t.Fatalf("status %d, want %d: %s", r.code, code, r.body)
		}
		return r
	}
	base := registryapi.Prefix
	want(e.call(t, "GET", base+"/types", ""), 200)
	want(e.call(t, "POST", base+"/types", viewItem), 400) // no operator
	r := want(e.call(t, "POST", base+"/types", viewItem, op, "Idempotency-Key: create-1"), 201)
	if r.hdr.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", r.hdr.Get("ETag"))
	}
	want(e.call(t, "POST", base+"/types", viewItem, op), 409)
	want(e.call(t, "POST", base+"/types", login, op), 201)
	bad := want(e.call(t, "POST", base+"/types", `{"eventType":"Bad","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"a","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"T","reset_policy":"RESET_ON_TRIGGER"}]}]}`, op), 422)
	if !strings.Contains(string(bad.body), "/counterInstructions/0/thresholds/0/reset_policy") {
		t.Errorf("refusal does not name the member: %s", bad.body)
	}
	want(e.call(t, "POST", base+"/types", `{"eventType":"X","class":"DIRECT","schema":{},"extra":1}`, op), 422)
	want(e.call(t, "POST", base+"/types", `not json`, op), 400)
	want(e.call(t, "GET", base+"/types/ViewItem", ""), 200)
	want(e.call(t, "GET", base+"/types/Nope", ""), 404)
	want(e.call(t, "PUT", base+"/types/ViewItem", viewItem2, op), 428)
	want(e.call(t, "PUT", base+"/types/ViewItem", viewItem2, op, `If-Match: "1"`), 200)
	want(e.call(t, "PUT", base+"/types/ViewItem", viewItem2, op, `If-Match: "1"`), 412)
	want(e.call(t, "PUT", base+"/types/ViewItem", login, op, `If-Match: "2"`), 422) // the body names another type
	want(e.call(t, "PUT", base+"/types/Nope", login, op, `If-Match: "1"`), 422)
	want(e.call(t, "GET", base+"/types/ViewItem/versions", ""), 200)
	want(e.call(t, "GET", base+"/types/Nope/versions", ""), 404)
	want(e.call(t, "GET", base+"/types/ViewItem/versions/1", ""), 200)
	want(e.call(t, "GET", base+"/types/ViewItem/versions/9", ""), 404)
	want(e.call(t, "GET", base+"/types/ViewItem/versions/x", ""), 404)
	list := want(e.call(t, "GET", base+"/types", ""), 200)
	if !strings.Contains(string(list.body), `"version":2`) {
		t.Errorf("list: %s", list.body)
	}
	exp := want(e.call(t, "GET", base+"/export", ""), 200)
	imp := want(e.call(t, "POST", base+"/import", string(exp.body), op), 200)
	if strings.Contains(string(imp.body), `"changed":true`) {
		t.Errorf("importing the export changed something: %s", imp.body)
	}
	want(e.call(t, "POST", base+"/import", `{"events":[`+login+`,{"eventType":"Y","class":"NOPE","schema":{}}]}`, op), 422)
	want(e.call(t, "POST", base+"/import", `{"types":[]}`, op), 422)
	// Out of scope: a caller narrowed to one business unit does not see the registry.
	want(e.call(t, "GET", base+"/types", "", "X-Automation-Business-Units: bu-1"), 404)
	want(e.call(t, "GET", base+"/export", "", "X-Automation-Business-Units: bu-1"), 404)
}

// A document that disagrees with the answers fails the validation: the check is real.
func TestBrokenDocumentFailsValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	broken := openAPIDoc(t, func(s string) string {
		// Entry's createdOn renamed: every real answer now lacks a required member.
		return strings.Replace(s, "required: [eventType, version, operator, createdOn, definition]", "required: [eventType, version, operator, savedOn, definition]", 1)
	})
	v, errs := validator.NewValidator(broken)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", registryapi.Prefix+"/types", strings.NewReader(login))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Automation-Operator", "ops")
	e.rt.Functions.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	req = httptest.NewRequest("POST", registryapi.Prefix+"/types", strings.NewReader(login))
	req.Header.Set("Content-Type", "application/json")
	res := &http.Response{StatusCode: rec.Code, Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Request: req}
	if ok, _ := v.ValidateHttpResponse(req, res); ok {
		t.Fatal("the broken document accepted the answer")
	}
	if ok, _ := e.v.ValidateHttpResponse(req, &http.Response{StatusCode: rec.Code, Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Request: req}); !ok {
		t.Fatal("the real document refused the answer")
	}
}
