package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
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
