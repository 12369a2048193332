package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/otlptest"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

// HTTPTransport (the billing client's, shared/app): each call is a client span named by its
// method and route, a child of the caller's span, and the request carries that span as its
// W3C traceparent header; with telemetry off the transport is returned as it is. Not
// parallel: Setup installs the process's OTel globals.
func TestHTTPTransportMakesAClientSpanAndSendsItsTraceParent(t *testing.T) {
	var zero *telemetry.Providers
	if rt := zero.HTTPTransport(nil); rt != http.DefaultTransport {
		t.Fatalf("telemetry off: transport %T, want http.DefaultTransport as it is", rt)
	}
	ctx := context.Background()
	rcv, p := telemetrytest.Export(t, telemetry.Options{Ratio: 1})
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("traceparent")
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	pctx, parent := telemetry.Start(ctx, "budget.charge", 0)
	req, _ := http.NewRequestWithContext(pctx, http.MethodPost, srv.URL+"/v1/transfers", strings.NewReader("{}"))
	resp, err := (&http.Client{Transport: p.HTTPTransport(nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	parent.End()
	if err := p.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	var call otlptest.Span
	for _, s := range rcv.Spans() {
		if s.Name == "POST /v1/transfers" {
			call = s
		}
	}
	if call.Kind != "SPAN_KIND_CLIENT" || call.ParentID != parent.SpanContext().SpanID().String() {
		t.Fatalf("the call's span %+v, want a client span child of %s; spans %+v", call, parent.SpanContext().SpanID(), rcv.Spans())
	}
	if want := "00-" + call.TraceID + "-" + call.SpanID + "-01"; got != want {
		t.Fatalf("the request carried traceparent %q, want its client span's %q", got, want)
	}
}

// HTTPMiddleware's server span names no one (docs/operations.md#spans): the paths of the
// product carry recipient ids (an e-mail address, a phone number), customer ids and push
// device tokens, which no span attribute may hold (the product's own attributes name
// events, commands and rows, never a person). The span's url.path is the route's first two
// segments, as its name; the handler still sees the whole path. Not parallel: Setup
// installs the process's OTel globals.
func TestHTTPServerSpanKeepsIdsOutOfItsPath(t *testing.T) {
	ctx := context.Background()
	rcv, p := telemetrytest.Export(t, telemetry.Options{Ratio: 1})
	var seen []string
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /api/devices/{customerId}/{token}", func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+" "+r.PathValue("token"))
	})
	mux.HandleFunc("GET /api/preferences/recipients/{recipientId}", func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+" "+r.PathValue("recipientId"))
	})
	h := p.HTTPMiddleware(mux)
	for _, c := range []struct{ method, path string }{
		{"PUT", "/api/devices/cust-8812/fcm-token-SECRET"},
		{"GET", "/api/preferences/recipients/jane.doe@example.com"},
		{"GET", "/api/preferences/recipients/%2B61400111222"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s %s: %d", c.method, c.path, rec.Code)
		}
	}
	want := []string{"/api/devices/cust-8812/fcm-token-SECRET fcm-token-SECRET",
		"/api/preferences/recipients/jane.doe@example.com jane.doe@example.com",
		"/api/preferences/recipients/+61400111222 +61400111222"}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("the handler saw %q, want the whole paths %q", seen, want)
	}
	if err := p.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3: %+v", len(spans), spans)
	}
	for _, s := range spans {
		for k, v := range s.Attributes {
			for _, secret := range []string{"cust-8812", "fcm-token", "jane.doe", "61400111222"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %q attribute %s = %q holds %q", s.Name, k, v, secret)
				}
			}
		}
		if got := s.Attributes["url.path"]; got != "/api/devices" && got != "/api/preferences" {
			t.Errorf("span %q url.path %q, want the route's first two segments", s.Name, got)
		}
	}
}
