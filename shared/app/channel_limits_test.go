package app_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
)

// AUTOMATION_CHANNEL_LIMITS puts the named channels behind their limits in the runtime
// (the one channel value the dispatcher and the campaign actions both call), leaves the
// others as they are, and refuses to start when it names a channel that is not configured.
func TestChannelLimitsFromConfig(t *testing.T) {
	t.Parallel()
	open := func(limits string) (*app.Runtime, error) {
		env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "AUTOMATION_CHANNEL_LIMITS": limits}
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return app.Open(context.Background(), cfg, app.Options{Clock: automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC)),
			LogOutput: io.Discard, Seed: 7, Log: quietLog})
	}
	rt, err := open(`{"log":{"concurrency":2,"ratePerSecond":5,"timeoutSeconds":3}}`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	l, ok := rt.Dispatcher.Channels["log"].(delivery.Limited)
	if !ok {
		t.Fatalf("the dispatcher's log channel is %T, not behind its limits", rt.Dispatcher.Channels["log"])
	}
	if got := l.Limits(); got.Concurrency != 2 || got.RatePerSecond != 5 || got.Timeout != 3*time.Second {
		t.Fatalf("limits %+v", got)
	}
	if _, ok := rt.Dispatcher.Channels["inbox"].(delivery.Limited); ok {
		t.Fatal("the inbox channel, not named, was limited")
	}
	_, err = open(`{"sms":{"concurrency":2}}`)
	if err == nil || !strings.Contains(err.Error(), `"sms"`) || !strings.Contains(err.Error(), "not configured") {
		t.Fatalf("a limit on a channel that is not configured: %v", err)
	}
}
