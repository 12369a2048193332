package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/shared/trace"
	"github.com/automation-platform/automation/shared/trace/localtrace"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = storetest.T0

// OrDefault fills only a ladder left unset: a set one, and the jitter either way, stay.
func TestBackoffOrDefault(t *testing.T) {
	t.Parallel()
	if b := (scheduler.Backoff{JitterFraction: 0.2}).OrDefault(); !slices.Equal(b.Steps, scheduler.DefaultBackoff) || b.JitterFraction != 0.2 {
		t.Fatalf("unset ladder: %+v, want DefaultBackoff and the jitter kept", b)
	}
	own := []time.Duration{time.Second}
	if b := (scheduler.Backoff{Steps: own}).OrDefault(); !slices.Equal(b.Steps, own) || b.JitterFraction != 0 {
		t.Fatalf("set ladder: %+v, want it kept", b)
	}
}

func TestBackoffLadder(t *testing.T) {
	t.Parallel()
	for _, r := range []float64{0, 0.5, 0.999999} {
		b := scheduler.Backoff{Steps: scheduler.DefaultBackoff, JitterFraction: 0.10, Rand: func() float64 { return r }}
		for i, base := range []time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour} {
			next, hold := b.Next(t0, i, false)
			d := next.Sub(t0)
			if hold || d < base || d > base+base/10 {
				t.Fatalf("rand %v failure %d: delay %s hold %v, want %s..+10%%", r, i+1, d, hold, base)
			}
		}
		if _, hold := b.Next(t0, 3, false); !hold {
			t.Fatal("the 4th failure must hold")
		}
		next, hold := b.Next(t0, 3, true)
		if d := next.Sub(t0); hold || d < 24*time.Hour || d > 24*time.Hour+144*time.Minute {
			t.Fatalf("long-running retry: %s hold %v", d, hold)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	var c scheduler.Config
	if err := c.Validate(); err != nil || c.BatchSize != 100 || c.Lease != 5*time.Minute || len(c.Backoff.Steps) != 3 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, bad := range []scheduler.Config{{BatchSize: store.MaxBatch + 1}, {Lease: time.Millisecond}, {Concurrency: 100}, {Backoff: scheduler.Backoff{Steps: scheduler.DefaultBackoff, JitterFraction: 2}}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

// fakeHandler completes every row with one log delivery, or fails as told.
type fakeHandler struct {
	mu    sync.Mutex
	calls map[string]int
	fail  func(row automation.SchedulerRow) error
	deact automation.ReasonCode
	long  bool
}

func (h *fakeHandler) LongRunning() bool { return h.long }

func (h *fakeHandler) Execute(_ context.Context, row automation.SchedulerRow, _ time.Time) (scheduler.Outcome, error) {
	h.mu.Lock()
	if h.calls == nil {
		h.calls = map[string]int{}
	}
	h.calls[row.SchedulerKey]++
	h.mu.Unlock()
	if h.fail != nil {
		if err := h.fail(row); err != nil {
			return scheduler.Outcome{}, err
		}
	}
	if h.deact != "" {
		return scheduler.Outcome{Deactivate: h.deact}, nil
	}
	jobs, msgs, err := delivery.Build([]delivery.Request{{SchedulerKey: row.SchedulerKey, BusinessUnitID: row.BusinessUnitID, Channel: "log", Recipient: "a@example.test", Template: "t", Payload: map[string]int{"n": 1}}})
	return scheduler.Outcome{Deliveries: jobs, Outbox: msgs, DispatchResultJSON: `{"ok":true}`}, err
}

type env struct {
	st    store.Store
	tr    *localtrace.Store
	clock *automation.ManualClock
	h     *fakeHandler
	p     *scheduler.Poller
}

func newEnv(t *testing.T, cfg scheduler.Config) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := sqlitetest.OpenTrace(t, dir)
	e := &env{st: st, tr: tr, clock: automation.NewManualClock(t0), h: &fakeHandler{}}
	t.Cleanup(func() {
		if e.p != nil {
			_ = e.p.Flush(context.Background())
		}
		st.Close()
	})
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, e.h)
	if cfg.Backoff.Rand == nil {
		cfg.Backoff.Rand = func() float64 { return 0.5 }
	}
	e.p, err = scheduler.NewPoller(cfg, st, reg, e.clock, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) ensure(t *testing.T, n int, due time.Time) automation.Candidate {
	t.Helper()
	c := storetest.Candidate(n, due)
	if _, err := e.st.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: t0, Candidates: []automation.Candidate{c}}); err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) run(t *testing.T) scheduler.Result {
	t.Helper()
	r, err := e.p.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// calls is a copy of the handler's executions per SchedulerKey.
func (e *env) calls() map[string]int {
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	out := make(map[string]int, len(e.h.calls))
	for k, n := range e.h.calls {
		out[k] = n
	}
	return out
}

// executedEach fails unless the handler ran exactly rows distinct rows (any number when
// rows < 0), none of them more than most times.
func (e *env) executedEach(t *testing.T, rows, most int) {
	t.Helper()
	calls := e.calls()
	if rows >= 0 && len(calls) != rows {
		t.Fatalf("executed %d rows, want %d", len(calls), rows)
	}
	for k, n := range calls {
		if n > most {
			t.Fatalf("%s executed %d times, at most %d", k, n, most)
		}
	}
}

func (e *env) row(t *testing.T, key string) automation.SchedulerRow {
	t.Helper()
	r, err := e.st.SchedulerGetByKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPollerCompletesWithDeliveryAndTrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	c := e.ensure(t, 1, t0.Add(time.Minute))
	if r := e.run(t); r.Claimed != 0 {
		t.Fatalf("claimed before due: %+v", r)
	}
	e.clock.Set(t0.Add(time.Minute))
	if r := e.run(t); r.Claimed != 1 || r.Completed != 1 {
		t.Fatalf("result %+v", r)
	}
	row := e.row(t, c.SchedulerKey)
	if row.Status != automation.StatusCompleted || row.DispatchResultJSON != `{"ok":true}` {
		t.Fatalf("row %+v", row)
	}
	job, err := e.st.NotificationGetByKey(context.Background(), delivery.Key(c.SchedulerKey, "log", "a@example.test"))
	if err != nil || job.Status != store.NotificationQueued {
		t.Fatalf("job %+v %v", job, err)
	}
	if err := e.p.Flush(context.Background()); err != nil { // the trace write runs in the background
		t.Fatal(err)
	}
	recs, err := e.tr.JobsByKey(context.Background(), c.SchedulerKey)
	if err != nil || len(recs) != 1 || recs[0].Outcome != trace.OutcomeCompleted || recs[0].Attempt != 1 || recs[0].TraceBlobName != "" {
		t.Fatalf("trace %+v %v", recs, err)
	}
	if r := e.run(t); r.Claimed != 0 {
		t.Fatal("a completed row was claimed again")
	}
}

func TestPollerRetriesWithBackoffThenHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.h.fail = func(automation.SchedulerRow) error { return errors.New("downstream unavailable") }
	c := e.ensure(t, 1, t0)
	now := t0
	wantDelays := []time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour}
	for i, d := range wantDelays {
		e.clock.Set(now)
		if r := e.run(t); r.Retrying != 1 {
			t.Fatalf("attempt %d: %+v", i+1, r)
		}
		row := e.row(t, c.SchedulerKey)
		next := now.Add(d + d/20) // Rand 0.5 → +5 %
		if row.Status != automation.StatusPending || row.RetryCount != i+1 || row.NextRetryOn == nil || !row.NextRetryOn.Equal(next) || row.FailureReasonCode != automation.ReasonHandlerError {
			t.Fatalf("attempt %d: %+v next %v want %v", i+1, row, row.NextRetryOn, next)
		}
		e.clock.Set(next.Add(-time.Second))
		if r := e.run(t); r.Claimed != 0 {
			t.Fatalf("attempt %d: retried before NextRetryOn", i+1)
		}
		now = next
	}
	e.clock.Set(now)
	if r := e.run(t); r.Held != 1 {
		t.Fatalf("4th failure: %+v", e.row(t, c.SchedulerKey))
	}
	row := e.row(t, c.SchedulerKey)
	if row.Status != automation.StatusFailed || !row.IsOnSupportHold || row.RetryCount != 4 || row.TraceBlobName == "" {
		t.Fatalf("held row %+v", row)
	}
	blob, err := e.tr.GetBlob(context.Background(), row.TraceBlobName)
	if err != nil || len(blob) == 0 {
		t.Fatalf("diagnostics blob: %v", err)
	}
	if err := e.p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, _ := e.tr.JobsByKey(context.Background(), c.SchedulerKey)
	if len(recs) != 4 || recs[3].Outcome != trace.OutcomeHeld || recs[0].Outcome != trace.OutcomeRetrying {
		t.Fatalf("trace rows %+v", recs)
	}
	e.clock.Set(now.Add(72 * time.Hour))
	if r := e.run(t); r.Claimed != 0 {
		t.Fatal("a held row was claimed")
	}
}

func TestLongRunningHandlerRetriesDaily(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.h.long = true
	e.h.fail = func(automation.SchedulerRow) error { return errors.New("still busy") }
	c := e.ensure(t, 1, t0)
	now := t0
	for i := 0; i < 5; i++ {
		e.clock.Set(now)
		e.run(t)
		row := e.row(t, c.SchedulerKey)
		if row.Status != automation.StatusPending || row.IsOnSupportHold || row.RetryCount != i+1 {
			t.Fatalf("attempt %d: long-running rows never hold: %+v", i+1, row)
		}
		if i >= 3 && row.NextRetryOn.Sub(now) < scheduler.LongRunningRetry {
			t.Fatalf("attempt %d: after the ladder the retry is daily, got %s", i+1, row.NextRetryOn.Sub(now))
		}
		now = *row.NextRetryOn
	}
}

func TestPermanentErrorAndMissingHandlerHoldAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.h.fail = func(automation.SchedulerRow) error { return automation.Permanent(errors.New("template missing")) }
	c := e.ensure(t, 1, t0)
	if r := e.run(t); r.Held != 1 {
		t.Fatalf("%+v", r)
	}
	if row := e.row(t, c.SchedulerKey); row.FailureReasonCode != automation.ReasonPermanentError || !row.IsOnSupportHold {
		t.Fatalf("%+v", row)
	}
	// A row of a type nobody handles.
	c2 := storetest.Candidate(2, t0)
	c2.AutomationType = automation.TypeUserMessage
	if _, err := e.st.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: t0, Candidates: []automation.Candidate{c2}}); err != nil {
		t.Fatal(err)
	}
	e.run(t)
	if row := e.row(t, c2.SchedulerKey); row.FailureReasonCode != automation.ReasonNoHandler || !row.IsOnSupportHold {
		t.Fatalf("%+v", row)
	}
}

func TestPermanentReasonNamesTheHold(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.h.fail = func(automation.SchedulerRow) error {
		return fmt.Errorf("wrapped: %w", automation.PermanentReason("OwnershipConflict", errors.New("the old scheduler owns it")))
	}
	c := e.ensure(t, 1, t0)
	if r := e.run(t); r.Held != 1 {
		t.Fatalf("%+v", r)
	}
	if row := e.row(t, c.SchedulerKey); row.FailureReasonCode != "OwnershipConflict" || !row.IsOnSupportHold {
		t.Fatalf("%+v", row)
	}
}

func TestDeactivateOutcome(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.h.deact = automation.ReasonSourceNoLongerValid
	c := e.ensure(t, 1, t0)
	if r := e.run(t); r.Deactivated != 1 {
		t.Fatalf("%+v", r)
	}
	row := e.row(t, c.SchedulerKey)
	if row.Status != automation.StatusDeactivated || row.ReasonCode != automation.ReasonSourceNoLongerValid || row.RetryCount != 0 {
		t.Fatalf("deactivation is an outcome, not a failure: %+v", row)
	}
}

// A worker claims a row and crashes before completing: the lease expires, the rescue counts
// the attempt, and the row is executed again exactly once.
func TestCrashBetweenClaimAndCompleteIsRescued(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	c := e.ensure(t, 1, t0)
	ctx := context.Background()
	crashed, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0, Lease: 5 * time.Minute, Limit: 10})
	if err != nil || len(crashed) != 1 {
		t.Fatal(err)
	}
	e.clock.Set(t0.Add(4 * time.Minute))
	if r := e.run(t); r.Rescued != 0 || r.Claimed != 0 {
		t.Fatalf("live lease touched: %+v", r)
	}
	e.clock.Set(t0.Add(5 * time.Minute))
	if r := e.run(t); r.Rescued != 1 || r.Claimed != 0 {
		t.Fatalf("rescue: %+v", r)
	}
	row := e.row(t, c.SchedulerKey)
	if row.Status != automation.StatusPending || row.RetryCount != 1 || row.FailureReasonCode != automation.ReasonLeaseExpired {
		t.Fatalf("rescued: %+v", row)
	}
	e.clock.Set(*row.NextRetryOn)
	if r := e.run(t); r.Completed != 1 {
		t.Fatalf("re-execution: %+v", r)
	}
	// The crashed worker comes back and tries to finish with its old token.
	err = e.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: crashed[0].ID, Token: crashed[0].Version, Now: e.clock.Now()})
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale completion: %v", err)
	}
	if e.h.calls[c.SchedulerKey] != 1 {
		t.Fatalf("handler ran %d times", e.h.calls[c.SchedulerKey])
	}
}

// A slow worker's lease expires mid-execution; another poller rescues and re-executes the
// row; the slow worker's completion is refused and recorded as LeaseLost.
func TestSlowWorkerLosesLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{Concurrency: 1})
	c := e.ensure(t, 1, t0)
	ctx := context.Background()
	slow, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0, Lease: 5 * time.Minute, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Set(t0.Add(10 * time.Minute))
	e.run(t) // rescue
	e.clock.Set(*e.row(t, c.SchedulerKey).NextRetryOn)
	if r := e.run(t); r.Completed != 1 {
		t.Fatalf("second worker: %+v", r)
	}
	o, err := e.p.Execute(ctx, slow[0])
	if err != nil || o != trace.OutcomeLeaseLost {
		t.Fatalf("slow worker: %s %v", o, err)
	}
	jobs := 0
	if _, err := e.st.NotificationGetByKey(ctx, delivery.Key(c.SchedulerKey, "log", "a@example.test")); err == nil {
		jobs++
	}
	msgs, _ := e.st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if jobs != 1 || len(msgs) != 1 {
		t.Fatalf("jobs %d outbox %d, want exactly one delivery", jobs, len(msgs))
	}
}

func TestConcurrentPollersExecuteEachRowOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{BatchSize: 25, Concurrency: 4})
	var cs []automation.Candidate
	for i := 0; i < 200; i++ {
		cs = append(cs, storetest.Candidate(i, t0))
	}
	if _, err := e.st.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: t0, Candidates: cs}); err != nil {
		t.Fatal(err)
	}
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, e.h)
	p2, err := scheduler.NewPoller(scheduler.Config{BatchSize: 25, Concurrency: 4}, e.st, reg, e.clock, e.tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, p := range []*scheduler.Poller{e.p, p2} {
		wg.Add(1)
		go func(p *scheduler.Poller) {
			defer wg.Done()
			for {
				r, err := p.RunOnce(context.Background())
				if err != nil {
					errs <- err
					return
				}
				if r.Claimed == 0 {
					return
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e.executedEach(t, 200, 1)
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusCompleted] != 200 {
		t.Fatalf("counts %v", counts)
	}
}

// gateTrace is a trace writer whose batch writes block until released, and which records
// how many ran at once.
type gateTrace struct {
	trace.Writer
	started chan int // the size of each batch write as it starts
	release chan struct{}
	mu      sync.Mutex
	running int
	most    int
	rows    int
}

func (g *gateTrace) WriteJobs(_ context.Context, rs []trace.JobRecord) error {
	g.mu.Lock()
	g.running++
	g.most = max(g.most, g.running)
	g.mu.Unlock()
	g.started <- len(rs)
	<-g.release
	g.mu.Lock()
	g.running--
	g.rows += len(rs)
	g.mu.Unlock()
	return nil
}

// TestPollerWritesTraceBehindTheNextBatch pins the pipelined trace write of RunOnce: a
// batch's trace rows are written in the background after its outcomes are committed, so
// the next RunOnce claims, executes and completes its batch meanwhile; at most one write is
// in flight (the next batch's write waits for it); a RunOnce that claims nothing and Flush
// wait until it is done; Flush gives up with the context's error.
func TestPollerWritesTraceBehindTheNextBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{BatchSize: 2})
	g := &gateTrace{Writer: e.tr, started: make(chan int, 4), release: make(chan struct{})}
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, e.h)
	p, err := scheduler.NewPoller(scheduler.Config{BatchSize: 2, Backoff: scheduler.Backoff{Steps: scheduler.DefaultBackoff, Rand: func() float64 { return 0.5 }}}, e.st, reg, e.clock, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		e.ensure(t, i, t0)
	}
	ctx := context.Background()
	first := make(chan scheduler.Result, 1)
	go func() { r, _ := p.RunOnce(ctx); first <- r }()
	if n := <-g.started; n != 2 {
		t.Fatalf("batch 1 trace write of %d rows", n)
	}
	select {
	case r := <-first:
		if r.Completed != 2 {
			t.Fatalf("batch 1: %+v", r)
		}
	case <-time.After(10 * time.Second):
		g.release <- struct{}{}
		t.Fatal("RunOnce waited for its own trace write")
	}
	// Batch 1's trace write is blocked; batch 2 still claims, executes and commits, and
	// its own trace write waits for batch 1's.
	second := make(chan scheduler.Result, 1)
	go func() { r, _ := p.RunOnce(ctx); second <- r }()
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		counts, _ := e.st.SchedulerCountByStatus(ctx)
		select {
		case <-deadline:
			t.Fatalf("batch 2 not completed while batch 1's trace write was in flight: %v", counts)
		case n := <-g.started:
			t.Fatalf("a second trace write (%d rows) started while the first was in flight", n)
		default:
		}
		done = counts[automation.StatusCompleted] == 4
		time.Sleep(time.Millisecond)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := p.Flush(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush with a write in flight and an ended context: %v", err)
	}
	g.release <- struct{}{} // batch 1's write ends; batch 2's begins
	if r := <-second; r.Completed != 2 {
		t.Fatalf("batch 2: %+v", r)
	}
	if n := <-g.started; n != 2 {
		t.Fatalf("batch 2 trace write of %d rows", n)
	}
	idle := make(chan error, 1)
	go func() { _, err := p.RunOnce(ctx); idle <- err }()
	select {
	case err := <-idle:
		t.Fatalf("an idle RunOnce returned (%v) with a trace write in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	g.release <- struct{}{}
	if err := <-idle; err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.most != 1 || g.rows != 4 {
		t.Fatalf("at most %d writes at once (want 1), %d rows written (want 4)", g.most, g.rows)
	}
}
