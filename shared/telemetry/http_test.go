package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/otlptest"
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
	rcv := otlptest.Start()
	defer rcv.Close()
	ctx := context.Background()
	p, err := telemetry.Setup(ctx, telemetry.Options{Endpoint: rcv.URL, Ratio: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(ctx)
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
