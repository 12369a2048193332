package simhttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/simhttp"
)

// ControlRoutes: PUT /faults hands a strict JSON body to the setter (204; 400 and nothing
// set on an unknown member or a refusal); GET /messages and GET /stats answer what their
// functions return, as JSON.
func TestControlRoutes(t *testing.T) {
	t.Parallel()
	type faults struct {
		Mode string `json:"mode"`
	}
	var set []string
	mux := http.NewServeMux()
	simhttp.ControlRoutes(mux, 1<<10, func(f faults) error {
		if f.Mode == "bad" {
			return errors.New("unknown mode")
		}
		set = append(set, f.Mode)
		return nil
	}, func() []string { return []string{"m-1"} }, func() map[string]int { return map[string]int{"sent": 1} })
	do := func(method, path, body string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, strings.TrimSpace(string(b))
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		answer             string
	}{
		{"PUT", "/faults", `{"mode":"slow"}`, http.StatusNoContent, ""},
		{"PUT", "/faults", `{"mode":"slow","other":1}`, http.StatusBadRequest, `json: unknown field "other"`},
		{"PUT", "/faults", `{"mode":"bad"}`, http.StatusBadRequest, "unknown mode"},
		{"GET", "/messages", "", http.StatusOK, `["m-1"]`},
		{"GET", "/stats", "", http.StatusOK, `{"sent":1}`},
	} {
		if status, answer := do(c.method, c.path, c.body); status != c.status || answer != c.answer {
			t.Errorf("%s %s %s: %d %q, want %d %q", c.method, c.path, c.body, status, answer, c.status, c.answer)
		}
	}
	if len(set) != 1 || set[0] != "slow" {
		t.Errorf("faults set %v, want [slow] only", set)
	}
}
