package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
)

func (e *env) ensureMany(t *testing.T, n int, due time.Time) {
	t.Helper()
	var cs []automation.Candidate
	for i := 0; i < n; i++ {
		cs = append(cs, storetest.Candidate(i, due))
	}
	if _, err := e.st.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: t0, Candidates: cs}); err != nil {
		t.Fatal(err)
	}
}

// TestDrainCompletesEveryRowOnce: Drain claims batch after batch until nothing is due,
// executes every row once and completes it, reports each batch once it is committed, and
// sums them; a second Drain finds nothing.
func TestDrainCompletesEveryRowOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{BatchSize: 7, Concurrency: 3})
	e.ensureMany(t, 50, t0)
	var batches []scheduler.Result
	res, err := e.p.Drain(context.Background(), 0, func(r scheduler.Result) { batches = append(batches, r) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Claimed != 50 || res.Completed != 50 || len(batches) != 8 {
		t.Fatalf("result %+v, %d batches", res, len(batches))
	}
	sum := 0
	for i, b := range batches {
		want := 7
		if i == 7 {
			want = 1
		}
		if b.Claimed != want || b.Completed != want {
			t.Fatalf("batch %d: %+v", i, b)
		}
		sum += b.Completed
	}
	if sum != 50 {
		t.Fatalf("completed %d, want 50", sum)
	}
	e.executedEach(t, 50, 1)
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusCompleted] != 50 {
		t.Fatalf("counts %v", counts)
	}
	if again, err := e.p.Drain(context.Background(), 0, nil); err != nil || again.Claimed != 0 {
		t.Fatalf("second drain: %+v %v", again, err)
	}
}

// slowComplete is a scheduler store whose batch completions start only when released, so a
// test can see what runs while one is pending.
type slowComplete struct {
	store.SchedulerStore
	pending chan struct{} // receives when a completion is waiting; nil: not told
	release chan struct{}
}

func (s *slowComplete) SchedulerCompleteBatch(ctx context.Context, items []store.SchedulerCompleteParams) ([]error, error) {
	if s.pending != nil {
		s.pending <- struct{}{}
	}
	<-s.release
	return s.SchedulerStore.SchedulerCompleteBatch(ctx, items)
}

// TestDrainExecutesAheadOfTheLastCompletion pins the overlap: with batch 1's completion
// held back, Drain has already claimed batch 2 and its handlers run (a RunOnce loop would
// claim batch 2 only after batch 1's completion committed). Releasing it completes both.
func TestDrainExecutesAheadOfTheLastCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{})
	e.ensureMany(t, 10, t0)
	slow := &slowComplete{SchedulerStore: e.st, pending: make(chan struct{}), release: make(chan struct{})}
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, e.h)
	p, err := scheduler.NewPoller(scheduler.Config{BatchSize: 5, Concurrency: 1}, slow, reg, e.clock, e.tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var res scheduler.Result
	go func() {
		var err error
		res, err = p.Drain(context.Background(), 0, nil)
		done <- err
	}()
	<-slow.pending // batch 1's completion is waiting
	deadline := time.After(10 * time.Second)
	for {
		e.h.mu.Lock()
		n := len(e.h.calls)
		e.h.mu.Unlock()
		if n == 10 {
			break // batch 2 executed while batch 1's outcomes were unwritten
		}
		select {
		case <-deadline:
			t.Fatalf("%d rows executed while batch 1's completion waited, want 10", n)
		case <-time.After(5 * time.Millisecond):
		}
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusProcessing] != 10 {
		t.Fatalf("counts %v, want both batches claimed and unwritten", counts)
	}
	close(slow.release)
	go func() {
		for range slow.pending { // batch 2's completion
		}
	}()
	if err := <-done; err != nil || res.Completed != 10 {
		t.Fatalf("%+v %v", res, err)
	}
	close(slow.pending)
	counts, _ = e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusCompleted] != 10 {
		t.Fatalf("counts %v", counts)
	}
}

// TestDrainStopsAtMaxBatches: a bound on the batches leaves the rest due for the next
// drain, with nothing claimed beyond the bound.
func TestDrainStopsAtMaxBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduler.Config{BatchSize: 4})
	e.ensureMany(t, 20, t0)
	res, err := e.p.Drain(context.Background(), 3, nil)
	if err != nil || res.Claimed != 12 || res.Completed != 12 {
		t.Fatalf("%+v %v", res, err)
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusPending] != 8 || counts[automation.StatusProcessing] != 0 {
		t.Fatalf("counts %v", counts)
	}
	if res, err := e.p.Drain(context.Background(), 0, nil); err != nil || res.Completed != 8 {
		t.Fatalf("rest: %+v %v", res, err)
	}
}

// TestDrainClaimFaultWritesTheExecutedBatch: when the claim of the next batch fails (the
// simulator's AfterClaim fault), the batch already executed is still written, the failing
// batch stays claimed (rescued when its lease expires, as after a crash), and the error is
// returned.
func TestDrainClaimFaultWritesTheExecutedBatch(t *testing.T) {
	t.Parallel()
	boom := errors.New("crash after claim")
	claims := 0
	e := newEnv(t, scheduler.Config{BatchSize: 3, Hooks: &scheduler.Hooks{AfterClaim: func(context.Context, []automation.SchedulerRow) error {
		claims++
		if claims == 2 {
			return boom
		}
		return nil
	}}})
	e.ensureMany(t, 9, t0)
	res, err := e.p.Drain(context.Background(), 0, nil)
	if !errors.Is(err, boom) || res.Completed != 3 || res.Claimed != 6 {
		t.Fatalf("%+v %v", res, err)
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusCompleted] != 3 || counts[automation.StatusProcessing] != 3 || counts[automation.StatusPending] != 3 {
		t.Fatalf("counts %v", counts)
	}
	// The lease expires: a later drain rescues the claimed batch (back to Pending, retried
	// by the backoff ladder), and the drains after it complete every row.
	rescued := 0
	for i := 1; i <= 6; i++ {
		e.clock.Set(t0.Add(time.Duration(i) * time.Hour))
		res, err := e.p.Drain(context.Background(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		rescued += res.Rescued
	}
	counts, _ = e.st.SchedulerCountByStatus(context.Background())
	if rescued != 3 || counts[automation.StatusCompleted] != 9 {
		t.Fatalf("after the lease: rescued %d, counts %v", rescued, counts)
	}
}
