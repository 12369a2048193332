package events_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	ceext "github.com/cloudevents/sdk-go/v2/extensions"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
)

// The AMQP binding's binary mode: cloudEvents:-prefixed application properties, the body is
// data. The result parses exactly like the structured event.
func TestServiceBusAMQPBinaryMode(t *testing.T) {
	props := map[string]any{"cloudEvents:specversion": "1.0", "cloudEvents:id": "e1", "cloudEvents:source": "/hr",
		"cloudEvents:type": "PoliceVetting.Upserted", "cloudEvents:businessunitid": "bu-1", "cloudEvents:entitytype": "PoliceVetting",
		"cloudEvents:entityguid": "g-1", "cloudEvents:revision": json.Number("3"), "other": "ignored"}
	raw := events.DecodeServiceBusMessage(props, "application/json", []byte(`{"expiresOn":"2027-03-14"}`))
	if raw.Err != nil {
		t.Fatal(raw.Err)
	}
	ev, err := events.Parse(raw.JSON)
	if err != nil || ev.ID != "e1" || ev.Revision != 3 || ev.EntityGuid != "g-1" || ev.DataJSON != `{"expiresOn":"2027-03-14"}` {
		t.Fatalf("%+v %v", ev, err)
	}
	// Without the prefix, the body is a structured event.
	if raw := events.DecodeServiceBusMessage(map[string]any{"x": 1}, "", []byte(`{"a":1}`)); string(raw.JSON) != `{"a":1}` {
		t.Fatalf("%s", raw.JSON)
	}
	bad := events.DecodeServiceBusMessage(map[string]any{"cloudEvents:id": "e", "cloudEvents_id": "f"}, "", nil)
	if automation.CodeOf(bad.Err) != automation.CodeInvalidInput || !strings.Contains(bad.Err.Error(), "twice") {
		t.Fatalf("%v", bad.Err)
	}
}

// The HTTP binding: binary (ce-* headers), batch bounds, structured.
func TestDecodeHTTPModes(t *testing.T) {
	ctx := context.Background()
	h := http.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"b1"}, "Ce-Source": {"/app"}, "Ce-Type": {"Login"}, "Ce-Customerid": {"C-1"},
		"Content-Type": {"application/json"}}
	mode, raws, err := events.DecodeHTTP(ctx, h, []byte(`{"channel":"app"}`))
	if err != nil || mode != events.ModeBinary || len(raws) != 1 || raws[0].Err != nil {
		t.Fatalf("%s %+v %v", mode, raws, err)
	}
	env, err := events.ParseEnvelope(raws[0].JSON)
	if err != nil || env.ID != "b1" || env.Extensions["customerid"] != "C-1" || string(env.Data) != `{"channel":"app"}` {
		t.Fatalf("%+v %v", env, err)
	}
	batch := http.Header{"Content-Type": {events.ContentTypeBatch}}
	if _, _, err := events.DecodeHTTP(ctx, batch, []byte(`{"not":"an array"}`)); automation.CodeOf(err) != automation.CodeMalformed {
		t.Fatalf("not an array: %v", err)
	}
	big := "[" + strings.TrimSuffix(strings.Repeat(`{},`, 501), ",") + "]"
	if _, _, err := events.DecodeHTTP(ctx, batch, []byte(big)); automation.CodeOf(err) != events.CodeContentTooLarge {
		t.Fatalf("501 events: %v", err)
	}
	ok := "[" + strings.TrimSuffix(strings.Repeat(`{},`, 500), ",") + "]"
	if _, raws, err := events.DecodeHTTP(ctx, batch, []byte(ok)); err != nil || len(raws) != 500 {
		t.Fatalf("500 events: %d %v", len(raws), err)
	}
	if mode, raws, _ := events.DecodeHTTP(ctx, http.Header{}, []byte(`{"id":"s"}`)); mode != events.ModeStructured || string(raws[0].JSON) != `{"id":"s"}` {
		t.Fatalf("structured: %s", mode)
	}
}

// The CloudEvents distributed-tracing extension survives every binding: in binary mode
// (ce-traceparent headers, cloudEvents:traceparent properties) it lands in the structured
// event the gateway reads its trace link from, as the SDK's extension reads it.
func TestTraceParentExtensionSurvivesTheBindings(t *testing.T) {
	const tp, ts = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=x"
	h := http.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"b1"}, "Ce-Source": {"/app"}, "Ce-Type": {"Login"},
		"Ce-Traceparent": {tp}, "Ce-Tracestate": {ts}, "Content-Type": {"application/json"}}
	_, raws, err := events.DecodeHTTP(context.Background(), h, []byte(`{}`))
	if err != nil || len(raws) != 1 || raws[0].Err != nil {
		t.Fatalf("%+v %v", raws, err)
	}
	amqp := events.DecodeServiceBusMessage(map[string]any{"cloudEvents:specversion": "1.0", "cloudEvents:id": "e1", "cloudEvents:source": "/hr",
		"cloudEvents:type": "Login", "cloudEvents:traceparent": tp, "cloudEvents:tracestate": ts}, "application/json", []byte(`{}`))
	for _, raw := range []events.Raw{raws[0], amqp} {
		if raw.Err != nil {
			t.Fatal(raw.Err)
		}
		var ce cloudevents.Event
		if err := json.Unmarshal(raw.JSON, &ce); err != nil {
			t.Fatal(err)
		}
		ext, ok := ceext.GetDistributedTracingExtension(ce)
		if !ok || ext.TraceParent != tp || ext.TraceState != ts {
			t.Fatalf("extension %+v %v in %s", ext, ok, raw.JSON)
		}
	}
}
