package app_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/api/apidoc"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

// TestOpenAPIDocumentServedCoversEveryJSONRoute: GET /api/openapi.json answers the bundle
// kept in the repository (docs/openapi.json), a valid OpenAPI 3.1 document whose operations
// are exactly the JSON routes the runtime serves: every /api route but the console's HTML
// pages (docs/console.md) and serve's local events route, which stands in for Service Bus.
// Each API's own document is checked against its own routes in its package; this checks
// that none is missing from the bundle and the bundle documents nothing that is not served.
func TestOpenAPIDocumentServedCoversEveryJSONRoute(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, nil)
	rec := httptest.NewRecorder()
	e.rt.Functions.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, apidoc.Path, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %q", apidoc.Path, rec.Code, rec.Header().Get("Content-Type"))
	}
	file, err := os.ReadFile("../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Body.Bytes(), file) {
		t.Fatal("the served document differs from docs/openapi.json (make openapi)")
	}
	rec = httptest.NewRecorder()
	e.rt.Functions.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, apidoc.Path+"?x=1", nil))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("GET %s?x=1: %d, want 400 (no query parameters)", apidoc.Path, rec.Code)
	}
	doc := openapitest.Load(t, file)
	doc.CheckDocument(t)
	var jsonRoutes []string
	for _, p := range e.rt.Functions.HTTPPatterns() {
		_, path, ok := strings.Cut(p, " ")
		if !ok {
			path = p // a pattern without a method
		}
		if path == app.LocalEventsPath || strings.HasPrefix(path, "/api/console/") {
			continue
		}
		jsonRoutes = append(jsonRoutes, p)
	}
	if len(jsonRoutes) < 60 {
		t.Fatalf("only %d JSON routes served: %v", len(jsonRoutes), jsonRoutes)
	}
	doc.CheckRoutes(t, "the runtime's JSON routes", jsonRoutes)
}
