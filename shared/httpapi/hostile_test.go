package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/httpapi"
)

// Regression tests from a hostile review of the HTTP layer: each names the attack.

// A scope header of many distinct ids was deduplicated with a linear search per id
// (quadratic): 1 MiB of ids (the net/http header limit) cost tens of seconds of CPU per
// request. This is a complexity guard, not a benchmark: linearithmic parsing of 200,000 ids
// takes well under a second even with the race detector; the quadratic one took minutes.
func TestScopeHeaderOfManyIdsIsParsedInLinearithmicTime(t *testing.T) {
	t.Parallel()
	ids := make([]string, 200_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("bu-%06d", len(ids)-i)
	}
	ids = append(ids, "bu-000007", "", " bu-000009 ")
	done := make(chan httpapi.Scope, 1)
	go func() { done <- httpapi.ParseScope(strings.Join(ids, ",")) }()
	select {
	case s := <-done:
		units := s.Units()
		if len(units) != 200_000 || units[0] != "bu-000001" || units[len(units)-1] != "bu-200000" || !s.Allows("bu-000009") || s.Allows("") {
			t.Fatalf("parsed %d units (%v … %v)", len(units), units[:1], units[len(units)-1:])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("parsing 200,000 business-unit ids did not finish in 20 s: quadratic de-duplication")
	}
}

// A query string that url.ParseQuery rejects (bad escape, ';' separator) was silently
// dropped by r.URL.Query(), so "?limit=%zz" or "?businessUnitId=a;b" answered as if no
// filter had been given.
func TestMalformedQueryStringIsRejected(t *testing.T) {
	t.Parallel()
	h := httpapi.New(httpapi.Options{}).Handler(echo)
	for _, target := range []string{"/api/x?limit=%zz", "/api/x?limit=1;businessUnitId=a", "/api/x?%gg=1"} {
		rr := do(t, h, "GET", target, "", nil)
		if rr.Code != 400 || rr.Header().Get("Content-Type") != httpapi.ProblemContentType || !strings.Contains(rr.Body.String(), "query") {
			t.Errorf("%s: %d %s", target, rr.Code, rr.Body)
		}
	}
	if rr := do(t, h, "GET", "/api/x?limit=1&businessUnitId=a%2Cb&empty=", "", nil); rr.Code != 200 {
		t.Errorf("well-formed query: %d %s", rr.Code, rr.Body)
	}
}
