package funchost_test

// Regression tests from a hostile review of the HTTP layer.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/funchost"
)

// The router's own answers on forwarded /api paths (no such route, wrong method, body too
// large, a handler panic) were {"error": "..."} while every API route answers errors as
// RFC 9457 problem details: a client of the API got two error shapes for one API. They are
// application/problem+json with status, title, detail and the same codes as httpapi;
// invocation paths keep {"error": "..."} (the host reads neither).
func TestForwardedErrorsAreProblemDetails(t *testing.T) {
	t.Parallel()
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet, MaxBodyBytes: 64})
	r.RegisterHTTP("GET /api/things", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	r.RegisterHTTP("POST /api/things", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { _, _ = io.ReadAll(req.Body) }))
	r.RegisterHTTP("PUT /api/panics", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom at db01") }))
	big := strings.Repeat("x", 100)
	cases := []struct {
		name   string
		req    *http.Request
		status int
		code   string
		allow  string
	}{
		{"unknown path", httptest.NewRequest(http.MethodGet, "/api/nothing", nil), 404, "NotFound", ""},
		{"wrong method", httptest.NewRequest(http.MethodDelete, "/api/things", nil), 405, "MethodNotAllowed", "GET, HEAD, POST"},
		{"announced body too large", httptest.NewRequest(http.MethodPost, "/api/things", strings.NewReader(big)), 413, "ContentTooLarge", ""},
		{"panic", httptest.NewRequest(http.MethodPut, "/api/panics", nil), 500, "Internal", ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, c.req)
		var p struct {
			Type, Title, Detail, Code string
			Status                    int
		}
		err := json.Unmarshal(rec.Body.Bytes(), &p)
		if rec.Code != c.status || rec.Header().Get("Content-Type") != "application/problem+json" || err != nil ||
			p.Status != c.status || p.Code != c.code || p.Title == "" || p.Type == "" {
			t.Errorf("%s: %d %q %s", c.name, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		if c.allow != "" && rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s: Allow %q", c.name, rec.Header().Get("Allow"))
		}
		if strings.Contains(rec.Body.String(), "db01") {
			t.Errorf("%s: leaks the panic: %s", c.name, rec.Body)
		}
	}
	// Invocation paths keep the protocol's shape.
	checkJSON(t, serve(r, http.MethodPost, "/NoSuchFunction", strings.NewReader("{}")), 404)
}
