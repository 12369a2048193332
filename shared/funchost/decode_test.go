package funchost_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/funchost"
)

// sbReq builds a Service Bus invocation: body is the Data value as raw JSON, meta the
// Metadata entries as raw JSON.
func sbReq(body string, meta map[string]string) *funchost.InvocationRequest {
	req := &funchost.InvocationRequest{
		Data:     map[string]json.RawMessage{"message": json.RawMessage(body)},
		Metadata: map[string]json.RawMessage{},
	}
	for k, v := range meta {
		req.Metadata[k] = json.RawMessage(v)
	}
	return req
}

// twice encodes a body the way the host sends a string trigger value.
func twice(body string) string {
	inner, _ := json.Marshal(body)
	outer, _ := json.Marshal(string(inner))
	return string(outer)
}

func TestDecodeServiceBusShadowing(t *testing.T) {
	t.Parallel()
	realMeta := map[string]string{
		"MessageId":             `"\"real-id\""`,
		"DeliveryCount":         `"2"`,
		"EnqueuedTimeUtc":       `"2026-01-02T03:04:05"`,
		"EnqueuedTime":          `"2026-01-02T03:04:05+00:00"`,
		"ApplicationProperties": `{"p":"real"}`,
		"UserProperties":        `{"p":"real"}`,
		"CorrelationId":         `"\"corr\""`,
	}
	with := func(over map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range realMeta {
			m[k] = v
		}
		for k, v := range over {
			if v == "" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	enq := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name     string
		data     string
		meta     map[string]string
		binary   bool
		id       string
		count    int
		enq      time.Time
		props    map[string]any
		shadowed []string
	}{
		{"no body fields", twice(`{"a":1}`), realMeta, false, "real-id", 2, enq, map[string]any{"p": "real"}, nil},
		{"lower-case messageId overwrote the value", twice(`{"messageId":"x"}`), with(map[string]string{"MessageId": `"\"x\""`}),
			false, "", 2, enq, map[string]any{"p": "real"}, []string{"MessageId"}},
		{"numeric MessageId field", twice(`{"MessageId":7}`), with(map[string]string{"MessageId": `"\"7\""`}),
			false, "", 2, enq, map[string]any{"p": "real"}, []string{"MessageId"}},
		{"numeric field even when it differs", twice(`{"MessageId":7}`), realMeta,
			false, "", 2, enq, map[string]any{"p": "real"}, []string{"MessageId"}},
		{"date-like field the host reformats", twice(`{"MessageId":"2026-01-01T00:00:00Z"}`), with(map[string]string{"MessageId": `"\"01/01/2026 00:00:00\""`}),
			false, "", 2, enq, map[string]any{"p": "real"}, []string{"MessageId"}},
		{"string field that differs proves the metadata", twice(`{"MessageId":"other"}`), realMeta,
			false, "real-id", 2, enq, map[string]any{"p": "real"}, nil},
		{"null and array fields do not shadow", twice(`{"MessageId":null,"DeliveryCount":[1]}`), realMeta,
			false, "real-id", 2, enq, map[string]any{"p": "real"}, nil},
		{"EnqueuedTimeUtc falls back to EnqueuedTime", twice(`{"enqueuedTimeUtc":"x"}`), with(map[string]string{"EnqueuedTimeUtc": `"\"x\""`}),
			false, "real-id", 2, enq, map[string]any{"p": "real"}, nil},
		{"both enqueued times shadowed", twice(`{"EnqueuedTimeUtc":"x","EnqueuedTime":"y"}`), with(map[string]string{"EnqueuedTimeUtc": `"\"x\""`, "EnqueuedTime": `"\"y\""`}),
			false, "real-id", 2, time.Time{}, map[string]any{"p": "real"}, []string{"EnqueuedTimeUtc"}},
		{"both property maps shadowed", twice(`{"ApplicationProperties":{"p":"fake"},"userProperties":{"p":"fake"}}`),
			with(map[string]string{"ApplicationProperties": `{"p":"fake"}`, "UserProperties": `{"p":"fake"}`}),
			false, "real-id", 2, enq, nil, []string{"ApplicationProperties"}},
		{"unparsable object-looking body naming a key", twice(`{'MessageId': 'x'}`), realMeta,
			false, "", 2, enq, map[string]any{"p": "real"}, []string{"MessageId"}},
		{"truncated JSON body is not parsed by the host", twice(`{"MessageId":"x"`), realMeta,
			false, "real-id", 2, enq, map[string]any{"p": "real"}, nil},
		{"binary bodies are never shadowed", `"` + base64.StdEncoding.EncodeToString([]byte(`{"MessageId":"x"}`)) + `"`, realMeta,
			true, "real-id", 2, enq, map[string]any{"p": "real"}, nil},
		{"shadowed key whose overwritten value is an object", twice(`{"MessageId":{"a":1}}`), with(map[string]string{"MessageId": `{"a":1}`}),
			false, "", 2, enq, map[string]any{"p": "real"}, []string{"MessageId"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts *funchost.ServiceBusOptions
			if tc.binary {
				opts = &funchost.ServiceBusOptions{DataType: funchost.DataTypeBinary}
			}
			m, err := funchost.DecodeServiceBus(sbReq(tc.data, tc.meta), "message", opts)
			if err != nil {
				t.Fatal(err)
			}
			if m.MessageID != tc.id || m.DeliveryCount != tc.count || !m.EnqueuedTimeUtc.Equal(tc.enq) ||
				!reflect.DeepEqual(m.ApplicationProperties, tc.props) || !reflect.DeepEqual(m.Shadowed, tc.shadowed) || m.CorrelationID != "corr" {
				t.Fatalf("got %+v", m)
			}
		})
	}
}

func TestDecodeServiceBusEncodings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data string
		meta map[string]string
		body string
		id   string
		n    int
	}{
		{"object passed as is", `{"a":[1,2]}`, nil, `{"a":[1,2]}`, "", 0},
		{"array passed as is", `[1,2]`, nil, `[1,2]`, "", 0},
		{"single-encoded string", `"plain text"`, nil, "plain text", "", 0},
		{"doubly encoded string with quotes inside", twice(`"quoted"`), nil, `"quoted"`, "", 0},
		{"empty body", twice(""), nil, "", "", 0},
		{"case-insensitive metadata keys", twice("x"), map[string]string{"messageId": `"\"m\""`, "deliverycount": `5`}, "x", "m", 5},
		{"DeliveryCount doubly encoded", twice("x"), map[string]string{"DeliveryCount": `"\"6\""`}, "x", "", 6},
		{"null metadata values", twice("x"), map[string]string{"MessageId": `null`, "DeliveryCount": `null`, "EnqueuedTimeUtc": `null`, "ApplicationProperties": `null`}, "x", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := funchost.DecodeServiceBus(sbReq(tc.data, tc.meta), "message", nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Body) != tc.body || m.MessageID != tc.id || m.DeliveryCount != tc.n {
				t.Fatalf("got %+v (body %q)", m, m.Body)
			}
		})
	}
}

func TestDecodeServiceBusErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		req   *funchost.InvocationRequest
		opts  *funchost.ServiceBusOptions
		field string
		want  string
	}{
		{"missing binding", &funchost.InvocationRequest{Data: map[string]json.RawMessage{"other": json.RawMessage(`"x"`)}}, nil, "Data.message", "not present"},
		{"nil request", nil, nil, "Data.message", "not present"},
		{"null body", sbReq(`null`, nil), nil, "Data.message", "null"},
		{"boolean body", sbReq(`true`, nil), nil, "Data.message", "got a boolean"},
		{"invalid object", sbReq(`{"a":`, nil), nil, "Data.message", "invalid JSON"},
		{"bad base64", sbReq(`"@@@"`, nil), &funchost.ServiceBusOptions{DataType: funchost.DataTypeBinary}, "Data.message", "base64"},
		{"MessageId object", sbReq(twice("x"), map[string]string{"MessageId": `{"a":1}`}), nil, "Metadata.MessageId", "expected a scalar"},
		{"DeliveryCount text", sbReq(twice("x"), map[string]string{"DeliveryCount": `"two"`}), nil, "Metadata.DeliveryCount", "invalid integer"},
		{"DeliveryCount negative", sbReq(twice("x"), map[string]string{"DeliveryCount": `"-1"`}), nil, "Metadata.DeliveryCount", "out of range"},
		{"DeliveryCount float", sbReq(twice("x"), map[string]string{"DeliveryCount": `1.5`}), nil, "Metadata.DeliveryCount", "invalid integer"},
		{"EnqueuedTimeUtc text", sbReq(twice("x"), map[string]string{"EnqueuedTimeUtc": `"yesterday"`}), nil, "Metadata.EnqueuedTimeUtc", "invalid timestamp"},
		{"EnqueuedTimeUtc number", sbReq(twice("x"), map[string]string{"EnqueuedTimeUtc": `12`}), nil, "Metadata.EnqueuedTimeUtc", "expected a timestamp"},
		{"ApplicationProperties array", sbReq(twice("x"), map[string]string{"ApplicationProperties": `[1]`}), nil, "Metadata.ApplicationProperties", "expected an object"},
		{"UserProperties string", sbReq(twice("x"), map[string]string{"UserProperties": `"\"x\""`}), nil, "Metadata.UserProperties", "expected an object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := funchost.DecodeServiceBus(tc.req, "message", tc.opts)
			var de *funchost.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want *DecodeError, got %v", err)
			}
			if de.Binding != "message" || de.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %+v: %v", de, err)
			}
			if tc.field == "Data.message" && tc.want == "not present" && !errors.Is(err, funchost.ErrBindingNotFound) {
				t.Fatal("want ErrBindingNotFound")
			}
		})
	}
	if _, err := funchost.DecodeServiceBus(sbReq(twice("x"), nil), "message", &funchost.ServiceBusOptions{DataType: "stream"}); err == nil {
		t.Fatal("unsupported dataType must fail")
	}
}

func TestDecodeTimer(t *testing.T) {
	t.Parallel()
	req := func(v string) *funchost.InvocationRequest {
		return &funchost.InvocationRequest{Data: map[string]json.RawMessage{"timer": json.RawMessage(v)}}
	}
	// A JSON string holding the object is accepted, field names case-insensitively.
	wrapped, _ := json.Marshal(`{"schedule":{"adjustForDST":false},"scheduleStatus":{"next":"2026-01-01T00:00:30Z"},"isPastDue":"true"}`)
	info, err := funchost.DecodeTimer(req(string(wrapped)), "timer")
	if err != nil {
		t.Fatal(err)
	}
	if !info.IsPastDue || info.ScheduleStatus == nil || !info.ScheduleStatus.Next.Equal(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)) ||
		!info.ScheduleStatus.Last.IsZero() {
		t.Fatalf("%+v %+v", info, info.ScheduleStatus)
	}
	errCases := []struct{ data, field string }{
		{`5`, "Data.timer"},
		{`null`, "Data.timer"},
		{`"not an object"`, "Data.timer"},
		{`{"IsPastDue":"maybe"}`, "Data.timer.IsPastDue"},
		{`{"IsPastDue":{}}`, "Data.timer.IsPastDue"},
		{`{"Schedule":3}`, "Data.timer.Schedule"},
		{`{"Schedule":{"AdjustForDST":"x"}}`, "Data.timer.Schedule.AdjustForDST"},
		{`{"ScheduleStatus":"x"}`, "Data.timer.ScheduleStatus"},
		{`{"ScheduleStatus":{"Next":"soon"}}`, "Data.timer.ScheduleStatus.Next"},
		{`{"ScheduleStatus":{"LastUpdated":1}}`, "Data.timer.ScheduleStatus.LastUpdated"},
		{`{"IsPastDue":`, "Data.timer"},
	}
	for _, tc := range errCases {
		_, err := funchost.DecodeTimer(req(tc.data), "timer")
		var de *funchost.DecodeError
		if !errors.As(err, &de) || de.Field != tc.field || de.Binding != "timer" {
			t.Errorf("%s: got %v, want field %s", tc.data, err, tc.field)
		}
	}
	if _, err := funchost.DecodeTimer(&funchost.InvocationRequest{}, "timer"); !errors.Is(err, funchost.ErrBindingNotFound) {
		t.Fatalf("missing binding: %v", err)
	}
}

// fixtureSeeds returns every fixture's body as a fuzz seed.
func fixtureSeeds(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecoders checks the decoders never panic on any invocation body.
func FuzzDecoders(f *testing.F) {
	fixtureSeeds(f)
	f.Add([]byte(`{"Data":{"message":"\"{\\\"MessageId\\\":1}\"","timer":{"ScheduleStatus":{}}},"Metadata":{"MessageId":{},"DeliveryCount":"\"x\""}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := funchost.DecodeInvocationRequest(body)
		if err != nil {
			return
		}
		for _, b := range []string{"message", "timer"} {
			_, _ = funchost.DecodeTimer(req, b)
			_, _ = funchost.DecodeServiceBus(req, b, nil)
			_, _ = funchost.DecodeServiceBus(req, b, &funchost.ServiceBusOptions{DataType: funchost.DataTypeBinary})
		}
	})
}
