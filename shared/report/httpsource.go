package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// DefaultHTTPSourceMaxBytes bounds a report fetched from an HTTP source (20 MiB).
const DefaultHTTPSourceMaxBytes = 20 << 20

// formatTypes maps formats to the media types an HTTP source may answer with.
var formatTypes = map[string]struct {
	media, ext string
}{
	"csv":  {"text/csv", "csv"},
	"json": {"application/json", "json"},
	"pdf":  {"application/pdf", "pdf"},
	"xlsx": {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"},
}

// HTTPSource renders a domain report by asking the domain app over HTTP (docs/architecture.md#report-subscriptions: an HTTP
// report source). It POSTs the request as JSON to URL with an Idempotency-Key header (the
// run's StorageRunKeyHash, the same on every retry) and an Accept header for the format, and
// expects 200 with a body of that media type, at most MaxBytes.
//
// Request body: {"reportType","subscriptionGuid","businessUnitId","format","periodStartUtc",
// "periodEndUtc","timeZoneId","runKeyHash","parameters"}.
//
// A 4xx answer (except 408 and 429), a redirect (never followed: it would turn the POST into
// a GET, or send the request body to wherever Location points), a wrong media type or an
// oversized body cannot be fixed by retrying: the run goes on support hold
// (automation.Permanent). 5xx, 408, 429 and transport errors are retried with backoff.
type HTTPSource struct {
	URL      string
	Client   *http.Client // default: 60 s timeout; its CheckRedirect is overridden
	MaxBytes int64        // default DefaultHTTPSourceMaxBytes
	Format   []string     // formats offered; default ["csv"]
}

var _ Renderer = (*HTTPSource)(nil)

// NewHTTPSource checks u (absolute http or https URL) and returns a source for formats.
func NewHTTPSource(u string, formats ...string) (*HTTPSource, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return nil, fmt.Errorf("report: HTTP source URL %q must be an absolute http(s) URL", u)
	}
	for _, f := range formats {
		if _, ok := formatTypes[f]; !ok {
			return nil, fmt.Errorf("report: HTTP source format %q is not one of csv, json, pdf, xlsx", f)
		}
	}
	return &HTTPSource{URL: u, Format: formats}, nil
}

// Formats implements Renderer.
func (h *HTTPSource) Formats() []string {
	if len(h.Format) == 0 {
		return []string{"csv"}
	}
	return h.Format
}

type httpSourceRequest struct {
	ReportType       string          `json:"reportType"`
	SubscriptionGuid string          `json:"subscriptionGuid"`
	BusinessUnitID   string          `json:"businessUnitId"`
	Format           string          `json:"format"`
	PeriodStartUTC   string          `json:"periodStartUtc"`
	PeriodEndUTC     string          `json:"periodEndUtc"`
	TimeZoneID       string          `json:"timeZoneId"`
	RunKeyHash       string          `json:"runKeyHash"`
	Parameters       json.RawMessage `json:"parameters,omitempty"`
}

// Render implements Renderer.
func (h *HTTPSource) Render(ctx context.Context, req RenderRequest) (File, error) {
	ft, ok := formatTypes[req.Format]
	if !ok {
		return File{}, automation.Permanent(fmt.Errorf("HTTP report source: unsupported format %q", req.Format))
	}
	body, _ := json.Marshal(httpSourceRequest{ReportType: req.ReportType, SubscriptionGuid: req.SubscriptionGuid,
		BusinessUnitID: req.BusinessUnitID, Format: req.Format, PeriodStartUTC: req.PeriodStart.UTC().Format(time.RFC3339),
		PeriodEndUTC: req.PeriodEnd.UTC().Format(time.RFC3339), TimeZoneID: req.TimeZoneID, RunKeyHash: req.RunKeyHash,
		Parameters: req.Parameters})
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return File{}, automation.Permanent(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", ft.media)
	hr.Header.Set("Idempotency-Key", req.RunKeyHash)
	client := &http.Client{Timeout: 60 * time.Second}
	if h.Client != nil {
		c := *h.Client // a copy: redirects are never followed, whatever the caller's client does
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(hr)
	if err != nil {
		return File{}, fmt.Errorf("HTTP report source: %w", err)
	}
	defer resp.Body.Close()
	max := h.MaxBytes
	if max <= 0 {
		max = DefaultHTTPSourceMaxBytes
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return File{}, fmt.Errorf("HTTP report source: reading the answer: %w", err)
	}
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests:
		return File{}, fmt.Errorf("HTTP report source answered %d (retried)", resp.StatusCode)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return File{}, automation.Permanent(fmt.Errorf("HTTP report source answered %d to %s: redirects are not followed (configure the final URL)",
			resp.StatusCode, resp.Header.Get("Location")))
	case resp.StatusCode != http.StatusOK:
		return File{}, automation.Permanent(fmt.Errorf("HTTP report source answered %d: %s", resp.StatusCode, snippet(data)))
	case int64(len(data)) > max:
		return File{}, automation.Permanent(fmt.Errorf("HTTP report source: the report is larger than %d bytes", max))
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !strings.EqualFold(mt, ft.media) {
		return File{}, automation.Permanent(errors.New("HTTP report source: answered Content-Type " + resp.Header.Get("Content-Type") + ", want " + ft.media))
	}
	return File{Body: data, ContentType: resp.Header.Get("Content-Type"), Extension: ft.ext}, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
