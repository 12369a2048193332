package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/otlptest"
)

// A crash between the commit and the publish does not lose the trace: an event accepted
// in a traced operation by one process, which stops before relaying it, is published by the
// next process on the same database in the writer's trace (the outbox row's TraceParent), and
// its consumer's work joins that trace too (its batch invocation links to it). Not parallel: telemetry installs the
// process's OTel globals.
func TestTraceSurvivesACrashBetweenCommitAndPublish(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL,
		"OTEL_TRACES_SAMPLER_ARG": "1", "OTEL_METRICS_EXPORTER": "none", "AUTOMATION_EAGER_PUBLISH": "false"}
	clock := automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC))
	ctx := context.Background()
	first, cfg := openSignedUp(t, env, clock)
	wctx, span := telemetry.Start(ctx, "writer", trace.SpanKindInternal)
	res, err := first.Gateway.Ingest(wctx, automation.AllBusinessUnits(), []events.Raw{{JSON: []byte(`{"specversion":"1.0","id":"evt-crash",
		"type":"SignedUp","source":"/crm","businessunitid":"bu-1","customerid":"cust-1","data":{}}`)}})
	span.End()
	if err != nil || res[0].Status != gateway.StatusAccepted {
		t.Fatalf("ingest %+v %v", res, err)
	}
	writer := span.SpanContext()
	if err := first.Close(); err != nil { // the crash: nothing relayed
		t.Fatal(err)
	}
	for _, s := range rcv.Spans() {
		if s.TraceID == writer.TraceID().String() && s.Name != "writer" && s.Name != "gateway.ingest" {
			t.Fatalf("the first process published before the crash: %+v", s)
		}
	}
	second, err := app.Open(ctx, cfg, app.Options{Clock: clock, Seed: 2, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.LocalHost("../../functions", cfg, false, quietLog); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Minute) // minutes later
	if _, err := second.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	// CampaignDispatch takes its messages in batches: its invocation span links to each
	// message's trace, and the message's own work (campaign.trigger) is a child of its
	// publish, in the writer's trace (docs/observability.md).
	var publish string
	var consumed, linked bool
	for _, s := range rcv.Trace(writer.TraceID().String()) {
		if s.Name == "publish events" {
			publish = s.SpanID
		}
	}
	for _, s := range rcv.Trace(writer.TraceID().String()) {
		if s.Name == "campaign.trigger" && publish != "" && s.ParentID == publish {
			consumed = true
		}
	}
	for _, s := range rcv.Spans() {
		if s.Name == "CampaignDispatch" && slices.Contains(s.Links, writer.TraceID().String()) {
			linked = true
		}
	}
	if publish == "" || !consumed || !linked {
		t.Fatalf("after the restart: publish in the writer's trace %v, the consumer's work a child of it %v, its invocation linked to it %v; spans %+v",
			publish != "", consumed, linked, rcv.Spans())
	}
}

// A flood of events with distinct made-up business units and event types, and distinct ids,
// leaves the ingest metric's label sets bounded: units only from those that exist (others
// count under ""), types only registered ones, and never an id. Not parallel: telemetry
// installs the process's OTel globals.
func TestMetricLabelsStayBoundedUnderAFlood(t *testing.T) {
	env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "OTEL_METRICS_EXPORTER": "prometheus"}
	ctx := context.Background()
	rt, _ := openSignedUp(t, env, automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC)))
	defer rt.Close()
	const rounds, per = 4, 500
	for r := range rounds {
		raws := make([]events.Raw, per)
		for i := range raws {
			bu, typ := fmt.Sprintf("bu-made-up-%d-%d", r, i), fmt.Sprintf("Type%d_%d", r, i)
			if i%3 == 0 {
				bu, typ = "bu-1", "SignedUp"
			}
			raws[i] = events.Raw{JSON: []byte(fmt.Sprintf(`{"specversion":"1.0","id":"evt-%d-%d","type":%q,"source":"/crm","businessunitid":%q,"customerid":"cust-%d-%d","data":{}}`,
				r, i, typ, bu, r, i))}
		}
		if _, err := rt.Gateway.Ingest(ctx, automation.AllBusinessUnits(), raws); err != nil {
			t.Fatal(err)
		}
	}
	fams, err := rt.Telemetry.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]bool{}
	var total float64
	for _, f := range fams {
		if f.GetName() != "automation_ingest_events_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var kv []string
			for _, l := range m.GetLabel() {
				kv = append(kv, l.GetName()+"="+l.GetValue())
				if strings.Contains(l.GetValue(), "made-up") || strings.Contains(l.GetValue(), "evt-") || strings.Contains(l.GetValue(), "cust-") {
					t.Errorf("a label carries an id or a made-up value: %v", kv)
				}
			}
			sets[strings.Join(kv, ",")] = true
			total += m.GetCounter().GetValue()
		}
	}
	// The gauges read the support metrics' queries (one truth) and carry no unit or id label.
	sm, err := rt.Support.Metrics(ctx, automation.AllBusinessUnits(), "")
	if err != nil {
		t.Fatal(err)
	}
	gauges := map[string]float64{}
	for _, f := range fams {
		if f.GetType().String() != "GAUGE" || !strings.HasPrefix(f.GetName(), "automation_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "automation_status" {
					t.Errorf("gauge %s has label %s=%s", f.GetName(), l.GetName(), l.GetValue())
				}
			}
			if len(m.GetLabel()) == 0 {
				gauges[f.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	if sm.OutboxUnsent == nil || gauges["automation_outbox_unsent"] != float64(*sm.OutboxUnsent) || *sm.OutboxUnsent == 0 ||
		gauges["automation_due_pending"] != float64(sm.PendingDueNow) || len(gauges) < 10 {
		t.Errorf("gauges %v, support metrics outbox %v pending %d", gauges, sm.OutboxUnsent, sm.PendingDueNow)
	}
	// bu-1 or "", SignedUp or "", and the statuses: at most 2 × 2 × 3.
	if len(sets) == 0 || len(sets) > 12 || total != rounds*per {
		t.Fatalf("%d label sets (want 1..12), %v events counted (want %d): %v", len(sets), total, rounds*per, sets)
	}
}

// An event posted with the CloudEvents distributed-tracing extension is read back on ingest:
// the gateway.ingest span links to the producer's trace (the extension's traceparent), in a
// batch each event's own. Not parallel: telemetry installs the process's OTel globals.
func TestIngestLinksTheEventsTraceParent(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL,
		"OTEL_TRACES_SAMPLER_ARG": "1", "OTEL_METRICS_EXPORTER": "none"}
	ctx := context.Background()
	rt, _ := openSignedUp(t, env, automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC)))
	const producerA, producerB = "4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"
	raw := func(id, tid string) events.Raw {
		return events.Raw{JSON: []byte(fmt.Sprintf(`{"specversion":"1.0","id":%q,"type":"SignedUp","source":"/crm","businessunitid":"bu-1",
			"customerid":"cust-1","traceparent":"00-%s-00f067aa0ba902b7-01","tracestate":"vendor=x","data":{}}`, id, tid))}
	}
	res, err := rt.Gateway.Ingest(ctx, automation.AllBusinessUnits(), []events.Raw{raw("evt-a", producerA), raw("evt-b", producerB)})
	if err != nil || res[0].Status != gateway.StatusAccepted || res[1].Status != gateway.StatusAccepted {
		t.Fatalf("ingest %+v %v", res, err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range rcv.Spans() {
		if s.Name == "gateway.ingest" {
			if !slices.Contains(s.Links, producerA) || !slices.Contains(s.Links, producerB) {
				t.Fatalf("gateway.ingest links %v, want both producers' traces", s.Links)
			}
			return
		}
	}
	t.Fatalf("no gateway.ingest span: %+v", rcv.Spans())
}

// openSignedUp opens the runtime of the environment env on clock (Seed 1, the quiet log)
// with business unit bu-1 (UTC) and the DIRECT event type SignedUp registered; the caller
// closes it. It returns the loaded configuration too, for a second process on the same data.
func openSignedUp(t *testing.T, env map[string]string, clock automation.Clock) (*app.Runtime, config.Config) {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := app.Open(ctx, cfg, app.Options{Clock: clock, Seed: 1, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Registry.Save(ctx, gateway.SaveParams{EventType: "SignedUp", Operator: "test",
		Definition: []byte(`{"eventType":"SignedUp","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
	return rt, cfg
}
