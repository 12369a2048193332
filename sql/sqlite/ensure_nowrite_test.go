package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// TestEnsureThatChangesNothingTakesNoWriter: a SchedulerEnsure whose candidates all decide an
// ensure that writes nothing (Unchanged, InProgress, AlreadyCompleted: a reconciliation
// sweep over sources whose rows are in place, 1,000 of them behind the 09:00 herd) answers
// from one read and runs no write transaction; one candidate that needs a write (a new key,
// a new schedule) makes it run the ensure transaction as before, with the same answers.
func TestEnsureThatChangesNothingTakesNoWriter(t *testing.T) {
	t.Parallel()
	s := sqlitetest.Open(t)
	ctx := context.Background()
	t0 := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	cs := make([]automation.Candidate, 6)
	for i := range cs {
		cs[i] = storetest.Candidate(i, t0)
	}
	if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0, Candidates: cs}); err != nil {
		t.Fatal(err)
	}
	// Row 0 completed, row 1 Processing, the others Pending.
	claimed, err := s.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0, Lease: 5 * time.Minute, Limit: 2})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: claimed[0].ID, Token: claimed[0].Version, Now: t0}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	writes := map[string]int{}
	s.SetTxObserver(func(kind string, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		writes[kind]++
	})
	defer s.SetTxObserver(nil)
	res, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0.Add(time.Minute), Candidates: cs})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(writes) != 0 {
		t.Errorf("an ensure that changes nothing ran write transactions %v; want none", writes)
	}
	mu.Unlock()
	want := map[string]automation.EnsureAction{claimed[0].SchedulerKey: automation.EnsureAlreadyCompleted, claimed[1].SchedulerKey: automation.EnsureInProgress}
	for i, r := range res {
		w, ok := want[cs[i].SchedulerKey]
		if !ok {
			w = automation.EnsureUnchanged
		}
		if r.Action != w || r.Row.SchedulerKey != cs[i].SchedulerKey || r.Row.ID == 0 {
			t.Errorf("candidate %d: %s row %q (Id %d); want %s of its own row", i, r.Action, r.Row.SchedulerKey, r.Row.ID, w)
		}
	}
	// One new key and one new schedule among them: the ensure transaction, as before.
	more := append([]automation.Candidate{storetest.Candidate(99, t0)}, cs...)
	more[len(more)-1] = storetest.Candidate(len(cs)-1, t0.Add(time.Hour))
	res, err = s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0.Add(time.Minute), Candidates: more})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if writes["SchedulerEnsure"] != 1 {
		t.Errorf("an ensure with writes ran %v; want one SchedulerEnsure transaction", writes)
	}
	mu.Unlock()
	if res[0].Action != automation.EnsureInserted || res[len(res)-1].Action != automation.EnsureUpdated || res[1].Action != automation.EnsureAlreadyCompleted {
		t.Errorf("actions %s, %s, %s; want Inserted, AlreadyCompleted, Updated", res[0].Action, res[1].Action, res[len(res)-1].Action)
	}
	if row, err := s.SchedulerGetByKey(ctx, more[len(more)-1].SchedulerKey); err != nil || !row.ScheduledOn.Equal(t0.Add(time.Hour)) {
		t.Errorf("rescheduled row %v (%v); want due %s", row.ScheduledOn, err, t0.Add(time.Hour))
	}
}

// When SchedulerEnsure's first look (the read of SchedulerGetByKeys on the pool) fails, the
// ensure transaction decides as it did before the first look existed: new keys are
// inserted, a new schedule updates its row, unchanged rows answer Unchanged. The read was
// only a shortcut, and a failed shortcut failed the whole ensure (found by the hostile
// review); the caller's span gets the event scheduler.ensure.read_failed with the read's
// error. A context already done still fails at once and writes nothing. The read fails at
// the driver (limitSpy.failQuery), the ensure transaction's own reads do not.
func TestEnsureWhoseFirstLookFailsStillEnsures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spy, db, q := openSpied(t)
	getByKeys := q.SQL("SchedulerGetByKeys")
	errRead := errors.New("injected: the pool's read failed")
	var failed atomic.Int32
	spy.failQuery = func(query string) error {
		if query == getByKeys {
			failed.Add(1)
			return errRead
		}
		return nil
	}
	st := sqlstore.New(db, q, sqlite.Dialect, nil)

	t0 := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	cs := []automation.Candidate{storetest.Candidate(0, t0), storetest.Candidate(1, t0), storetest.Candidate(2, t0)}
	// The caller's span (a provider of the test's own, not the process's globals) hears the
	// fallback as an event.
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("test")
	sctx, caller := tracer.Start(ctx, "caller")
	res, err := st.SchedulerEnsure(sctx, store.SchedulerEnsureParams{Now: t0, Candidates: cs})
	caller.End()
	if err != nil {
		t.Fatalf("first ensure: %v; want the ensure transaction to run after the failed read", err)
	}
	if ended := spans.Ended(); len(ended) != 1 || len(ended[0].Events()) != 1 || ended[0].Events()[0].Name != "scheduler.ensure.read_failed" ||
		!strings.Contains(fmt.Sprint(ended[0].Events()[0].Attributes), errRead.Error()) {
		t.Errorf("the caller's span: %+v; want one event scheduler.ensure.read_failed naming the read's error", ended)
	}
	for i, r := range res {
		if r.Action != automation.EnsureInserted || r.Row.SchedulerKey != cs[i].SchedulerKey {
			t.Errorf("first ensure, candidate %d: %s of %q, want Inserted", i, r.Action, r.Row.SchedulerKey)
		}
	}
	// Two unchanged, one rescheduled: the answers the first look would have given, and the
	// write it could not make.
	again := slices.Clone(cs)
	again[2] = storetest.Candidate(2, t0.Add(time.Hour))
	res, err = st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0.Add(time.Minute), Candidates: again})
	if err != nil {
		t.Fatalf("second ensure: %v", err)
	}
	if res[0].Action != automation.EnsureUnchanged || res[1].Action != automation.EnsureUnchanged || res[2].Action != automation.EnsureUpdated {
		t.Errorf("second ensure: %s, %s, %s; want Unchanged, Unchanged, Updated", res[0].Action, res[1].Action, res[2].Action)
	}
	if row, err := st.SchedulerGetByKey(ctx, again[2].SchedulerKey); err != nil || !row.ScheduledOn.Equal(t0.Add(time.Hour)) {
		t.Errorf("rescheduled row due %v (%v); want %s", row.ScheduledOn, err, t0.Add(time.Hour))
	}
	if n := failed.Load(); n != 2 {
		t.Errorf("the first look failed %d times, want 2 (once per ensure): the test's failing read was not reached", n)
	}
	// A context already done fails fast: its error, nothing written, and no fallback noted
	// (the read failed because the caller gave up, not the store).
	cctx, gaveUp := tracer.Start(ctx, "caller that gave up")
	cctx, cancel := context.WithCancel(cctx)
	cancel()
	fresh := storetest.Candidate(3, t0)
	_, err = st.SchedulerEnsure(cctx, store.SchedulerEnsureParams{Now: t0, Candidates: []automation.Candidate{fresh}})
	gaveUp.End()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("an ensure with a cancelled context: %v, want context.Canceled", err)
	}
	if ended := spans.Ended(); len(ended) != 2 || len(ended[1].Events()) != 0 {
		t.Errorf("the cancelled ensure noted a fallback on its caller's span: %+v", ended)
	}
	if _, err := st.SchedulerGetByKey(ctx, fresh.SchedulerKey); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the cancelled ensure wrote its row (%v)", err)
	}
}
