package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

type muxRegistrar struct{ *http.ServeMux }

func (m muxRegistrar) RegisterHTTP(pattern string, h http.Handler) { m.Handle(pattern, h) }

// UnitCheck runs right after the scope check and before anything else is read: a unit that
// is in scope but not stored answers the check's 404 even when the body is bad, a unit out
// of scope never reaches the check, and a stored one reaches Call with the decoded body.
func TestEndpointUnitCheckRunsBeforeTheBody(t *testing.T) {
	t.Parallel()
	scope := automation.ParseScope("bu-1,bu-2")
	var checked []string
	calls := 0
	mux := muxRegistrar{http.NewServeMux()}
	httpapi.Mount(mux, httpapi.New(httpapi.Options{BusinessUnits: &scope}), httpapi.Endpoint[struct {
		Name string `json:"name"`
	}, map[string]string]{
		Method: "PUT", Path: "/api/things/{id}", Unit: httpapi.UnitQuery, Body: httpapi.BodyRequired,
		UnitCheck: func(_ context.Context, bu string) error {
			checked = append(checked, bu)
			if bu != "bu-1" {
				return automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
			}
			return nil
		},
		Call: func(_ context.Context, in *httpapi.In[struct {
			Name string `json:"name"`
		}]) (map[string]string, error) {
			calls++
			if in.Body.Name == "" {
				return nil, errors.New("the body was not decoded before Call")
			}
			return map[string]string{"unit": in.Unit, "name": in.Body.Name}, nil
		},
	})
	put := func(bu, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("PUT", "/api/things/a?businessUnitId="+bu, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		return rec
	}
	if rec := put("bu-2", `{"nope":1}`); rec.Code != 404 || !strings.Contains(rec.Body.String(), `bu-2`) {
		t.Fatalf("a unit not stored with a bad body: %d %s, want the check's 404", rec.Code, rec.Body)
	}
	if rec := put("bu-9", `{"name":"x"}`); rec.Code != 404 {
		t.Fatalf("out of scope: %d %s", rec.Code, rec.Body)
	}
	if rec := put("bu-1", `{"nope":1}`); rec.Code != 400 {
		t.Fatalf("a stored unit with a bad body: %d %s", rec.Code, rec.Body)
	}
	if rec := put("bu-1", `{"name":"x"}`); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"unit":"bu-1"`) {
		t.Fatalf("a stored unit: %d %s", rec.Code, rec.Body)
	}
	if strings.Join(checked, ",") != "bu-2,bu-1,bu-1" || calls != 1 {
		t.Fatalf("checked %v, calls %d: the check runs once per in-scope request, never for an out-of-scope unit", checked, calls)
	}
}
