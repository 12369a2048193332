package app_test

import (
	"context"
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
// its consumer's invocation joins that trace too. Not parallel: telemetry installs the
// process's OTel globals.
func TestTraceSurvivesACrashBetweenCommitAndPublish(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL,
		"OTEL_TRACES_SAMPLER_ARG": "1", "OTEL_METRICS_EXPORTER": "none", "AUTOMATION_EAGER_PUBLISH": "false"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	clock := automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC))
	ctx := context.Background()
	first, err := app.Open(ctx, cfg, app.Options{Clock: clock, Seed: 1, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Registry.Save(ctx, gateway.SaveParams{EventType: "SignedUp", Operator: "test",
		Definition: []byte(`{"eventType":"SignedUp","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
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
	var published, consumed bool
	for _, s := range rcv.Trace(writer.TraceID().String()) {
		switch s.Name {
		case "publish events":
			published = true
		case "CampaignDispatch":
			consumed = true
		}
	}
	if !published || !consumed {
		t.Fatalf("after the restart: publish in the writer's trace %v, consumer in it %v; spans %+v", published, consumed, rcv.Spans())
	}
}
