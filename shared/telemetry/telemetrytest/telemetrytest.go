package telemetrytest

import (
	"context"
	"testing"

	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/otlptest"
)

// Export starts an OTLP receiver and sets telemetry up to export to it with opts (its
// Endpoint set to the receiver's); telemetry is shut down, then the receiver closed, when
// t ends. A Setup error fails t.
func Export(t testing.TB, opts telemetry.Options) (*otlptest.Receiver, *telemetry.Providers) {
	t.Helper()
	rcv := otlptest.Start()
	t.Cleanup(rcv.Close)
	opts.Endpoint = rcv.URL
	p, err := telemetry.Setup(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Shutdown(context.Background()) })
	return rcv, p
}

// Prometheus sets telemetry up with the Prometheus registry only (no exporter), shut down
// when t ends; p.Registry.Gather reads what was counted. A Setup error fails t.
func Prometheus(t testing.TB) *telemetry.Providers {
	t.Helper()
	p, err := telemetry.Setup(context.Background(), telemetry.Options{MetricsPrometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Shutdown(context.Background()) })
	return p
}
