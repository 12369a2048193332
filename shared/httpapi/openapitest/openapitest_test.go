package openapitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

const doc = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /items/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        '200':
          description: an item
          content:
            application/json:
              schema: {type: object, required: [id], properties: {id: {type: string}}}
        '404':
          description: unknown
          content:
            application/problem+json:
              schema: {type: object, required: [code], properties: {code: {enum: [NotFound]}}}
`

// The checks can fail: a route only one side has is named, an answer without a required
// member or with an undocumented problem code is refused, a documented one is accepted.
func TestChecksCanFail(t *testing.T) {
	d := openapitest.Load(t, []byte(doc))
	d.CheckDocument(t)
	if got := d.Routes(t); strings.Join(got, ",") != "GET /items/{id}" {
		t.Fatalf("routes %v", got)
	}
	diff := openapitest.RouteDiff(d.Routes(t), []string{"GET /items/{id}", "POST /items"})
	if diff != "registered but not documented: POST /items" {
		t.Fatalf("diff %q", diff)
	}
	if got := openapitest.Under([]string{"GET /b/x", "GET /a/1", "POST /a"}, "/a"); strings.Join(got, ",") != "GET /a/1,POST /a" {
		t.Fatalf("under %v", got)
	}
	json := http.Header{"Content-Type": {"application/json"}}
	problem := http.Header{"Content-Type": {"application/problem+json"}}
	for _, c := range []struct {
		code   int
		hdr    http.Header
		body   string
		refuse bool
	}{
		{200, json, `{"id":"a"}`, false},
		{200, json, `{"name":"a"}`, true},
		{404, problem, `{"code":"NotFound"}`, false},
		{404, problem, `{"code":"Gone"}`, true},
		{500, problem, `{"code":"NotFound"}`, true},
	} {
		req := httptest.NewRequest("GET", "/items/a", nil)
		msg := d.Mismatch(req, openapitest.Answer(req, c.code, c.hdr, []byte(c.body)))
		if (msg != "") != c.refuse {
			t.Errorf("%d %s: mismatch %q, want refused %v", c.code, c.body, msg, c.refuse)
		}
	}
	broken := d.Edit(t, func(s string) string { return strings.Replace(s, "required: [id]", "required: [id, name]", 1) })
	req := httptest.NewRequest("GET", "/items/a", nil)
	if broken.Mismatch(req, openapitest.Answer(req, 200, json, []byte(`{"id":"a"}`))) == "" {
		t.Error("the edited document accepted an answer without its new required member")
	}
}

// The endpoint check can fail: a body the document does not describe, an undocumented
// success status and an undocumented operation are each named; the agreeing one is not.
func TestEndpointDiffCanFail(t *testing.T) {
	d := openapitest.Load(t, []byte(doc))
	ok := httpapi.Meta{Method: "GET", Path: "/items/{id}", Statuses: []int{200}}
	if diff := openapitest.EndpointDiff(t, d, []httpapi.Meta{ok}); len(diff) != 0 {
		t.Fatalf("agreeing endpoint refused: %v", diff)
	}
	bad := []httpapi.Meta{
		{Method: "GET", Path: "/items/{id}", Body: true, Statuses: []int{200, 201}},
		{Method: "DELETE", Path: "/items/{id}", Statuses: []int{204}},
		{Method: "GET", Path: "/other", Statuses: []int{200}},
	}
	got := strings.Join(openapitest.EndpointDiff(t, d, bad), "\n")
	for _, want := range []string{
		"GET /items/{id}: the endpoint reads a body: true, the document has a requestBody: false",
		"GET /items/{id}: answers 201, not a documented response",
		"DELETE /items/{id}: not documented",
		"GET /other: not documented",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message and stops the call (a
// panic that the test recovers), so that a check's failure can itself be tested.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

// Expect fails on any status but the one wanted, naming the request and the answer; the
// wanted one passes and returns the answer.
func TestExpectFailsOnAnotherStatus(t *testing.T) {
	c := openapitest.Client{Doc: openapitest.Load(t, []byte(doc)), Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"code":"NotFound"}`))
	})}
	if r := c.Expecting(t)(404, "GET", "/items/a", ""); r.Code != 404 {
		t.Fatalf("answer %d", r.Code)
	}
	f := &fatalRecorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != any(f) {
				panic(p)
			}
		}()
		c.Expect(f, 200, "GET", "/items/a", "")
	}()
	if !strings.Contains(f.msg, "GET /items/a") || !strings.Contains(f.msg, "404") || !strings.Contains(f.msg, "want 200") {
		t.Fatalf("a 404 when 200 was wanted: message %q", f.msg)
	}
}
