package telemetry_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/telemetry"
)

// TestMetricNamesUnitsAndLabels pins every product metric as a Prometheus scraper sees it
// (the OTel name with its unit, as the exporter translates it) and its label names: a
// renamed metric, a changed unit or a new label (an id, say) fails here, and
// docs/operations.md must follow. Not parallel: Setup installs the process's OTel globals.
func TestMetricNamesUnitsAndLabels(t *testing.T) {
	ctx := context.Background()
	p, err := telemetry.Setup(ctx, telemetry.Options{MetricsPrometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(ctx)
	telemetry.CountIngest(ctx, "bu-1", "Login", "accepted")
	telemetry.CountAttributeApply(ctx, "Applied", 1)
	telemetry.CountCommand(ctx, "WAITING_BUDGET", "telco")
	telemetry.RecordProviderCall(ctx, "telco", "ok", 20*time.Millisecond)
	telemetry.RecordPublish(ctx, "tracking", true, time.Second)
	fams, err := p.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "automation_") {
			continue
		}
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		var names []string
		for n := range labels {
			names = append(names, n)
		}
		sort.Strings(names)
		got[f.GetName()] = f.GetType().String() + " " + strings.Join(names, ",")
	}
	want := map[string]string{
		"automation_ingest_events_total":       "COUNTER automation_business_unit,automation_event_type,automation_status",
		"automation_attribute_applies_total":   "COUNTER automation_outcome",
		"automation_attribute_triggers_total":  "COUNTER ",
		"automation_campaign_commands_total":   "COUNTER automation_provider,automation_status",
		"automation_provider_duration_seconds": "HISTOGRAM automation_outcome,automation_provider",
		"automation_outbox_published_total":    "COUNTER automation_outcome,messaging_destination_name",
		"automation_outbox_lag_seconds":        "HISTOGRAM messaging_destination_name",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Fatalf("metrics %v\nwant %v", got, want)
	}
}

// Telemetry off: the recording sites do nothing (no instrument, no attribute set).
func TestMetricsOffRecordNothing(t *testing.T) {
	if telemetry.MetricsEnabled() {
		t.Skip("another Setup is live in this process")
	}
	allocs := testing.AllocsPerRun(100, func() {
		telemetry.CountIngest(context.Background(), "bu-1", "Login", "accepted")
		telemetry.RecordPublish(context.Background(), "tracking", true, time.Second)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations a call with metrics off", allocs)
	}
}

// Telemetry off: starting and ending a span and reading a context's traceparent allocate
// nothing and return the caller's context as it was.
func TestSpansOffCostNothing(t *testing.T) {
	if telemetry.Enabled() {
		t.Skip("another Setup is live in this process")
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, span := telemetry.Start(ctx, "x", 0)
		if c != ctx {
			t.Fatal("Start changed the context with telemetry off")
		}
		telemetry.End(span, nil, "")
		_, _ = telemetry.Inject(c)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations a span with telemetry off", allocs)
	}
}
