package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/httpapi"
)

// Issue 37, hostile review: repeated X-Automation-Business-Units headers were joined, and
// "*" anywhere in the list meant every unit, so a caller capped at nothing narrower than
// "*" but asked for "bu-b" could send "bu-b,*" (or a second header "*") and read
// platform-wide data. Both are refused with 400 naming the header; nothing runs.
func TestScopeHeaderRepeatedOrMixedIsRefused(t *testing.T) {
	t.Parallel()
	ran := 0
	h := httpapi.New(httpapi.Options{Token: "s3cret"}).Handler(func(w http.ResponseWriter, r *http.Request) error {
		ran++
		httpapi.WriteJSON(w, 200, map[string]string{"scope": httpapi.CallerFrom(r.Context()).Scope.String()})
		return nil
	})
	for name, vals := range map[string][]string{
		"two headers":           {"bu-b", "*"},
		"two headers of ids":    {"bu-a", "bu-b"},
		"star after an id":      {"bu-b,*"},
		"star before an id":     {"*, bu-b"},
		"two headers, one star": {"*", "bu-a"},
	} {
		r := httptest.NewRequest("GET", "/api/x", nil)
		r.Header.Set("Authorization", "Bearer s3cret")
		for _, v := range vals {
			r.Header.Add(httpapi.HeaderBusinessUnits, v)
		}
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, r)
		if rr.Code != 400 || !strings.Contains(rr.Body.String(), httpapi.HeaderBusinessUnits) {
			t.Errorf("%s %q: %d %s, want 400 naming the header", name, vals, rr.Code, rr.Body)
		}
	}
	if ran != 0 {
		t.Errorf("the handler ran %d times for refused scopes", ran)
	}
	// One header, ids only or "*" alone, still narrows as before.
	for v, want := range map[string]string{"bu-b": "bu-b", "*": "*", " bu-a , bu-b ": "bu-a,bu-b"} {
		r := httptest.NewRequest("GET", "/api/x", nil)
		r.Header.Set("Authorization", "Bearer s3cret")
		r.Header.Set(httpapi.HeaderBusinessUnits, v)
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, r)
		if rr.Code != 200 || !strings.Contains(rr.Body.String(), `"scope":"`+want+`"`) {
			t.Errorf("%q: %d %s, want scope %s", v, rr.Code, rr.Body, want)
		}
	}
}

// API.Caller (the console's way in, which has no error answer) sees nothing for a header
// that Handler refuses: fail closed, never every unit.
func TestCallerOfABadScopeHeaderSeesNothing(t *testing.T) {
	t.Parallel()
	api := httpapi.New(httpapi.Options{})
	r := httptest.NewRequest("GET", "/api/console/", nil)
	r.Header.Set(httpapi.HeaderBusinessUnits, "bu-b,*")
	if s := api.Caller(r).Scope; s.All() || s.Allows("bu-b") || s.Allows("bu-a") {
		t.Fatalf("mixed header: scope %s, want none", s)
	}
	r.Header.Set(httpapi.HeaderBusinessUnits, "bu-b")
	r.Header.Add(httpapi.HeaderBusinessUnits, "*")
	if s := api.Caller(r).Scope; s.All() || s.Allows("bu-b") {
		t.Fatalf("repeated header: scope %s, want none", s)
	}
}
