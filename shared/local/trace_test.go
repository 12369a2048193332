package local_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/local"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

// Trace context crosses the in-process bus as the Functions host would hand it over: a
// message published in a traced operation is handled, on its first delivery and on its
// redelivery after a failure, in an invocation span whose parent is that operation's span;
// in a batch invocation each message's own context is read back (funchost.MessageContext)
// and the invocation's span links to every message's trace. Not parallel: telemetry
// installs the process's OTel globals.
func TestTraceContextCrossesRedeliveryAndBatches(t *testing.T) {
	rcv, tel := telemetrytest.Export(t, telemetry.Options{Sampler: telemetry.SamplerParentBasedTraceIDRatio, Ratio: 1})
	ctx := context.Background()
	clock := automation.NewManualClock(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
	b := bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: 3})
	r := funchost.NewRouter(nil)
	var oneParents []trace.SpanContext
	fail := 1
	r.Register("Consume", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		oneParents = append(oneParents, trace.SpanContextFromContext(ctx))
		if fail > 0 {
			fail--
			return funchost.Result{}, errors.New("try again")
		}
		return funchost.Result{}, nil
	})
	var batchTraces []trace.TraceID
	r.Register("ConsumeMany", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		items, err := inv.ServiceBusBatch("message")
		if err != nil {
			return funchost.Result{}, err
		}
		for _, it := range items {
			batchTraces = append(batchTraces, trace.SpanContextFromContext(funchost.MessageContext(ctx, it.Message)).TraceID())
		}
		return funchost.Result{}, nil
	})
	defs := []funchost.FunctionDef{
		{Name: "Consume", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "q"}},
		{Name: "ConsumeMany", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "many", Cardinality: "many"}},
	}
	h, err := local.NewHost(r, b, defs, func(string) (string, bool) { return "", false }, clock, nil)
	if err != nil {
		t.Fatal(err)
	}
	publishIn := func(name string, m bus.Message) trace.SpanContext {
		wctx, span := telemetry.Start(ctx, name, trace.SpanKindInternal)
		defer span.End()
		if err := b.Publish(wctx, m); err != nil {
			t.Fatal(err)
		}
		return span.SpanContext()
	}
	writer := publishIn("writer", bus.Message{ID: "m-1", Destination: "q", Body: []byte(`{}`)})
	w1 := publishIn("writer-a", bus.Message{ID: "b-1", Destination: "many", Body: []byte(`{}`)})
	w2 := publishIn("writer-b", bus.Message{ID: "b-2", Destination: "many", Body: []byte(`{}`)})
	if err := h.RunDue(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if len(oneParents) != 2 {
		t.Fatalf("%d deliveries, want 2 (a failure and its redelivery)", len(oneParents))
	}
	for i, sc := range oneParents {
		if sc.TraceID() != writer.TraceID() {
			t.Errorf("delivery %d in trace %s, want the writer's %s", i+1, sc.TraceID(), writer.TraceID())
		}
	}
	if !slices.Equal(batchTraces, []trace.TraceID{w1.TraceID(), w2.TraceID()}) {
		t.Fatalf("batch messages in traces %v, want %v", batchTraces, []trace.TraceID{w1.TraceID(), w2.TraceID()})
	}
	if err := tel.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	var consumes, linked int
	for _, s := range rcv.Spans() {
		switch s.Name {
		case "Consume":
			if s.TraceID == writer.TraceID().String() && s.ParentID == writer.SpanID().String() && s.Kind == "SPAN_KIND_CONSUMER" {
				consumes++
			}
		case "ConsumeMany":
			if slices.Contains(s.Links, w1.TraceID().String()) && slices.Contains(s.Links, w2.TraceID().String()) {
				linked++
			}
		}
	}
	if consumes != 2 || linked != 1 {
		t.Fatalf("received %d Consume spans under the writer (want 2), %d batch spans linking both traces (want 1): %+v", consumes, linked, rcv.Spans())
	}
}
