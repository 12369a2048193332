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
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

// TestMetricNamesUnitsAndLabels pins every product metric as a Prometheus scraper sees it
// (the OTel name with its unit, as the exporter translates it) and its label names: a
// renamed metric, a changed unit or a new label (an id, say) fails here, and
// docs/operations.md must follow. Not parallel: Setup installs the process's OTel globals.
func TestMetricNamesUnitsAndLabels(t *testing.T) {
	ctx, p := context.Background(), telemetrytest.Prometheus(t)
	telemetry.CountIngest(ctx, "bu-1", "Login", "accepted")
	telemetry.CountAttributeApply(ctx, "Applied", 1)
	telemetry.CountCommand(ctx, "WAITING_BUDGET", "telco")
	telemetry.RecordProviderCall(ctx, "telco", "ok", 20*time.Millisecond)
	telemetry.RecordPublish(ctx, "tracking", true, time.Second)
	telemetry.CountDueClaimed(ctx, 3)
	telemetry.CountDueOutcome(ctx, "Completed")
	telemetry.CountDelivery(ctx, "email", "Sent")
	age := int64(42)
	if _, err := p.RegisterLevels(func(context.Context) (telemetry.Levels, error) {
		return telemetry.Levels{DuePending: 1, DueOldestAgeSeconds: &age, FeesByStatus: map[string]int{"UNKNOWN": 2, "made-up": 9}}, nil
	}, time.Now, 0); err != nil {
		t.Fatal(err)
	}
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
				if f.GetName() == "automation_billing_fees" && !slices.Contains(telemetry.FeeStatuses, l.GetValue()) {
					t.Errorf("fee gauge with status %q: only the product's fee statuses are labels", l.GetValue())
				}
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
		"automation_due_claimed_total":         "COUNTER ",
		"automation_due_outcomes_total":        "COUNTER automation_outcome",
		"automation_delivery_outcomes_total":   "COUNTER automation_channel,automation_status",
		// The gauges (RegisterLevels): platform-wide, the fees by their status only.
		"automation_due_pending":                                 "GAUGE ",
		"automation_due_oldest_age_seconds":                      "GAUGE ",
		"automation_due_processing":                              "GAUGE ",
		"automation_due_expired_leases":                          "GAUGE ",
		"automation_delivery_unknown":                            "GAUGE ",
		"automation_campaign_commands_unknown":                   "GAUGE ",
		"automation_campaign_commands_waiting":                   "GAUGE ",
		"automation_budget_reservations_held":                    "GAUGE ",
		"automation_budget_reservations_oldest_held_age_seconds": "GAUGE ",
		"automation_billing_fees":                                "GAUGE automation_status",
		"automation_outbox_unsent":                               "GAUGE ",
		"automation_outbox_oldest_age_seconds":                   "GAUGE ",
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

// The gauges' callback runs on each export and scrape: one store read serves every
// collection within the TTL, and the next collection after it reads again. Not parallel.
func TestLevelsReadOncePerTTL(t *testing.T) {
	p := telemetrytest.Prometheus(t)
	now := time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC)
	reads := 0
	if _, err := p.RegisterLevels(func(context.Context) (telemetry.Levels, error) {
		reads++
		return telemetry.Levels{DuePending: reads}, nil
	}, func() time.Time { return now }, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	pending := func() float64 { return telemetrytest.Series(t, p.Registry, "automation_due_pending")[""] }
	for range 5 {
		if v := pending(); v != 1 || reads != 1 {
			t.Fatalf("within the TTL: gauge %v after %d reads, want 1 after 1", v, reads)
		}
	}
	now = now.Add(10 * time.Second)
	if v := pending(); v != 2 || reads != 2 {
		t.Fatalf("after the TTL: gauge %v after %d reads, want 2 after 2", v, reads)
	}
}
