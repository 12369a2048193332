package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// `automation otlp-sim` receives a span exported by the real OTLP/HTTP exporter (protobuf)
// and prints it as one line of docs/observability.md's listing: name, kind, span, parent,
// key attributes; a stray argument is exit 2.
func TestOTLPSimPrintsExportedSpans(t *testing.T) {
	t.Parallel()
	if code := run(t.Context(), []string{"otlp-sim", "extra"}, nil, io.Discard, io.Discard); code != 2 {
		t.Fatalf("with a stray argument: exit %d, want 2", code)
	}
	url, lines, stop := startSim(t, "otlp-sim", "-addr", "127.0.0.1:0")
	host := strings.TrimPrefix(url, "http://")
	got := make(chan string, 16) // read while the synchronous exporter waits for its answer
	go func() {
		for {
			l, err := lines.ReadString('\n')
			if err != nil {
				close(got)
				return
			}
			got <- l
		}
	}()
	next := func() string {
		select {
		case l := <-got:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("otlp-sim printed no span line")
			return ""
		}
	}

	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpoint(host), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := tp.Tracer("otlpsim-test")
	pctx, parent := tr.Start(t.Context(), "POST /api/events", oteltrace.WithSpanKind(oteltrace.SpanKindServer))
	_, child := tr.Start(pctx, "gateway.ingest", oteltrace.WithAttributes(
		attribute.String("automation.event_id", "login-sim-1"), attribute.String("automation.status", "accepted"), attribute.String("ignored", "x")))
	child.End()
	parent.SetAttributes(attribute.Int("http.response.status_code", 200))
	parent.End()

	childLine, parentLine := next(), next()
	pid, cid := parent.SpanContext().SpanID().String(), child.SpanContext().SpanID().String()
	for _, want := range []string{"gateway.ingest", "INTERNAL", "span=" + cid, "parent=" + pid, "automation.event_id=login-sim-1 automation.status=accepted"} {
		if !strings.Contains(childLine, want) {
			t.Errorf("child line %q lacks %q", childLine, want)
		}
	}
	if strings.Contains(childLine, "ignored") {
		t.Errorf("child line %q prints an attribute outside the key ones", childLine)
	}
	for _, want := range []string{"POST /api/events", "SERVER", "span=" + pid, "parent=(root)", "http.response.status_code=200"} {
		if !strings.Contains(parentLine, want) {
			t.Errorf("parent line %q lacks %q", parentLine, want)
		}
	}
	stop()
}
