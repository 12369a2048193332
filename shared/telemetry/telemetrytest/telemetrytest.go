package telemetrytest

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

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

// Series gathers g (a Providers' Registry) and returns the series of the metric family
// name: each series' labels as "label=value" pairs joined by "," (in the order Gather
// gives, sorted by label name; "" for a series without labels) to its value, a counter's or
// a gauge's. A Gather error, or no family of that name, fails t.
func Series(t testing.TB, g prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		out := make(map[string]float64, len(f.GetMetric()))
		for _, m := range f.GetMetric() {
			kv := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				kv = append(kv, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(kv, ",")] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
		return out
	}
	t.Fatalf("no metric %s", name)
	return nil
}
