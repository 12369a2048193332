package logctx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/logctx"
)

func TestContextAttributesReachEveryLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := logctx.Logger(slog.New(slog.NewJSONHandler(&buf, nil)))
	if logctx.Logger(log) != log {
		t.Fatal("wrapping twice")
	}
	ctx := logctx.With(context.Background(), logctx.Function, "DueWorkPoller", logctx.InvocationID, "inv-1", logctx.SourceEventID, "")
	ctx = logctx.With(ctx, logctx.SchedulerKey, "k1", logctx.Step, "execute")
	ctx = logctx.With(ctx, logctx.Step, "finish") // replaces
	log.With("component", "poller").InfoContext(ctx, "row executed", logctx.Step, "own", "outcome", "Completed")
	log.Info("no context")
	dec := json.NewDecoder(&buf)
	var first, second map[string]any
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"function": "DueWorkPoller", "invocationId": "inv-1", "schedulerKey": "k1", "step": "own", "outcome": "Completed", "component": "poller"}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("%s = %v, want %v (line %v)", k, first[k], v, first)
		}
	}
	if _, ok := first["sourceEventId"]; ok {
		t.Error("an empty value must be left out")
	}
	if _, ok := second["function"]; ok {
		t.Errorf("a line without context got context attributes: %v", second)
	}
	if n := len(logctx.Attrs(ctx)); n != 4 {
		t.Fatalf("attrs %v", logctx.Attrs(ctx))
	}
}

// A line logged inside a traced operation carries its trace_id and span_id (W3C hex), beside
// the context's own ids; a line outside one carries neither.
func TestHandlerAddsTraceAndSpanIDs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(logctx.New(slog.NewJSONHandler(&buf, nil)))
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	log.InfoContext(logctx.With(ctx, "commandId", "cmd-1"), "traced")
	log.InfoContext(context.Background(), "untraced")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if !strings.Contains(lines[0], `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`) || !strings.Contains(lines[0], `"span_id":"00f067aa0ba902b7"`) ||
		!strings.Contains(lines[0], `"commandId":"cmd-1"`) {
		t.Fatalf("traced line %s", lines[0])
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Fatalf("untraced line %s", lines[1])
	}
}
