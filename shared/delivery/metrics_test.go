package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

// Each recorded delivery outcome is counted by channel and status, the channel only when it
// is a configured one (a row naming another counts under ""), so the label set stays
// bounded. Not parallel: telemetry installs the process's OTel globals.
func TestDeliveryOutcomesCountedByConfiguredChannel(t *testing.T) {
	p := telemetrytest.Prometheus(t)
	e := newEnv(t, map[string]delivery.Channel{"log": delivery.FuncChannel(func(_ context.Context, m delivery.Message) (string, error) {
		return "ref-" + m.DeliveryKey, nil
	})})
	e.queue(t, nil, "log", "a@example.test", "made-up-channel", "b@example.test")
	e.pump(t)
	got := telemetrytest.Series(t, p.Registry, "automation_delivery_outcomes_total")
	want := map[string]float64{"automation_channel=log,automation_status=Sent": 1, "automation_channel=,automation_status=Failed": 1}
	if len(got) != len(want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("counted %v, want %v", got, want)
		}
	}
}

// A Sent delivery logs at DEBUG, not INFO: one line per delivery at production rates is a
// log flood (issue 39, "logs at rate"); the outcome is counted in the metric above instead.
// A failed delivery still logs at WARN with its errorCode.
func TestSentDeliveriesLogAtDebugFailuresAtWarn(t *testing.T) {
	var buf bytes.Buffer
	e := newEnv(t, map[string]delivery.Channel{"log": delivery.FuncChannel(func(_ context.Context, m delivery.Message) (string, error) {
		return "ref-" + m.DeliveryKey, nil
	})})
	e.disp.Log = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e.queue(t, nil, "log", "a@example.test", "made-up-channel", "b@example.test")
	e.pump(t)
	var levels []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct {
			Level, Msg, ErrorCode string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		levels = append(levels, rec.Level+" "+rec.Msg+" "+rec.ErrorCode)
	}
	if len(levels) != 1 || levels[0] != "WARN delivery failed DeliveryFailed" {
		t.Fatalf("INFO-level log got %q, want only the failure at WARN", levels)
	}
}
