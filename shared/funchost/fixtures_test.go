package funchost_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
)

const fixtureDir = "../../testdata/funchost"

var quiet = slog.New(slog.DiscardHandler)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decoded is what the test handler saw.
type decoded struct {
	called bool
	inv    *funchost.Invocation
	timer  *funchost.TimerInfo
	msg    *funchost.ServiceBusMessage
}

type trigger int

const (
	timerTrigger trigger = iota
	sbString
	sbBinary
)

// testHandler is a thin handler like the real ones: decode the trigger, (optionally)
// decode the JSON body, then return fail.
func testHandler(kind trigger, requireJSON bool, fail error, got *decoded) funchost.Handler {
	return func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		got.called, got.inv = true, inv
		var err error
		switch kind {
		case timerTrigger:
			got.timer, err = inv.Timer("timer")
		case sbString:
			got.msg, err = inv.ServiceBus("message")
		case sbBinary:
			got.msg, err = inv.ServiceBusBinary("message")
		}
		if err != nil {
			return funchost.Result{}, err
		}
		if requireJSON {
			var v map[string]any
			if err := json.Unmarshal(got.msg.Body, &v); err != nil {
				// A real handler records the poison message first, then acknowledges it.
				return funchost.Result{Logs: []string{"recorded poison message " + got.msg.MessageID}},
					automation.Permanent(fmt.Errorf("poison message %s: %w", got.msg.MessageID, err))
			}
		}
		if fail != nil {
			return funchost.Result{Logs: []string{"attempted"}}, fail
		}
		return funchost.Result{Logs: []string{"handled"}}, nil
	}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestFixtures posts each recorded host payload through the Router over real HTTP and
// checks the decoded values and the reply.
func TestFixtures(t *testing.T) {
	t.Parallel()
	errTransient := errors.New("sql: connection refused")
	cases := []struct {
		name        string
		file        string
		function    string // POST /{function}
		kind        trigger
		requireJSON bool
		fail        error // returned by the handler after decoding
		status      int
		wantLog     string // a Logs entry contains it (200)
		wantError   string // the {"error"} body contains it (non-200)
		check       func(t *testing.T, got *decoded)
	}{
		{
			name: "timer ScheduleStatus null", file: "timer_schedule_status_null.json", function: "DueWorkPoller",
			status: 200, wantLog: "handled",
			check: func(t *testing.T, got *decoded) {
				want := &funchost.TimerInfo{Schedule: funchost.TimerSchedule{AdjustForDST: true}}
				if !reflect.DeepEqual(got.timer, want) {
					t.Fatalf("timer = %+v, want %+v", got.timer, want)
				}
			},
		},
		{
			name: "timer ScheduleStatus set", file: "timer_schedule_status_set.json", function: "OutboxRelay",
			status: 200,
			check: func(t *testing.T, got *decoded) {
				want := &funchost.TimerInfo{
					Schedule: funchost.TimerSchedule{AdjustForDST: true},
					ScheduleStatus: &funchost.ScheduleStatus{
						Last:        utc("2023-10-12T20:13:49.640002Z"),
						Next:        utc("2023-10-12T20:18:00Z"),
						LastUpdated: utc("2023-10-12T20:13:49.640002Z"),
					},
				}
				if !reflect.DeepEqual(got.timer, want) {
					t.Fatalf("timer = %+v %+v, want %+v %+v", got.timer, got.timer.ScheduleStatus, want, want.ScheduleStatus)
				}
			},
		},
		{
			name: "timer IsPastDue with offsets and a zone-less time", file: "timer_past_due.json", function: "OutboxRelay",
			status: 200,
			check: func(t *testing.T, got *decoded) {
				if !got.timer.IsPastDue || got.timer.ScheduleStatus == nil {
					t.Fatalf("timer = %+v", got.timer)
				}
				st := got.timer.ScheduleStatus
				if !st.Last.Equal(utc("2026-03-01T02:00:00Z")) || !st.Next.Equal(utc("2026-03-02T02:00:00Z")) ||
					!st.LastUpdated.Equal(utc("2026-03-01T02:00:03.1234567Z")) || st.LastUpdated.Location() != time.UTC {
					t.Fatalf("status = %+v", st)
				}
			},
		},
		{
			name: "timer retryable error", file: "timer_schedule_status_set.json", function: "OutboxRelay",
			fail: errTransient, status: 500, wantError: "connection refused",
		},
		{
			name: "topic message, double-encoded JSON body", file: "servicebus_topic_json_body.json", function: "DomainEventHandler",
			kind: sbString, requireJSON: true, status: 200, wantLog: "handled",
			check: func(t *testing.T, got *decoded) {
				want := &funchost.ServiceBusMessage{
					Body:                  []byte(`{"eventId":"0b6c3f0e-8a47-4f57-9a51-3b8f7e0d2c11","type":"ContactCreated","businessUnitId":"bu-7","occurredOn":"2026-03-02T08:15:00Z","data":{"contactGuid":"c-123","tags":["vip"]}}`),
					MessageID:             "0b6c3f0e-8a47-4f57-9a51-3b8f7e0d2c11",
					SessionID:             "bu-7",
					CorrelationID:         "corr-9",
					ContentType:           "application/json",
					DeliveryCount:         1,
					EnqueuedTimeUtc:       utc("2026-03-02T08:15:01.123Z"),
					ApplicationProperties: map[string]any{"eventType": "ContactCreated", "schemaVersion": json.Number("2")},
				}
				assertMessage(t, got.msg, want)
				if got.inv.InvocationID != "inv-42" || got.inv.FunctionName != "DomainEventHandler" {
					t.Fatalf("invocation = %+v", got.inv)
				}
			},
		},
		{
			name: "topic message, retryable error", file: "servicebus_topic_json_body.json", function: "DomainEventHandler",
			kind: sbString, fail: errTransient, status: 500, wantError: "sql: connection refused",
		},
		{
			name: "topic message, permanent error", file: "servicebus_topic_json_body.json", function: "DomainEventHandler",
			kind: sbString, fail: automation.Permanent(errors.New("event type not routed")), status: 200,
			wantLog: "permanent failure, not retried: event type not routed",
		},
		{
			name: "body field MessageId overwrote the metadata", file: "servicebus_body_shadows_messageid.json", function: "DueWorkExecutor",
			kind: sbString, requireJSON: true, status: 200,
			check: func(t *testing.T, got *decoded) {
				want := &funchost.ServiceBusMessage{
					Body:                  []byte(`{"MessageId":"sched-1001","schedulerId":1001,"deliveryCount":99,"applicationProperties":{"forged":true},"claimToken":"tok-1"}`),
					ContentType:           "application/json",
					EnqueuedTimeUtc:       utc("2026-03-02T08:16:00Z"),
					ApplicationProperties: map[string]any{"scheduler": "due-work"}, // from UserProperties
					Shadowed:              []string{"MessageId", "DeliveryCount"},
				}
				assertMessage(t, got.msg, want)
			},
		},
		{
			name: "body field MessageId differs from the metadata", file: "servicebus_body_messageid_differs.json", function: "DueWorkExecutor",
			kind: sbString, requireJSON: true, status: 200,
			check: func(t *testing.T, got *decoded) {
				if got.msg.MessageID != "broker-id-7" || got.msg.Shadowed != nil || got.msg.DeliveryCount != 1 {
					t.Fatalf("msg = %+v", got.msg)
				}
			},
		},
		{
			name: "binary body in base64", file: "servicebus_binary_body.json", function: "BinaryProbe",
			kind: sbBinary, status: 200,
			check: func(t *testing.T, got *decoded) {
				want := &funchost.ServiceBusMessage{
					Body:                  []byte("\x89PNG\r\n\x1a\n\x00\xffnotification-attachment"),
					MessageID:             "bin-1",
					ContentType:           "application/octet-stream",
					DeliveryCount:         2,
					EnqueuedTimeUtc:       utc("2026-03-02T08:18:00Z"),
					ApplicationProperties: map[string]any{"kind": "attachment"},
				}
				assertMessage(t, got.msg, want)
			},
		},
		{
			name: "binary body not base64", file: "servicebus_binary_bad_base64.json", function: "BinaryProbe",
			kind: sbBinary, status: 500, wantError: `binding "message": Data.message: dataType binary: invalid base64`,
		},
		{
			name: "DeliveryCount as a string", file: "servicebus_delivery_count_string.json", function: "NotificationDispatch",
			kind: sbString, requireJSON: true, status: 200,
			check: func(t *testing.T, got *decoded) {
				if got.msg.DeliveryCount != 3 || got.msg.MessageID != "n-55" || string(got.msg.Body) != `{"notificationId":"n-55","channel":"email"}` {
					t.Fatalf("msg = %+v", got.msg)
				}
			},
		},
		{
			name: "DeliveryCount as a number, single-encoded scalars, text body", file: "servicebus_delivery_count_number.json", function: "NotificationDispatch",
			kind: sbString, status: 200,
			check: func(t *testing.T, got *decoded) {
				m := got.msg
				if m.DeliveryCount != 4 || m.MessageID != "msg-4" || string(m.Body) != "hello from the outbox" ||
					m.ContentType != "text/plain" || !m.EnqueuedTimeUtc.Equal(utc("2026-03-02T08:20:00Z")) {
					t.Fatalf("msg = %+v", m)
				}
			},
		},
		{
			name: "malformed JSON body is recorded and acknowledged", file: "servicebus_malformed_body.json", function: "NotificationDispatch",
			kind: sbString, requireJSON: true, status: 200, wantLog: "permanent failure, not retried: poison message n-56",
			check: func(t *testing.T, got *decoded) {
				if string(got.msg.Body) != `{"notificationId":"n-56","channel":` || got.msg.Shadowed != nil {
					t.Fatalf("msg = %+v", got.msg)
				}
			},
		},
		{
			name: "malformed Data value is retried", file: "servicebus_malformed_data.json", function: "NotificationDispatch",
			kind: sbString, status: 500, wantError: `binding "message": Data.message: expected a JSON string, object or array, got a number`,
		},
		{
			name: "malformed DeliveryCount is retried", file: "servicebus_malformed_metadata.json", function: "NotificationDispatch",
			kind: sbString, status: 500, wantError: `binding "message": Metadata.DeliveryCount: invalid integer "many"`,
		},
		{
			name: "malformed invocation JSON", file: "invocation_malformed.json", function: "NotificationDispatch",
			kind: sbString, status: 400, wantError: "invalid invocation JSON",
			check: func(t *testing.T, got *decoded) {
				if got.called {
					t.Fatal("handler called for a malformed invocation")
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := &decoded{}
			r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
			r.Register(tc.function, testHandler(tc.kind, tc.requireJSON, tc.fail, got))
			srv := httptest.NewServer(r)
			defer srv.Close()

			req, err := http.NewRequest(http.MethodPost, srv.URL+"/"+tc.function, bytes.NewReader(readFixture(t, tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(funchost.InvocationIDHeader, "inv-42")
			status, body := do(t, req)
			if status != tc.status {
				t.Fatalf("status %d, want %d; body %s", status, tc.status, body)
			}
			if status == http.StatusOK {
				resp := decodeResponse(t, body)
				if len(resp.Outputs) != 0 || resp.ReturnValue != nil {
					t.Fatalf("response = %s", body)
				}
				if tc.wantLog != "" && !containsEntry(resp.Logs, tc.wantLog) {
					t.Fatalf("logs %q lack %q", resp.Logs, tc.wantLog)
				}
			} else {
				if msg := errorMessage(t, body); !strings.Contains(msg, tc.wantError) {
					t.Fatalf("error %q lacks %q", msg, tc.wantError)
				}
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

// do sends req and checks what every reply must have: Content-Type application/json and
// a non-empty JSON body.
func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json (status %d, body %s)", ct, resp.StatusCode, body)
	}
	if len(body) == 0 || !json.Valid(body) {
		t.Fatalf("body %q is not a non-empty JSON document", body)
	}
	return resp.StatusCode, body
}

// decodeResponse checks the InvocationResponse shape: Outputs an object, Logs an array,
// ReturnValue present.
func decodeResponse(t *testing.T, body []byte) funchost.InvocationResponse {
	t.Helper()
	var shape map[string]json.RawMessage
	if err := json.Unmarshal(body, &shape); err != nil {
		t.Fatal(err)
	}
	if o := shape["Outputs"]; len(o) == 0 || o[0] != '{' {
		t.Fatalf("Outputs must be an object: %s", body)
	}
	if l := shape["Logs"]; len(l) == 0 || l[0] != '[' {
		t.Fatalf("Logs must be an array: %s", body)
	}
	if _, ok := shape["ReturnValue"]; !ok || len(shape) != 3 {
		t.Fatalf("want exactly Outputs, Logs, ReturnValue: %s", body)
	}
	var resp funchost.InvocationResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

func errorMessage(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error  string `json:"error"`  // invocation paths
		Detail string `json:"detail"` // problem details on forwarded paths
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error+e.Detail == "" {
		t.Fatalf("want {\"error\": ...} or problem details, got %s (%v)", body, err)
	}
	return e.Error + e.Detail
}

func containsEntry(logs []string, sub string) bool {
	for _, l := range logs {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func assertMessage(t *testing.T, got, want *funchost.ServiceBusMessage) {
	t.Helper()
	if got == nil {
		t.Fatal("no message decoded")
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Errorf("Body = %q, want %q", got.Body, want.Body)
	}
	g, w := *got, *want
	g.Body, w.Body = nil, nil
	if !g.EnqueuedTimeUtc.Equal(w.EnqueuedTimeUtc) || g.EnqueuedTimeUtc.Location() != time.UTC {
		t.Errorf("EnqueuedTimeUtc = %v, want %v (UTC)", g.EnqueuedTimeUtc, w.EnqueuedTimeUtc)
	}
	g.EnqueuedTimeUtc, w.EnqueuedTimeUtc = time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("message =\n%+v\nwant\n%+v", g, w)
	}
}

// TestFixtureForwardedHTTP replays the recorded forwarded request: the handler sees the
// original /api path, method, headers and body.
func TestFixtureForwardedHTTP(t *testing.T) {
	t.Parallel()
	rec, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(readFixture(t, "http_forwarded_events.http"))))
	if err != nil {
		t.Fatal(err)
	}
	recBody, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
	var seen struct {
		path, query, invocation string
		body                    map[string]any
	}
	r.RegisterHTTP("POST /api/events", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seen.path, seen.query, seen.invocation = req.URL.Path, req.URL.RawQuery, req.Header.Get(funchost.InvocationIDHeader)
		if err := json.NewDecoder(req.Body).Decode(&seen.body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted) // no Content-Type set: the router adds JSON
		_, _ = w.Write([]byte(`{"accepted":true}`))
	}))
	srv := httptest.NewServer(r)
	defer srv.Close()

	send := func(method, uri string, body []byte) (int, []byte, http.Header) {
		req, err := http.NewRequest(method, srv.URL+uri, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range rec.Header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" && ct != "application/problem+json" || len(b) == 0 {
			t.Fatalf("%s %s: Content-Type %q body %q", method, uri, resp.Header.Get("Content-Type"), b)
		}
		return resp.StatusCode, b, resp.Header
	}

	status, body, _ := send(rec.Method, rec.URL.RequestURI(), recBody)
	if status != http.StatusAccepted || string(body) != `{"accepted":true}` {
		t.Fatalf("status %d body %s", status, body)
	}
	if seen.path != "/api/events" || seen.query != "code=redacted" || seen.invocation != "3f7d2b9a-6c41-4e8d-a5b2-9c0e1f7a4d63" || seen.body["type"] != "ContactCreated" {
		t.Fatalf("handler saw %+v", seen)
	}

	status, body, hdr := send(http.MethodGet, "/api/events", nil)
	if status != http.StatusMethodNotAllowed || !strings.Contains(hdr.Get("Allow"), "POST") {
		t.Fatalf("GET: status %d Allow %q body %s", status, hdr.Get("Allow"), body)
	}
	errorMessage(t, body)
	for _, uri := range []string{"/api/unknown", "/api", "/api/"} {
		status, body, _ = send(http.MethodPost, uri, recBody)
		if status != http.StatusNotFound || !strings.Contains(errorMessage(t, body), "no HTTP function") {
			t.Fatalf("%s: status %d body %s", uri, status, body)
		}
	}
}
