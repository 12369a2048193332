package telemetry_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

const (
	unsampledParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
	sampledParent   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

// Under a parent-based sampler (the default), the child of a parent that was not sampled
// is not sampled either (the SDK's ParentBased defaults), so Start asks the SDK nothing: it
// returns the caller's context and a no-op span, allocating nothing, and what the child
// passes on is the parent's traceparent (same trace, "not sampled"). A sampled parent's
// child records, in the parent's trace. Not parallel: Setup installs the process's OTel
// globals.
func TestUnsampledParentStartsNoSpan(t *testing.T) {
	ctx := context.Background()
	telemetrytest.Export(t, telemetry.Options{Ratio: 1}) // the default sampler, every root sampled

	parent := telemetry.Extract(ctx, unsampledParent, "")
	allocs := testing.AllocsPerRun(100, func() {
		c, span := telemetry.Start(parent, "child", trace.SpanKindProducer)
		if c != parent || span.IsRecording() {
			t.Fatal("a child of an unsampled parent got a context or a recording span of its own")
		}
		telemetry.End(span, nil, "")
		c, span = telemetry.StartLinked(parent, "row", trace.SpanContextFromContext(parent))
		if c != parent || span.IsRecording() {
			t.Fatal("a linked child of an unsampled parent got a context or a recording span of its own")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a child of an unsampled parent", allocs)
	}
	c, _ := telemetry.Start(parent, "child", 0)
	if tp, _ := telemetry.Inject(c); tp != unsampledParent {
		t.Errorf("the child passes on %q, want the parent's %q", tp, unsampledParent)
	}

	c, span := telemetry.Start(telemetry.Extract(ctx, sampledParent, ""), "child", 0)
	if !span.IsRecording() || span.SpanContext().TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("a sampled parent's child: recording %v, trace %s; want recording, in the parent's trace", span.IsRecording(), span.SpanContext().TraceID())
	}
	if tp, _ := telemetry.Inject(c); tp == sampledParent {
		t.Error("a recording child passes on its parent's traceparent, want its own")
	}
	span.End()
}

// A sampler that is not parent-based decides each span by itself: Start asks it even under
// an unsampled parent. Not parallel.
func TestUnsampledParentIsAskedWhenTheSamplerIsNotParentBased(t *testing.T) {
	ctx := context.Background()
	telemetrytest.Export(t, telemetry.Options{Sampler: telemetry.SamplerTraceIDRatio, Ratio: 1})
	_, span := telemetry.Start(telemetry.Extract(ctx, unsampledParent, ""), "child", 0)
	defer span.End()
	if !span.IsRecording() {
		t.Fatal("traceidratio at 1 did not sample the child of an unsampled parent")
	}
	for name, want := range map[string]bool{"": true, telemetry.SamplerParentBasedTraceIDRatio: true, telemetry.SamplerParentBasedAlwaysOn: true,
		telemetry.SamplerParentBasedAlwaysOff: true, telemetry.SamplerTraceIDRatio: false, telemetry.SamplerAlwaysOn: false, telemetry.SamplerAlwaysOff: false} {
		if got := telemetry.ParentBased(name); got != want {
			t.Errorf("ParentBased(%q) = %v, want %v", name, got, want)
		}
	}
}

// A recording reuses its instrument's label set, built once: counting allocates nothing,
// and past the cache's bound every set is still counted (built per call). Not parallel.
func TestMetricLabelSetsBuiltOnce(t *testing.T) {
	ctx, p := context.Background(), telemetrytest.Prometheus(t)
	telemetry.CountDelivery(ctx, "email", "Sent")
	allocs := testing.AllocsPerRun(100, func() {
		telemetry.CountDelivery(ctx, "email", "Sent")
		telemetry.CountDueOutcomes(ctx, "Completed", 3)
		telemetry.RecordPublished(ctx, "tracking", 2, false, 0)
	})
	if allocs != 0 {
		t.Errorf("%v allocations a recording with its label set cached", allocs)
	}
	const distinct = 1500 // over the cache's bound
	for i := range distinct {
		telemetry.CountDelivery(ctx, fmt.Sprintf("ch-%d", i), "Sent")
		telemetry.CountDelivery(ctx, fmt.Sprintf("ch-%d", i), "Sent")
	}
	counted := telemetrytest.Series(t, p.Registry, "automation_delivery_outcomes_total")
	series, total := len(counted), 0.0
	for _, v := range counted {
		total += v
	}
	if want := distinct + 1; series != want || total != 2*distinct+102 {
		t.Fatalf("%d series counting %v, want %d counting %d", series, total, want, 2*distinct+102)
	}
}
