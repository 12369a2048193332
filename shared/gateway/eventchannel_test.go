package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
)

const dormantDef = `{"eventType":"Dormant_User","class":"DIRECT","schema":{"type":"object","required":["targetDate","offsetDays"],
  "properties":{"offsetDays":{"type":"integer","maximum":-1}}}}`

func eventChannelEnv(t *testing.T) (*env, *gateway.EventChannel) {
	t.Helper()
	e := newEnv(t)
	// The reminder is sent when it is due: the clock stands at its SentOn (ingest refuses
	// an event more than a day ahead of the clock).
	e.clock.Set(time.Date(2026, 10, 18, 3, 0, 0, 0, time.UTC))
	if _, err := e.admin.Save(context.Background(), gateway.SaveParams{EventType: "Dormant_User", Definition: []byte(dormantDef), Operator: "jane"}); err != nil {
		t.Fatal(err)
	}
	return e, &gateway.EventChannel{Ingest: e.svc.Ingest}
}

func dormantMessage(payload string) delivery.Message {
	return delivery.Message{DeliveryKey: "reminder:k:event:CUST-1", SchedulerKey: "reminder:k", BusinessUnitID: "bu-1", Channel: gateway.EventChannelName,
		Recipient: "CUST-1", Template: "Dormant_User", PayloadJSON: payload, SentOn: time.Date(2026, 10, 18, 3, 0, 0, 0, time.UTC)}
}

// A due reminder through the event channel is one registered Direct event, routed once to
// events with the customer as its session; resending the same delivery key (a timeout, a
// crash before the outcome was recorded) routes nothing more.
func TestEventChannelRoutesOnce(t *testing.T) {
	t.Parallel()
	e, ch := eventChannelEnv(t)
	if tr := ch.Traits(); !tr.Idempotent || tr.NeedsContent {
		t.Fatalf("traits %+v", tr)
	}
	m := dormantMessage(`{"targetDate":"2026-07-20","offsetDays":-90,"sourceGuid":"CUST-1"}`)
	for i := 0; i < 3; i++ {
		ref, err := ch.Send(context.Background(), m)
		if err != nil || ref != gateway.EventChannelID(m.DeliveryKey) || !strings.HasPrefix(ref, "rem-") || len(ref) != 44 {
			t.Fatalf("send %d: %q %v", i, ref, err)
		}
	}
	out := e.outbox(t)
	if len(out) != 1 || out[0].SessionID != "CUST-1" || !strings.HasSuffix(out[0].MessageID, ":events") {
		t.Fatalf("outbox %+v", out)
	}
	var p gateway.Payload
	if err := json.Unmarshal(out[0].Body, &p); err != nil || p.SourceEvent != "Dormant_User" || p.Source != gateway.EventChannelSource ||
		p.Timestamp != "2026-10-18T03:00:00Z" || p.BusinessUnitID != "bu-1" {
		t.Fatalf("payload %+v %v", p, err)
	}
}

// A delivery the registry refuses is a permanent failure naming the member; a bad customer
// id never reaches the gateway; a store failure is retried (not permanent).
func TestEventChannelFailures(t *testing.T) {
	t.Parallel()
	e, ch := eventChannelEnv(t)
	_, err := ch.Send(context.Background(), dormantMessage(`{"targetDate":"2026-07-20","offsetDays":30}`))
	if !automation.IsPermanent(err) || !strings.Contains(err.Error(), "/data/offsetDays") {
		t.Fatalf("schema: %v", err)
	}
	m := dormantMessage(`{"targetDate":"2026-07-20","offsetDays":-90}`)
	m.Template = "Not_Registered"
	if _, err := ch.Send(context.Background(), m); !automation.IsPermanent(err) || !strings.Contains(err.Error(), "/type") {
		t.Fatalf("unregistered: %v", err)
	}
	m = dormantMessage(`{"targetDate":"2026-07-20","offsetDays":-90}`)
	m.Recipient = "a b"
	if _, err := ch.Send(context.Background(), m); !automation.IsPermanent(err) || ch.ValidateRecipient("a b") == nil || ch.ValidateRecipient("CUST-1") != nil {
		t.Fatalf("recipient: %v", err)
	}
	if n := len(e.outbox(t)); n != 0 {
		t.Fatalf("%d outbox rows after refusals", n)
	}
	failing := &gateway.EventChannel{Ingest: func(context.Context, automation.Scope, []events.Raw) ([]gateway.Result, error) {
		return nil, errors.New("database is locked")
	}}
	if _, err := failing.Send(context.Background(), dormantMessage(`{}`)); err == nil || automation.IsPermanent(err) {
		t.Fatalf("store failure: %v", err)
	}
}

// The event a reminder emits carries the CloudEvents distributed-tracing extension
// (traceparent, tracestate) of the delivery that sends it, and the gateway accepts it; with
// no trace in the context it carries none.
func TestEventChannelCarriesTheTraceContext(t *testing.T) {
	t.Parallel()
	e, ch := eventChannelEnv(t)
	var sent []events.Raw
	ch.Ingest = func(ctx context.Context, sc automation.Scope, raws []events.Raw) ([]gateway.Result, error) {
		sent = append(sent, raws...)
		return e.svc.Ingest(ctx, sc, raws)
	}
	tid, _ := oteltrace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := oteltrace.SpanIDFromHex("00f067aa0ba902b7")
	ts, _ := oteltrace.ParseTraceState("vendor=x")
	ctx := oteltrace.ContextWithSpanContext(context.Background(), oteltrace.NewSpanContext(oteltrace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: oteltrace.FlagsSampled, TraceState: ts}))
	if _, err := ch.Send(ctx, dormantMessage(`{"targetDate":"2026-07-20","offsetDays":-90}`)); err != nil {
		t.Fatal(err)
	}
	m := dormantMessage(`{"targetDate":"2026-07-20","offsetDays":-90}`)
	m.DeliveryKey = "reminder:k2:event:CUST-1"
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	var ext [2]struct {
		TraceParent *string `json:"traceparent"`
		TraceState  *string `json:"tracestate"`
	}
	for i := range ext {
		if err := json.Unmarshal(sent[i].JSON, &ext[i]); err != nil {
			t.Fatal(err)
		}
	}
	if ext[0].TraceParent == nil || *ext[0].TraceParent != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" ||
		ext[0].TraceState == nil || *ext[0].TraceState != "vendor=x" {
		t.Fatalf("traced send: %s", sent[0].JSON)
	}
	if ext[1].TraceParent != nil || ext[1].TraceState != nil {
		t.Fatalf("untraced send carries a trace context: %s", sent[1].JSON)
	}
	if n := len(e.outbox(t)); n != 2 {
		t.Fatalf("%d outbox rows, want both events accepted", n)
	}
}
