package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/shared/trace"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// hungTrace is a trace store whose writes hang until their context ends.
type hungTrace struct {
	trace.Writer
	started chan struct{}
}

func (h *hungTrace) WriteJobs(ctx context.Context, _ []trace.JobRecord) error {
	h.started <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

type noopHandler struct{}

func (noopHandler) Execute(context.Context, automation.SchedulerRow, time.Time) (scheduler.Outcome, error) {
	return scheduler.Outcome{}, nil
}

// TestCloseReturnsWithTheTraceStoreHung: the runtime's Close waits for the poller's trace
// write in flight for a bounded time only, then logs what it gave up and goes on. Before
// the fix the closer flushed with context.Background() and a hung trace store made Close
// (Ctrl-C on serve) hang forever.
func TestCloseReturnsWithTheTraceStoreHung(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr := sqlitetest.OpenTrace(t, dir)
	now := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	clk := automation.NewManualClock(now)
	h := &hungTrace{Writer: tr, started: make(chan struct{}, 1)}
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, noopHandler{})
	// The write's own bound is far beyond the test: only the closer's bound can release Close.
	p, err := scheduler.NewPoller(scheduler.Config{BatchSize: 1, TraceTimeout: time.Minute}, st, reg, clk, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{storetest.Candidate(1, now)}}); err != nil {
		t.Fatal(err)
	}
	if res, err := p.RunOnce(context.Background()); err != nil || res.Completed != 1 {
		t.Fatalf("RunOnce: %+v, %v", res, err)
	}
	<-h.started
	var logs logsink.Buffer
	r := &Runtime{}
	r.closers = append(r.closers, flushCloser(p, 200*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil))))
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close still blocked 5 s on the hung trace write (its bound is 200 ms)")
	}
	if !strings.Contains(logs.String(), "gave up waiting for the last trace write") {
		t.Errorf("Close did not log what it gave up: %q", logs.String())
	}
}
