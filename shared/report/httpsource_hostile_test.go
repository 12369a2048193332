package report_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/report"
)

// The default client followed redirects: a 302/303 turned the POST into a body-less GET
// whose answer (any text/csv page) was stored and sent as the report, and a 307/308 re-sent
// the request body - business unit, period, parameters - to wherever the Location pointed,
// http:// or another host included. A redirect is a permanent failure now, and the target
// is never asked.
func TestHTTPSourceDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "text/csv")
		_, _ = io.WriteString(w, "not,the,report\n")
	}))
	defer target.Close()
	for _, code := range []int{http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", code)
		}))
		s, _ := report.NewHTTPSource(src.URL, "csv")
		f, err := s.Render(ctx, sourceRequest())
		src.Close()
		if err == nil || !automation.IsPermanent(err) {
			t.Errorf("%d: file %q, err %v; want a permanent failure", code, f.Body, err)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect target was asked %d times", n)
	}
}
