package scheduler_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/shared/trace"
)

// drainPoller builds a second poller over st (a wrapped store) with e's handler, clock and
// trace store.
// drainHourly drains p once an hour after t0, hours times, and returns the rows' counts by
// status afterwards.
func (e *env) drainHourly(t *testing.T, p *scheduler.Poller, hours int) map[automation.Status]int {
	t.Helper()
	for i := 1; i <= hours; i++ {
		e.clock.Set(t0.Add(time.Duration(i) * time.Hour))
		if _, err := p.Drain(context.Background(), 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	return counts
}

func (e *env) drainPoller(t *testing.T, cfg scheduler.Config, st store.SchedulerStore, tw trace.Writer) *scheduler.Poller {
	t.Helper()
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, e.h)
	if cfg.Backoff.Rand == nil {
		cfg.Backoff.Rand = func() float64 { return 0.5 }
	}
	p, err := scheduler.NewPoller(cfg, st, reg, e.clock, tw, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Flush(context.Background()) })
	return p
}

// TestConcurrentDrainsAndRunOnceExecuteEachRowOnce: three Drains (two pollers, one of them
// draining twice at once) and a RunOnce loop on one store execute every row exactly once
// and complete it; the summed Results agree with the store. Guarantee: exactly-once per
// claim under concurrent Drain and RunOnce (run with -race).
func TestConcurrentDrainsAndRunOnceExecuteEachRowOnce(t *testing.T) {
	t.Parallel()
	cfg := scheduler.Config{BatchSize: 9, Concurrency: 3}
	e := newEnv(t, cfg)
	e.ensureMany(t, 300, t0)
	p2 := e.drainPoller(t, cfg, e.st, e.tr)
	var completed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, p := range []*scheduler.Poller{e.p, e.p, p2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.Drain(context.Background(), 0, nil)
			completed.Add(int64(r.Completed))
			errs <- err
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			r, err := p2.RunOnce(context.Background())
			completed.Add(int64(r.Completed))
			if err != nil || r.Claimed == 0 {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	e.executedEach(t, 300, 1)
	if completed.Load() != 300 {
		t.Fatalf("completed %d, want 300", completed.Load())
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusCompleted] != 300 {
		t.Fatalf("counts %v", counts)
	}
}

// TestDrainBatchAheadFailsDeactivatesAndHolds: the batch executed ahead returns retryable
// errors, permanent errors and deactivations; each is written with its own outcome and
// counted in its own batch's settled Result, in claim order. Guarantee: non-completion
// outcomes of the batch ahead are written like RunOnce's.
func TestDrainBatchAheadFailsDeactivatesAndHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{BatchSize: 3, Concurrency: 2})
	e.ensureMany(t, 6, t0)
	var mu sync.Mutex
	seen := 0
	kind := map[string]int{}
	e.h.fail = func(row automation.SchedulerRow) error {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := kind[row.SchedulerKey]; !ok {
			kind[row.SchedulerKey] = seen
			seen++
		}
		switch k := kind[row.SchedulerKey]; {
		case k < 3:
			return nil
		case k == 3:
			return errors.New("transient")
		case k == 4:
			return automation.Permanent(errors.New("bad input"))
		}
		return nil
	}
	var batches []scheduler.Result
	res, err := e.p.Drain(context.Background(), 0, func(r scheduler.Result) { batches = append(batches, r) })
	if err != nil {
		t.Fatal(err)
	}
	want := scheduler.Result{Claimed: 6, Completed: 4, Retrying: 1, Held: 1}
	if res != want || len(batches) != 2 {
		t.Fatalf("drain %+v, batches %+v, want %+v", res, batches, want)
	}
	if batches[0] != (scheduler.Result{Claimed: 3, Completed: 3}) || batches[1] != (scheduler.Result{Claimed: 3, Completed: 1, Retrying: 1, Held: 1}) {
		t.Fatalf("batches %+v", batches)
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusCompleted] != 4 {
		t.Fatalf("counts %v", counts)
	}
	// Deactivations in the batch ahead.
	d := newEnv(t, scheduler.Config{BatchSize: 2})
	d.h.deact = automation.ReasonSourceNoLongerValid
	d.ensureMany(t, 5, t0)
	if r, err := d.p.Drain(context.Background(), 0, nil); err != nil || r != (scheduler.Result{Claimed: 5, Deactivated: 5}) {
		t.Fatalf("deactivations %+v %v", r, err)
	}
}

// TestDrainMaxBatchesEdges: maxBatches 1 is one batch; maxBatches equal to the number of
// batches drains everything without a further (empty) claim being needed; a bound above it
// stops at the empty claim. Guarantee: the bound counts claimed batches exactly.
func TestDrainMaxBatchesEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ max, claimed, batches int }{{1, 4, 1}, {3, 10, 3}, {4, 10, 3}, {0, 10, 3}} {
		e := newEnv(t, scheduler.Config{BatchSize: 4})
		e.ensureMany(t, 10, t0)
		n := 0
		res, err := e.p.Drain(context.Background(), tc.max, func(scheduler.Result) { n++ })
		if err != nil || res.Claimed != tc.claimed || res.Completed != tc.claimed || n != tc.batches {
			t.Fatalf("max %d: %+v %v, %d batches", tc.max, res, err, n)
		}
		counts, _ := e.st.SchedulerCountByStatus(context.Background())
		if counts[automation.StatusProcessing] != 0 || counts[automation.StatusCompleted] != tc.claimed {
			t.Fatalf("max %d: counts %v", tc.max, counts)
		}
	}
}

// cancelAfterClaims cancels the drain's context when batch n is claimed.
type cancelAfterClaims struct {
	store.SchedulerStore
	n      int
	claims atomic.Int32
	cancel context.CancelFunc
}

func (s *cancelAfterClaims) SchedulerClaimDue(ctx context.Context, p store.SchedulerClaimDueParams) ([]automation.SchedulerRow, error) {
	rows, err := s.SchedulerStore.SchedulerClaimDue(ctx, p)
	if int(s.claims.Add(1)) == s.n {
		s.cancel()
	}
	return rows, err
}

// TestDrainCancelledMidDrainLosesNothing: ctx ends once batch 2 is claimed (batch 1
// executed, unwritten). Drain returns an error; every row is either written or still
// claimed, and after the lease every row completes with no row executed more than twice
// (once before the cancel, once after the rescue). Guarantee: cancellation is a crash, no
// row is lost.
func TestDrainCancelledMidDrainLosesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.ensureMany(t, 9, t0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &cancelAfterClaims{SchedulerStore: e.st, n: 2, cancel: cancel}
	p := e.drainPoller(t, scheduler.Config{BatchSize: 3, Concurrency: 1}, st, e.tr)
	res, err := p.Drain(ctx, 0, nil)
	if err == nil {
		t.Fatalf("cancelled drain returned %+v, no error", res)
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusPending]+counts[automation.StatusProcessing]+counts[automation.StatusCompleted] != 9 {
		t.Fatalf("counts %v", counts)
	}
	counts = e.drainHourly(t, p, 4)
	if counts[automation.StatusCompleted] != 9 {
		t.Fatalf("after the lease: counts %v", counts)
	}
	e.executedEach(t, -1, 2)
}

// TestDrainWritesEveryTraceRowOnce: after a Drain returns, every batch's trace rows are in
// the trace store, one per row (Drain flushes the write in flight). Guarantee: trace rows
// exactly once, visible when Drain returns.
func TestDrainWritesEveryTraceRowOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{BatchSize: 4, Concurrency: 2})
	e.ensureMany(t, 13, t0)
	if _, err := e.p.Drain(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 13; i++ {
		key := storetest.Candidate(i, t0).SchedulerKey
		recs, err := e.tr.JobsByKey(context.Background(), key)
		if err != nil || len(recs) != 1 || recs[0].Outcome != trace.OutcomeCompleted {
			t.Fatalf("%s: %+v %v", key, recs, err)
		}
	}
}

// TestDrainDoesNotRescueItsOwnBatchInFlight: batch 1's handlers outlive the lease (the
// clock moves 6 minutes per row; Lease 5 min). A RunOnce loop completes such rows (the
// completion is fenced by the Version token, not by the lease's end, and nobody else took
// them). Drain claims batch 2 before it writes batch 1; the rescue that precedes that claim
// must not take batch 1 from under its own completion (which would turn finished work into
// a failed attempt and execute it again).
func TestDrainDoesNotRescueItsOwnBatchInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{BatchSize: 2, Concurrency: 1})
	e.h.fail = func(automation.SchedulerRow) error { e.clock.Advance(6 * time.Minute); return nil }
	e.ensureMany(t, 4, t0)
	res, err := e.p.Drain(context.Background(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 4 || res.Rescued != 0 || res.LeaseLost != 0 {
		t.Fatalf("drain %+v: its own in-flight batch was rescued", res)
	}
	e.executedEach(t, -1, 1)
	// The same store and handler with a RunOnce loop: every row completes once.
	l := newEnv(t, scheduler.Config{BatchSize: 2, Concurrency: 1})
	l.h.fail = func(automation.SchedulerRow) error { l.clock.Advance(6 * time.Minute); return nil }
	l.ensureMany(t, 4, t0)
	var sum scheduler.Result
	for r := l.run(t); r.Claimed > 0; r = l.run(t) {
		sum.Add(r)
	}
	if sum.Completed != 4 || sum.Rescued != 0 || sum.LeaseLost != 0 {
		t.Fatalf("RunOnce loop %+v", sum)
	}
}

// failFirstComplete is a scheduler store whose first batch completion fails as a whole
// (a lost connection, a full disk).
type failFirstComplete struct {
	store.SchedulerStore
	mu    sync.Mutex
	calls int
}

var errDisk = errors.New("disk I/O error")

func (s *failFirstComplete) SchedulerCompleteBatch(ctx context.Context, items []store.SchedulerCompleteParams) ([]error, error) {
	s.mu.Lock()
	s.calls++
	first := s.calls == 1
	s.mu.Unlock()
	if first {
		return nil, errDisk
	}
	return s.SchedulerStore.SchedulerCompleteBatch(ctx, items)
}

// TestDrainCompletionFailureWritesTheBatchAhead: batch 1's completion fails while batch 2
// executes. Drain returns the error; batch 1 stays claimed (its lease rescue returns it, as
// after a crash) and is executed again; batch 2 already ran, so its outcomes are written as
// after a failed claim (committed work): it is not executed a second time.
func TestDrainCompletionFailureWritesTheBatchAhead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.ensureMany(t, 6, t0)
	st := &failFirstComplete{SchedulerStore: e.st}
	p := e.drainPoller(t, scheduler.Config{BatchSize: 3, Concurrency: 1}, st, e.tr)
	var batches []scheduler.Result
	res, err := p.Drain(context.Background(), 0, func(r scheduler.Result) { batches = append(batches, r) })
	if !errors.Is(err, errDisk) {
		t.Fatalf("err %v", err)
	}
	if res.Claimed != 6 || res.Completed != 3 || len(batches) != 2 || batches[0].Completed != 0 || batches[1].Completed != 3 {
		t.Fatalf("drain %+v, batches %+v: the batch ahead was not written", res, batches)
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusProcessing] != 3 || counts[automation.StatusCompleted] != 3 {
		t.Fatalf("counts %v", counts)
	}
	// Batch 1's lease expires; it comes back through the rescue and completes.
	counts = e.drainHourly(t, p, 3)
	if counts[automation.StatusCompleted] != 6 {
		t.Fatalf("counts %v", counts)
	}
	twice := 0
	for _, n := range e.calls() {
		if n > 1 {
			twice++
		}
	}
	if twice != 3 {
		t.Fatalf("%d rows executed twice, want only batch 1's 3", twice)
	}
}

// slowTrace delays every batch write, so a write still in flight when Drain returns shows.
type slowTrace struct {
	trace.Writer
	mu   sync.Mutex
	rows int
}

func (s *slowTrace) WriteJobs(ctx context.Context, rs []trace.JobRecord) error {
	time.Sleep(150 * time.Millisecond)
	s.mu.Lock()
	s.rows += len(rs)
	s.mu.Unlock()
	return nil
}

func (s *slowTrace) written() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows
}

// TestDrainErrorFlushesTheTrace: when Drain stops on an error after a batch's outcomes were
// committed, that batch's trace rows are written before Drain returns, as on the empty
// claim that ends a drain and on a failure of the first claim.
func TestDrainErrorFlushesTheTrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.ensureMany(t, 6, t0)
	boom := errors.New("crash after claim")
	var claims atomic.Int32
	tw := &slowTrace{Writer: e.tr}
	p := e.drainPoller(t, scheduler.Config{BatchSize: 3, Hooks: &scheduler.Hooks{AfterClaim: func(context.Context, []automation.SchedulerRow) error {
		if claims.Add(1) == 2 {
			return boom
		}
		return nil
	}}}, e.st, tw)
	res, err := p.Drain(context.Background(), 0, nil)
	if !errors.Is(err, boom) || res.Completed != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	if n := tw.written(); n != 3 {
		t.Fatalf("%d trace rows written when Drain returned, want batch 1's 3", n)
	}
}

// TestDrainHandlerPanicWaitsForTheBatchBefore: a handler of batch 2 panics (Concurrency 1:
// on Drain's goroutine) while batch 1's outcomes are being written. The Functions host
// recovers a handler's panic and ends the invocation's context, so Drain must not unwind
// before batch 1's write has finished: batch 1 is then committed when the panic reaches
// the caller (as RunOnce had committed the batch before), and no goroutine of Drain's
// outlives it. Batch 2 stays claimed for the rescue.
func TestDrainHandlerPanicWaitsForTheBatchBefore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.ensureMany(t, 6, t0)
	var n atomic.Int32
	e.h.fail = func(automation.SchedulerRow) error {
		if n.Add(1) == 4 {
			panic("handler bug")
		}
		return nil
	}
	st := &slowComplete{SchedulerStore: e.st, release: make(chan struct{})}
	p := e.drainPoller(t, scheduler.Config{BatchSize: 3, Concurrency: 1}, st, e.tr)
	time.AfterFunc(300*time.Millisecond, func() { close(st.release) })
	ctx, cancel := context.WithCancel(context.Background())
	func() {
		defer func() {
			if v := recover(); v != "handler bug" {
				t.Errorf("recovered %v", v)
			}
			cancel() // the host ends the invocation
		}()
		_, _ = p.Drain(ctx, 0, nil)
		t.Error("Drain returned; the handler's panic was lost")
	}()
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusCompleted] != 3 || counts[automation.StatusProcessing] != 3 {
		t.Fatalf("counts when the panic reached the caller %v, want batch 1 completed and batch 2 claimed", counts)
	}
}
