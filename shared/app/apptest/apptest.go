package apptest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
)

// Open opens the runtime over a new temporary data directory with the settings env (nil:
// none besides the data directory) and o. What o leaves nil it fills: Clock with a manual
// clock at start (UTC), Log and LogOutput with discarding ones. Any error fails t at once;
// the runtime is closed when t ends.
func Open(t testing.TB, env map[string]string, start time.Time, o app.Options) *app.Runtime {
	t.Helper()
	vars := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir()}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if o.Clock == nil {
		o.Clock = automation.NewManualClock(start)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.LogOutput == nil {
		o.LogOutput = io.Discard
	}
	rt, err := app.Open(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}
