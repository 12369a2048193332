package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/telemetry"
)

// setupBench turns telemetry on for b at ratio, exporting spans and metrics over OTLP/HTTP
// to an in-process endpoint that discards them (as shared/app's -bench.otel does), and
// returns the function that flushes what is buffered.
func setupBench(b *testing.B, ratio float64) func() {
	b.Helper()
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	ctx := context.Background()
	p, err := telemetry.Setup(ctx, telemetry.Options{Endpoint: sink.URL, Ratio: ratio, MetricsOTLP: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Shutdown(ctx); sink.Close() })
	return func() { _ = p.ForceFlush(ctx) }
}

// cpuNanos is the process's CPU time so far (user + system, every goroutine: the span
// exporter's and the endpoint's too).
func cpuNanos() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchCPU runs f b.N times and returns the process's CPU time per run in nanoseconds, the
// exports flushed at the end included: steadier than ns/op on a shared machine, and it counts
// the work the batch exporter does on another goroutine. The benchmark reports it as µs/span
// (b.ReportMetric in the Benchmark function itself, where shared/benchtable's
// TestEveryBenchmarkReportsReadableUnits looks for a readable unit).
func benchCPU(b *testing.B, flush func(), f func()) float64 {
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuNanos()
	for range b.N {
		f()
	}
	flush()
	b.StopTimer()
	return float64(cpuNanos()-c0) / float64(b.N)
}

var ratios = []struct {
	name  string
	ratio float64
}{{"ratio=0.1", 0.1}, {"ratio=1", 1}}

// BenchmarkRowSpan is the telemetry of one due row as the poller runs it
// (scheduler.Poller.run) with no stored trace (a root, as in make bench's W1): its
// scheduler.execute span linked to the poll, the span's attributes, the traceparent
// written to its outbox row, and its outcome counted.
func BenchmarkRowSpan(b *testing.B) {
	for _, r := range ratios {
		b.Run(r.name, func(b *testing.B) {
			flush := setupBench(b, r.ratio)
			_, poll := telemetry.Start(context.Background(), "scheduler.claim", 0)
			defer poll.End()
			link := poll.SpanContext()
			ctx := context.Background()
			cpuNs := benchCPU(b, flush, func() {
				c, span := telemetry.StartLinked(telemetry.Extract(ctx, "", ""), "scheduler.execute", link)
				if span.IsRecording() {
					span.SetAttributes(telemetry.SchedulerKey.String("sk-1"), telemetry.BusinessUnitID.String("bu-1"),
						attribute.String("automation.automation_type", "Reminder"), attribute.Float64("automation.lateness_seconds", 1.5))
				}
				_, _ = telemetry.Inject(c)
				telemetry.End(span, nil, "")
				telemetry.CountDueOutcome(c, "Completed")
			})
			b.ReportMetric(cpuNs/1e3, "µs/span") // CPU time per span, its export included
		})
	}
}

// BenchmarkPublishSpan is the telemetry of one outbox message the relay publishes
// (delivery.Relay.publishTraced) from a row written in a trace sampled at the ratio: the
// producer span in the row's trace, the message's traceparent, the publish counted and its
// lag recorded.
func BenchmarkPublishSpan(b *testing.B) {
	for _, r := range ratios {
		b.Run(r.name, func(b *testing.B) {
			flush := setupBench(b, r.ratio)
			// Rows written in traces the sampler decided: one in ten sampled at 0.1.
			var parents []string
			for range 100 {
				c, span := telemetry.Start(context.Background(), "scheduler.execute", 0)
				tp, _ := telemetry.Inject(c)
				span.End()
				parents = append(parents, tp)
			}
			ctx := context.Background()
			i := 0
			cpuNs := benchCPU(b, flush, func() {
				tp := parents[i%len(parents)]
				i++
				sctx, span := telemetry.Start(telemetry.Extract(ctx, tp, ""), "publish notification-dispatch", oteltrace.SpanKindProducer)
				if span.IsRecording() {
					span.SetAttributes(attribute.String("messaging.system", "servicebus"), attribute.String("messaging.operation.type", "send"),
						attribute.String("messaging.destination.name", "notification-dispatch"), attribute.String("messaging.message.id", "m-1"),
						telemetry.OutboxID.Int64(int64(i)))
					_, _ = telemetry.Inject(sctx)
				}
				telemetry.End(span, nil, "")
				telemetry.RecordPublish(ctx, "notification-dispatch", true, 0)
			})
			b.ReportMetric(cpuNs/1e3, "µs/span") // CPU time per span, its export included
		})
	}
}
