package attribute_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/store"
)

func ledgerRows(t *testing.T, e *env) int {
	t.Helper()
	var n int
	if err := e.st.(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT COUNT(*) FROM AttributeProcessedEvent`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A redelivery inside the dedupe window is still a no-op after the purger ran (its id is
// kept), and ledger rows older than the window are deleted, in bounded batches, on the
// purger's own cadence.
func TestProcessedPurgerKeepsTheWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	handle := func(id string) store.AttributeApplyOutcome {
		t.Helper()
		r, err := e.svc.Handle(ctx, payload(id, "bu-syd", "2026-07-10T00:00:00Z", weeklyView))
		if err != nil {
			t.Fatal(err)
		}
		return r.Outcome
	}
	const window = 48 * time.Hour
	p := &attribute.ProcessedPurger{Store: e.st, Clock: e.clock, Window: window, BatchSize: 2, MaxBatches: 10}
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		handle(id)
	}
	e.clock.Advance(3 * time.Hour)
	if handle("young") != store.AttributeApplied {
		t.Fatal("young not applied")
	}
	// One minute before old-*'s window ends: nothing goes, and a redelivery is a no-op.
	e.clock.Set(time.Date(2026, 7, 10, 0, 0, 0, 0, time.UTC).Add(window - time.Minute))
	if r, err := p.RunOnce(ctx); err != nil || r.Deleted != 0 {
		t.Fatalf("inside the window: %+v, %v", r, err)
	}
	if out := handle("old-1"); out != store.AttributeDuplicate {
		t.Fatalf("a redelivery inside the window: %v, want a duplicate", out)
	}
	// Past the window: the three old ids go (2 + 1: bounded batches), the young one stays.
	// The purger waits its Every (an hour) since its last run first.
	e.clock.Advance(2 * time.Minute)
	if r, err := p.RunOnce(ctx); err != nil || !r.Skipped || r.Deleted != 0 {
		t.Fatalf("within Every of the last run: %+v, %v", r, err)
	}
	e.clock.Advance(time.Hour)
	r, err := p.RunOnce(ctx)
	if err != nil || r.Deleted != 3 || r.Batches != 2 { // young (+3h) is inside the window still
		t.Fatalf("past the window: %+v, %v", r, err)
	}
	if n := ledgerRows(t, e); n != 1 {
		t.Fatalf("%d ledger rows left, want 1 (young)", n)
	}
	if handle("young") != store.AttributeDuplicate {
		t.Fatal("young's redelivery applied again")
	}
}

// A window under a day, and a purger without its store or clock, are refused with nothing
// deleted.
func TestProcessedPurgerRefusesAShortWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	handleOnce(t, e)
	e.clock.Advance(30 * 24 * time.Hour)
	_, err := (&attribute.ProcessedPurger{Store: e.st, Clock: e.clock, Window: 23 * time.Hour}).RunOnce(context.Background())
	if err == nil || !strings.Contains(err.Error(), "under 24h0m0s") {
		t.Fatalf("err = %v", err)
	}
	if _, err := (&attribute.ProcessedPurger{Store: e.st}).RunOnce(context.Background()); err == nil {
		t.Fatal("no clock accepted")
	}
	if n := ledgerRows(t, e); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
	// The default window (35 days) keeps a 30-day-old id.
	if r, err := (&attribute.ProcessedPurger{Store: e.st, Clock: e.clock}).RunOnce(context.Background()); err != nil || r.Deleted != 0 {
		t.Fatalf("default window: %+v, %v", r, err)
	}
}

func handleOnce(t *testing.T, e *env) {
	t.Helper()
	if _, err := e.svc.Handle(context.Background(), payload("e1", "bu-syd", "2026-07-10T00:00:00Z", weeklyView)); err != nil {
		t.Fatal(err)
	}
}
