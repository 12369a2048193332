package acceptance_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/acceptance"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/telemetry/otlptest"
)

// startTraced starts the loyalty harness exporting every span over OTLP/HTTP to an
// in-process receiver (a real endpoint decoding the protobuf). Not parallel: telemetry
// installs the process's OTel globals, so no other runtime of this package runs meanwhile.
func startTraced(t *testing.T, at string) (*acceptance.Harness, *otlptest.Receiver) {
	t.Helper()
	rcv := otlptest.Start()
	t.Cleanup(rcv.Close)
	h, err := acceptance.Start(context.Background(), acceptance.Options{Dir: t.TempDir(), Start: ts(at), Scenario: scenarioFile,
		Registry: registryFile, FunctionsDir: functionsDir, Env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1",
			"OTEL_METRICS_EXPORTER": "none"}})
	if err != nil {
		t.Fatal(err)
	}
	return h, rcv
}

// traceOf finds the trace whose "gateway.ingest" span accepted event id, and returns its
// spans (start order) and their names.
func traceOf(t *testing.T, rcv *otlptest.Receiver, eventID string) ([]otlptest.Span, []string) {
	t.Helper()
	for _, s := range rcv.Spans() {
		if s.Name == "gateway.ingest" && s.Attributes["automation.event_id"] == eventID {
			spans := rcv.Trace(s.TraceID)
			names := make([]string, len(spans))
			for i, x := range spans {
				names[i] = x.Name
			}
			return spans, names
		}
	}
	t.Fatalf("no gateway.ingest span for %s among %d spans", eventID, len(rcv.Spans()))
	return nil, nil
}

// hasInOrder reports whether names holds want in that order (other spans between them).
func hasInOrder(names, want []string) bool {
	i := 0
	for _, n := range names {
		if i < len(want) && n == want[i] {
			i++
		}
	}
	return i == len(want)
}

// One Login posted to a real server produces one trace: the HTTP request, the gateway's
// ingest, the outbox publish to tracking, the attribute apply (the TrackingProcessor batch
// invocation links to it), the trigger's publish to events, the campaign dispatcher (CampaignDispatch, the
// trigger), the command's publish and its worker (campaign.command), and the provider calls
// of the welcome campaign's two actions (inbox and log): all with one trace id, each span's
// parent in the same trace. Without the outbox's TraceParent column, or without the
// traceparent on the bus messages, the stages after the commit start traces of their own.
func TestOneLoginIsOneTrace(t *testing.T) {
	h, rcv := startTraced(t, "2026-07-01T02:00:00Z")
	ctx := context.Background()
	r, err := h.Ingest(ctx, "", login("login-trace-1", "bu-hcm", "CUST-HCM-90", "2026-07-01T02:00:00Z", "DEV-A"))
	if err != nil || r.Status != http.StatusOK || r.Results[0].Status != gateway.StatusAccepted {
		t.Fatalf("ingest %+v %v", r, err)
	}
	if err := h.Advance(ctx, ts("2026-07-01T02:05:00Z")); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil { // flushes the spans
		t.Fatal(err)
	}
	spans, names := traceOf(t, rcv, "login-trace-1")
	t.Logf("trace %s:\n%s", spans[0].TraceID, describe(spans))
	want := []string{"POST /api/events", "gateway.ingest", "publish tracking", "attribute.apply",
		"publish events", "campaign.trigger", "publish campaign-commands", "campaign.command", "campaign.provider"}
	if !hasInOrder(prefixes(names), want) {
		t.Fatalf("spans %q, want in order %q", names, want)
	}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	roots := 0
	for _, s := range spans {
		if s.ParentID == "" {
			roots++
		} else if !ids[s.ParentID] {
			t.Errorf("span %s's parent %s is not in the trace", s.Name, s.ParentID)
		}
	}
	if roots != 1 {
		t.Errorf("%d roots, want 1", roots)
	}
	// TrackingProcessor takes a batch: its invocation span links to each message's trace,
	// and the message's own work (attribute.apply) is a child of that message's context.
	linked := false
	for _, s := range rcv.Spans() {
		if s.Name == "TrackingProcessor" && s.Kind == "SPAN_KIND_CONSUMER" && slices.Contains(s.Links, spans[0].TraceID) {
			linked = true
		}
	}
	if !linked {
		t.Error("no TrackingProcessor batch span links to the trace")
	}
	providers := 0
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "campaign.provider") {
			providers++
			if s.Kind != "SPAN_KIND_CLIENT" || s.Attributes["automation.command_id"] == "" {
				t.Errorf("provider span %+v", s)
			}
		}
	}
	if providers != 2 {
		t.Errorf("%d provider calls in the trace, want the welcome campaign's 2 (inbox, log)", providers)
	}
}

// prefixes cuts each name at its first space after a dotted stage name ("campaign.provider
// inbox" → "campaign.provider"), keeping "publish x" and HTTP names whole.
func prefixes(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		if strings.HasPrefix(n, "campaign.provider ") {
			n = "campaign.provider"
		}
		out[i] = n
	}
	return out
}

// describe lists spans in docs/observability.md's format (otlptest.Line), one a line.
func describe(spans []otlptest.Span) string {
	var b strings.Builder
	byID := map[string]string{}
	for _, s := range spans {
		byID[s.SpanID] = s.Name
	}
	for _, s := range spans {
		b.WriteString("  " + otlptest.Line(s, byID[s.ParentID]) + "\n")
	}
	return b.String()
}

// A reminder is one trace too, although its delivery comes twelve days after its event: the
// password-expiry snapshot posted to the server is published to domain-events, its handler
// creates the scheduler row (which keeps the trace, migration 0044), the due claim days
// later executes the row in that trace (linked to the poll that claimed it), and the
// delivery's send (NotificationDispatch takes batches) joins it through its message.
func TestAReminderIsOneTraceFromEventToDelivery(t *testing.T) {
	h, rcv := startTraced(t, "2026-07-01T01:15:00Z")
	ctx := context.Background()
	r, err := h.Ingest(ctx, "", snapshot("pwd-trace", "Password_Expiry.Upserted", "bu-hcm", "CustomerPassword", "CUST-HCM-91", 1, "/iam",
		map[string]any{"customerId": "CUST-HCM-91", "passwordExpiresOn": "2026-07-20"}))
	if err != nil || r.Status != http.StatusOK || r.Results[0].Status != gateway.StatusAccepted {
		t.Fatalf("ingest %+v %v", r, err)
	}
	if err := h.Advance(ctx, ts("2026-07-13T03:00:00Z")); err != nil {
		t.Fatal(err)
	}
	if d := h.Deliveries(); len(d) != 1 || d[0].Channel != "inbox" {
		t.Fatalf("deliveries %+v", d)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	spans, names := traceOf(t, rcv, "pwd-trace")
	t.Logf("trace %s:\n%s", spans[0].TraceID, describe(spans))
	want := []string{"POST /api/events", "gateway.ingest", "publish domain-events", "DomainEventHandler", "scheduler.execute",
		"publish notification-dispatch", "delivery.send inbox"}
	if !hasInOrder(names, want) {
		t.Fatalf("spans %q, want in order %q", names, want)
	}
	for _, s := range spans {
		if s.Name == "scheduler.execute" && len(s.Links) != 1 {
			t.Errorf("scheduler.execute links %v, want the poll's trace", s.Links)
		}
	}
}
