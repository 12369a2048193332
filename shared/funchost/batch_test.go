package funchost_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/funchost"
)

func loadReq(t *testing.T, name string) *funchost.InvocationRequest {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/funchost/" + name)
	if err != nil {
		t.Fatal(err)
	}
	req, err := funchost.DecodeInvocationRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// A batch in the shape the host sends for "cardinality": "many" (bodies as a JSON string
// holding an array of body strings, each Metadata key with the suffix "Array" a JSON string
// holding one value per message) decodes into one message per body, in order, each with
// its own MessageId, DeliveryCount, EnqueuedTimeUtc, CorrelationId, ContentType and
// ApplicationProperties.
func TestDecodeServiceBusBatchDocumentedShape(t *testing.T) {
	t.Parallel()
	items, err := funchost.DecodeServiceBusBatch(loadReq(t, "servicebus_batch.json"), "message", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 {
		t.Fatalf("%d items, want 3", len(items))
	}
	want := []struct {
		id, body, corr, ct string
		count              int
		at                 time.Time
		origin             any
	}{
		{"dlv_a", `{"deliveryKey":"dlv_a"}`, "", "application/json", 1, time.Date(2026, 10, 1, 9, 0, 1, 100e6, time.UTC), nil},
		{"dlv_b", `{"deliveryKey":"dlv_b"}`, "corr-b", "application/json", 3, time.Date(2026, 10, 1, 8, 59, 30, 250e6, time.UTC), "relay"},
		{"dlv_c", `{"deliveryKey":"dlv_c"}`, "", "", 1, time.Date(2026, 10, 1, 9, 0, 2, 0, time.UTC), nil},
	}
	for i, w := range want {
		it := items[i]
		if it.Err != nil {
			t.Fatalf("item %d: %v", i, it.Err)
		}
		m := it.Message
		if m.MessageID != w.id || string(m.Body) != w.body || m.CorrelationID != w.corr || m.ContentType != w.ct ||
			m.DeliveryCount != w.count || !m.EnqueuedTimeUtc.Equal(w.at) || m.ApplicationProperties["origin"] != w.origin {
			t.Errorf("item %d: %+v", i, m)
		}
	}
}

// The same batch with its arrays given as JSON arrays (not strings holding them), and with
// UserPropertiesArray only, decodes the same.
func TestDecodeServiceBusBatchRawArrays(t *testing.T) {
	t.Parallel()
	req := sbReq(`["{\"deliveryKey\":\"k1\"}", {"deliveryKey":"k2"}]`, map[string]string{
		"MessageIdArray":      `["m1","m2"]`,
		"DeliveryCountArray":  `["1","2"]`,
		"UserPropertiesArray": `[{"a":1},{}]`,
	})
	items, err := funchost.DecodeServiceBusBatch(req, "message", nil)
	if err != nil || len(items) != 2 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	if m := items[0].Message; m == nil || m.MessageID != "m1" || string(m.Body) != `{"deliveryKey":"k1"}` || m.DeliveryCount != 1 ||
		m.ApplicationProperties["a"] != json.Number("1") {
		t.Errorf("item 0: %+v %v", items[0].Message, items[0].Err)
	}
	if m := items[1].Message; m == nil || m.MessageID != "m2" || string(m.Body) != `{"deliveryKey":"k2"}` || m.DeliveryCount != 2 {
		t.Errorf("item 1: %+v %v", items[1].Message, items[1].Err)
	}
}

// A message whose own body or per-message value is malformed gets its own error naming the
// element; its batch-mates decode.
func TestDecodeServiceBusBatchBadItems(t *testing.T) {
	t.Parallel()
	items, err := funchost.DecodeServiceBusBatch(loadReq(t, "servicebus_batch_bad_items.json"), "message", nil)
	if err != nil || len(items) != 3 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	if items[0].Err != nil || items[0].Message.MessageID != "dlv_a" || items[0].Message.DeliveryCount != 1 {
		t.Errorf("item 0: %+v %v", items[0].Message, items[0].Err)
	}
	var de *funchost.DecodeError
	if !errors.As(items[1].Err, &de) || de.Field != "Data.message[1]" || items[1].Message.MessageID != "dlv_null" {
		t.Errorf("item 1 (null body): %v", items[1].Err)
	}
	if !errors.As(items[2].Err, &de) || de.Field != "Metadata.DeliveryCountArray[2]" || items[2].Message.MessageID != "dlv_c" {
		t.Errorf("item 2 (bad delivery count): %v", items[2].Err)
	}
}

// Errors of the invocation as a whole: no binding, a value that is not an array, a Metadata
// array of another length than the bodies, a Metadata array that does not parse.
func TestDecodeServiceBusBatchRejects(t *testing.T) {
	t.Parallel()
	two := `"[\"{}\",\"{}\"]"`
	cases := map[string]struct {
		req   *funchost.InvocationRequest
		field string
	}{
		"no binding":      {&funchost.InvocationRequest{Data: map[string]json.RawMessage{}, Metadata: map[string]json.RawMessage{}}, "Data.message"},
		"not an array":    {sbReq(`"{}"`, map[string]string{"MessageIdArray": `"[\"a\"]"`}), "Data.message"},
		"short ids":       {sbReq(two, map[string]string{"MessageIdArray": `"[\"a\"]"`}), "Metadata.MessageIdArray"},
		"long counts":     {sbReq(two, map[string]string{"MessageIdArray": `["a","b"]`, "DeliveryCountArray": `"[1,1,1]"`}), "Metadata.DeliveryCountArray"},
		"counts not JSON": {sbReq(two, map[string]string{"MessageIdArray": `["a","b"]`, "DeliveryCountArray": `"[1,"`}), "Metadata.DeliveryCountArray"},
		"ids an object":   {sbReq(two, map[string]string{"MessageIdArray": `{"a":1}`}), "Metadata.MessageIdArray"},
	}
	for name, tc := range cases {
		_, err := funchost.DecodeServiceBusBatch(tc.req, "message", nil)
		var de *funchost.DecodeError
		if !errors.As(err, &de) || de.Field != tc.field {
			t.Errorf("%s: %v, want a DecodeError on %s", name, err, tc.field)
		}
	}
}

// An invocation in the single-message shape is a batch of one, decoded as DecodeServiceBus
// decodes it (shadowing rules included).
func TestDecodeServiceBusBatchOfOne(t *testing.T) {
	t.Parallel()
	req := sbReq(twice(`{"deliveryKey":"k"}`), map[string]string{"MessageId": `"\"id-1\""`, "DeliveryCount": `"4"`})
	items, err := funchost.DecodeServiceBusBatch(req, "message", nil)
	if err != nil || len(items) != 1 || items[0].Err != nil {
		t.Fatalf("%+v %v", items, err)
	}
	if m := items[0].Message; m.MessageID != "id-1" || m.DeliveryCount != 4 || string(m.Body) != `{"deliveryKey":"k"}` {
		t.Fatalf("%+v", m)
	}
	if _, err := funchost.DecodeServiceBusBatch(sbReq(`null`, nil), "message", nil); err == nil || !strings.Contains(err.Error(), "null") {
		t.Fatalf("a null single body: %v", err)
	}
}

// The payload the host sends a custom handler for a "cardinality": "many", "dataType":
// "string" trigger on a topic subscription (DeliveryFactProjection), built as the host
// builds it: the trigger value is a string[] (GeneralScriptBindingProvider), which is no
// object, so ScriptInvocationContextExtensions serializes it with JsonConvert into one JSON
// string holding an array whose elements are the bodies encoded once; each binding-data
// array (the extension's …Array keys) is serialized the same way; EnqueuedTimeUtcArray holds
// DateTimes without a zone (EnqueuedTime.DateTime), EnqueuedTimeArray DateTimeOffsets. The
// bodies come back byte for byte, whatever they are: a JSON object, plain text, and a body
// that is itself a JSON string literal (which a second unwrapping would have corrupted).
func TestDecodeServiceBusBatchHostShapedTextBodies(t *testing.T) {
	t.Parallel()
	items, err := funchost.DecodeServiceBusBatch(loadReq(t, "servicebus_batch_topic_text_bodies.json"), "message", &funchost.ServiceBusOptions{DataType: funchost.DataTypeString})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id, body, ct, corr string
		count              int
		at                 time.Time
		revision           any
	}{
		{"evt_1", `{"commandId":"cmd_1","revision":2,"status":"Sent"}`, "application/json", "cmd_1", 1, time.Date(2026, 10, 1, 9, 10, 0, 500e6, time.UTC), json.Number("2")},
		{"evt_2", `not json at all`, "", "", 1, time.Date(2026, 10, 1, 9, 10, 1, 0, time.UTC), nil},
		{"evt_3", `"quoted"`, "text/plain", "", 2, time.Date(2026, 10, 1, 9, 9, 58, 123456700, time.UTC), nil},
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, w := range want {
		if items[i].Err != nil {
			t.Fatalf("item %d: %v", i, items[i].Err)
		}
		m := items[i].Message
		if m.MessageID != w.id || string(m.Body) != w.body || m.ContentType != w.ct || m.CorrelationID != w.corr ||
			m.DeliveryCount != w.count || !m.EnqueuedTimeUtc.Equal(w.at) || m.ApplicationProperties["revision"] != w.revision || m.SessionID != "" {
			t.Errorf("item %d: %+v, body %q", i, m, m.Body)
		}
	}
}
