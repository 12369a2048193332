package delivery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/otlptest"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

// The relay's spans, every new trace sampled: an outbox row is one producer span in the
// trace of the transaction that wrote it, and an envelope's items are one batch send (one
// span with messaging.batch.message_count, every item carrying that span's traceparent). A
// row written in a trace that was not sampled makes no span: its messages carry the row's
// traceparent as it is (the same trace, still not sampled). An untraced row starts a trace.
// Not parallel: telemetry installs the process's OTel globals.
func TestRelaySpansPerRowAndUnsampledRowsPassTheirContextOn(t *testing.T) {
	rcv, p := telemetrytest.Export(t, telemetry.Options{Sampler: telemetry.SamplerParentBasedTraceIDRatio, Ratio: 1})
	ctx := context.Background()
	st, clock := relayStore(t)

	const unsampled = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
	withTP := func(m store.OutboxMessage) store.OutboxMessage { m.TraceParent = unsampled; return m }
	startWithOutbox(t, st, clock, "cx-unsampled", []store.OutboxMessage{
		withTP(store.OutboxMessage{MessageID: "u-one", Destination: "q", Body: []byte("{}")}), withTP(envelopeOf(t, "u", 3))})
	wctx, writer := telemetry.Start(ctx, "writer", 0)
	if _, err := st.CampaignStart(wctx, store.CampaignStartParams{
		Execution: store.CampaignExecution{ExecutionID: "cx-traced", BusinessUnitID: "bu", CampaignID: "c", RunID: "r", RecipientID: "x", SourceEventID: "cx-traced", LocalDate: "2026-10-01", DefinitionJSON: "{}"},
		Command:   store.CampaignCommand{CommandID: "cx-traced:0:a", EffectKey: "cx-traced", ExecutionID: "cx-traced", BusinessUnitID: "bu", CampaignID: "c", RecipientID: "x", ActionKey: "a", ActionType: "T", Provider: "p", LocalDate: "2026-10-01"},
		Outbox:    []store.OutboxMessage{{MessageID: "one", Destination: "q", Body: []byte("{}")}, envelopeOf(t, "g", 3)},
		Now:       clock.Now(),
	}); err != nil {
		t.Fatal(err)
	}
	writer.End()
	startWithOutbox(t, st, clock, "cx-untraced", []store.OutboxMessage{{MessageID: "r-one", Destination: "q", Body: []byte("{}")}})

	pub := &listPublisher{}
	r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock}
	if n, err := r.RunOnce(ctx); err != nil || n != 9 {
		t.Fatalf("published %d, %v; want 9 messages", n, err)
	}
	if err := p.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	var publishes []otlptest.Span
	for _, s := range rcv.Spans() {
		if strings.HasPrefix(s.Name, "publish ") {
			publishes = append(publishes, s)
		}
	}
	if len(publishes) != 3 {
		t.Fatalf("%d publish spans, want 3 (the traced row, the traced envelope, the untraced row): %+v", len(publishes), publishes)
	}
	w := writer.SpanContext()
	one, batch, root := publishes[0], publishes[1], publishes[2]
	if one.Name != "publish q" || one.Kind != "SPAN_KIND_PRODUCER" || one.TraceID != w.TraceID().String() || one.ParentID != w.SpanID().String() ||
		one.Attributes["messaging.message.id"] != "one" {
		t.Errorf("the traced row's span %+v, want a producer span of message one, child of the writer %s", one, w.SpanID())
	}
	if batch.Name != "publish facts" || batch.ParentID != w.SpanID().String() || batch.Attributes["messaging.batch.message_count"] != "3" ||
		batch.Attributes["messaging.message.id"] != "" {
		t.Errorf("the traced envelope's span %+v, want one batch send of 3, child of the writer", batch)
	}
	if root.Name != "publish q" || root.ParentID != "" || root.Attributes["messaging.message.id"] != "r-one" {
		t.Errorf("the untraced row's span %+v, want a root", root)
	}
	carries := map[string]string{"one": one.SpanID, "g-0": batch.SpanID, "g-1": batch.SpanID, "g-2": batch.SpanID, "r-one": root.SpanID}
	for _, m := range pub.got {
		if strings.HasPrefix(m.ID, "u-") {
			if m.TraceParent != unsampled {
				t.Errorf("message %s of the unsampled row carries %q, want the row's %q", m.ID, m.TraceParent, unsampled)
			}
			continue
		}
		if want := carries[m.ID]; want == "" || !strings.Contains(m.TraceParent, "-"+want+"-01") {
			t.Errorf("message %s carries %q, want its publish span %s, sampled", m.ID, m.TraceParent, want)
		}
	}
}
