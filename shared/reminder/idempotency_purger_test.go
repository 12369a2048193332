package reminder

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// idempotencyRecords stores n completed-or-not records created `age` before the clock.
func idempotencyRecords(t *testing.T, f *maintFixture, prefix string, n int, age time.Duration) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := f.st.IdempotencyBegin(context.Background(), store.IdempotencyBeginParams{Scope: "s", Key: fmt.Sprintf("%s-%d", prefix, i),
			RequestHash: "h", Now: f.clock.Now().Add(-age), Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
}

// One pass deletes the records older than the retention in bounded deletes and counts them;
// a newer record stays until it is old enough.
func TestIdempotencyPurgerRunOnceCounts(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	idempotencyRecords(t, f, "old", 5, 8*24*time.Hour)
	idempotencyRecords(t, f, "new", 1, time.Hour)
	p := &IdempotencyPurger{Store: f.st, Clock: f.clock, Config: IdempotencyPurgeConfig{BatchSize: 2}}
	res, err := p.runOnce(ctx)
	if err != nil || res != (IdempotencyPurgeResult{Batches: 3, Purged: 5, Complete: true}) {
		t.Fatalf("runOnce = %+v, %v", res, err)
	}
	if res, err := p.runOnce(ctx); err != nil || res.Purged != 0 {
		t.Fatalf("second pass = %+v, %v", res, err)
	}
	f.clock.Set(f.clock.Now().Add(7 * 24 * time.Hour)) // the default retention: 7 days
	if res, err := p.runOnce(ctx); err != nil || res.Purged != 1 {
		t.Fatalf("after the retention = %+v, %v", res, err)
	}
}

// A delete that fails stops the pass; what it did not delete is deleted by the next pass
// (the purge's position is the records themselves).
func TestIdempotencyPurgerFailingBatchKeepsPosition(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	idempotencyRecords(t, f, "old", 5, 8*24*time.Hour)
	f.st.failFromCall("IdempotencyPurge", 2)
	p := &IdempotencyPurger{Store: f.st, Clock: f.clock, Config: IdempotencyPurgeConfig{BatchSize: 2, MaxBatches: 10}}
	res, err := p.runOnce(ctx)
	if !errors.Is(err, errInjected) || res.Purged != 2 || res.Batches != 2 || res.Complete {
		t.Fatalf("failing pass = %+v, %v", res, err)
	}
	f.st.heal()
	if res, err := p.runOnce(ctx); err != nil || res.Purged != 3 || !res.Complete {
		t.Fatalf("next pass = %+v, %v", res, err)
	}
}
