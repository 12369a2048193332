package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/trace"
)

// hungTrace is a trace store that hangs (a locked database, an unreachable storage account)
// but, like every well-behaved store, gives up when its context ends. deadlines reports
// whether each write's context carried a deadline.
type hungTrace struct {
	trace.Writer
	started   chan struct{}
	deadlines chan bool
}

func (h *hungTrace) WriteJobs(ctx context.Context, rs []trace.JobRecord) error {
	_, ok := ctx.Deadline()
	h.deadlines <- ok
	h.started <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// TestRunOnceAndFlushReturnWithATraceStoreHung: with the trace store hung, a RunOnce whose
// context ends while its batch waits for the in-flight trace slot returns ctx's error (the
// batch's outcome is committed and counted; only its trace rows are dropped), Flush with a
// deadline returns at its deadline, and the write in flight is released by TraceTimeout so
// that a later Flush succeeds. Before the fix the wait ignored ctx and the write ran under
// context.WithoutCancel with no bound: RunOnce, Flush(context.Background()) and with it the
// runtime's Close hung forever.
func TestRunOnceAndFlushReturnWithATraceStoreHung(t *testing.T) {
	e := newEnv(t, scheduler.Config{BatchSize: 1})
	h := &hungTrace{Writer: e.tr, started: make(chan struct{}, 4), deadlines: make(chan bool, 4)}
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, e.h)
	const traceTimeout = 1500 * time.Millisecond
	p, err := scheduler.NewPoller(scheduler.Config{BatchSize: 1, TraceTimeout: traceTimeout,
		Backoff: scheduler.Backoff{Steps: scheduler.DefaultBackoff, Rand: func() float64 { return 0.5 }}}, e.st, reg, e.clock, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Flush(context.Background()) })
	e.ensure(t, 1, t0)
	e.ensure(t, 2, t0)
	ctx1, cancel1 := context.WithCancel(context.Background())
	if res, err := p.RunOnce(ctx1); err != nil || res.Completed != 1 {
		t.Fatalf("first batch: %+v, %v", res, err)
	}
	<-h.started
	if !<-h.deadlines {
		t.Errorf("the background trace write runs without a deadline")
	}
	cancel1() // the invocation that started the write is over; the write goes on

	began := time.Now()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	type result struct {
		res scheduler.Result
		err error
	}
	done := make(chan result, 1)
	go func() { res, err := p.RunOnce(ctx2); done <- result{res, err} }()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("RunOnce waiting for the hung write: err %v, want context.DeadlineExceeded", r.err)
		}
		if r.res.Claimed != 1 || r.res.Completed != 1 {
			t.Errorf("RunOnce waiting for the hung write: %+v, want the batch claimed and completed", r.res)
		}
		if d := time.Since(began); d >= traceTimeout {
			t.Errorf("RunOnce returned after %s: it waited for the write's timeout, not its own deadline", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RunOnce still blocked 5 s after its context ended (deadline 100 ms)")
	}
	if calls := len(e.h.calls); calls != 2 {
		t.Errorf("handler ran for %d rows, want 2", calls)
	}

	fctx, fcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer fcancel()
	if err := p.Flush(fctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush with the write still hung: %v, want context.DeadlineExceeded", err)
	}
	fctx2, fcancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer fcancel2()
	if err := p.Flush(fctx2); err != nil {
		t.Fatalf("the hung write was not released by TraceTimeout (%s): Flush %v", traceTimeout, err)
	}
	select {
	case <-h.started:
		t.Errorf("the second batch's trace rows were written after its poll gave up")
	default:
	}
}
