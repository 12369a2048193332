package logctx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

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
