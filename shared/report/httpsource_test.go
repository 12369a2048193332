package report_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/report"
)

func sourceRequest() report.RenderRequest {
	return report.RenderRequest{SubscriptionGuid: subGuid, BusinessUnitID: "bu-syd", ReportType: "attendance", Format: "csv",
		Parameters: json.RawMessage(`{"room":"blue"}`), RunKeyHash: "r0123456789abcdef01234567",
		PeriodStart: utc("2027-03-21T21:00:00Z"), PeriodEnd: utc("2027-03-28T21:00:00Z"), TimeZoneID: "Australia/Sydney"}
}

func TestHTTPSourceRendersFromTheDomainApp(t *testing.T) {
	t.Parallel()
	var got map[string]any
	var hdr http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_, _ = io.WriteString(w, "child,days\nA,3\n")
	}))
	defer srv.Close()
	src, err := report.NewHTTPSource(srv.URL+"/reports/attendance", "csv")
	if err != nil {
		t.Fatal(err)
	}
	f, err := src.Render(ctx, sourceRequest())
	if err != nil || string(f.Body) != "child,days\nA,3\n" || f.Extension != "csv" {
		t.Fatalf("render = %+v %v", f, err)
	}
	if hdr.Get("Idempotency-Key") != "r0123456789abcdef01234567" || hdr.Get("Accept") != "text/csv" || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", hdr)
	}
	if got["periodStartUtc"] != "2027-03-21T21:00:00Z" || got["businessUnitId"] != "bu-syd" || got["parameters"].(map[string]any)["room"] != "blue" {
		t.Fatalf("request body %v", got)
	}
}

func TestHTTPSourceFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		status    int
		ctype     string
		body      string
		permanent bool
	}{
		{"not found is permanent", 404, "application/problem+json", `{"title":"no such report"}`, true},
		{"bad request is permanent", 400, "text/plain", "bad", true},
		{"server error is retried", 503, "text/plain", "busy", false},
		{"too many requests is retried", 429, "text/plain", "slow down", false},
		{"timeout answer is retried", 408, "text/plain", "", false},
		{"wrong media type is permanent", 200, "text/html", "<html>", true},
		{"too large is permanent", 200, "text/csv", strings.Repeat("x", 2048), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			src, _ := report.NewHTTPSource(srv.URL, "csv")
			src.MaxBytes = 1024
			_, err := src.Render(ctx, sourceRequest())
			if err == nil || automation.IsPermanent(err) != tc.permanent {
				t.Fatalf("err = %v, permanent = %v, want %v", err, automation.IsPermanent(err), tc.permanent)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	url := srv.URL
	srv.Close()
	src, _ := report.NewHTTPSource(url, "csv")
	if _, err := src.Render(ctx, sourceRequest()); err == nil || automation.IsPermanent(err) {
		t.Fatalf("a connection failure must be retried: %v", err)
	}
	for _, bad := range []string{"ftp://x", "/relative", "http://"} {
		if _, err := report.NewHTTPSource(bad, "csv"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := report.NewHTTPSource("https://x.test", "docx"); err == nil {
		t.Error("unknown format accepted")
	}
}
