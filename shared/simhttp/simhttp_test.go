package simhttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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

// A fault delay is a Go duration in 0..1m ("" none), refused naming the simulator; the
// answer-side faults answer late (slow) or never (lose-answer), and any other mode at once.
func TestFaultDelayAndHoldAnswer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"": 0, "0s": 0, "250ms": 250 * time.Millisecond, "1m": time.Minute} {
		if d, err := simhttp.FaultDelay("acssim", in); err != nil || d != want {
			t.Errorf("FaultDelay(%q) = %s, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"-1s", "61s", "soon"} {
		if _, err := simhttp.FaultDelay("acssim", in); err == nil || !strings.Contains(err.Error(), `acssim: delay "`+in+`"`) {
			t.Errorf("FaultDelay(%q): %v, want an error naming acssim and the delay", in, err)
		}
	}
	for _, c := range []struct {
		mode     string
		answered bool
		late     bool
	}{{"", true, false}, {"rate-limit", true, false}, {simhttp.ModeSlow, true, true}, {simhttp.ModeTimeout, true, true}, {simhttp.ModeLoseAnswer, false, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			simhttp.HoldAnswer(r, c.mode, 150*time.Millisecond)
			w.WriteHeader(http.StatusNoContent)
		}))
		start := time.Now()
		resp, err := srv.Client().Get(srv.URL)
		took := time.Since(start)
		srv.Close()
		if (err == nil) != c.answered {
			t.Errorf("mode %q: answered %v (%v), want %v", c.mode, err == nil, err, c.answered)
		}
		if err == nil {
			resp.Body.Close()
		}
		if c.late && took < 150*time.Millisecond {
			t.Errorf("mode %q: answered after %s, before the delay", c.mode, took)
		}
	}
}

// Copy hands out a copy (an append to it, or to the records, leaves the other alone), nil
// for nothing recorded; Read reads under the lock.
func TestCopyAndRead(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var recs []string
	if got := simhttp.Copy(&mu, &recs); got != nil {
		t.Fatalf("nothing recorded: %v, want nil", got)
	}
	recs = append(make([]string, 0, 8), "a", "b")
	got := simhttp.Copy(&mu, &recs)
	got[0] = "changed"
	_ = append(got, "c")
	recs = append(recs, "d")
	if strings.Join(recs, ",") != "a,b,d" || strings.Join(got, ",") != "changed,b" {
		t.Fatalf("records %v, copy %v", recs, got)
	}
	n := 3
	if simhttp.Read(&mu, &n) != 3 {
		t.Fatal("Read")
	}
}
