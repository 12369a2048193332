package reminder_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// countingStore counts the revalidation reads and can fail the next n snapshot reads.
type countingStore struct {
	reminder.Store
	mu                     sync.Mutex
	settings, snaps, units int
	failSnaps              int
}

func (c *countingStore) ReminderSettingGet(ctx context.Context, guid string) (store.ReminderSettingRecord, error) {
	c.mu.Lock()
	c.settings++
	c.mu.Unlock()
	return c.Store.ReminderSettingGet(ctx, guid)
}

func (c *countingStore) SourceSnapshotGet(ctx context.Context, et, eg string) (store.SourceSnapshot, error) {
	c.mu.Lock()
	c.snaps++
	fail := c.failSnaps > 0
	if fail {
		c.failSnaps--
	}
	c.mu.Unlock()
	if fail {
		return store.SourceSnapshot{}, errors.New("database is locked")
	}
	return c.Store.SourceSnapshotGet(ctx, et, eg)
}

func (c *countingStore) BusinessUnitGetRecord(ctx context.Context, id string) (store.BusinessUnitRecord, error) {
	c.mu.Lock()
	c.units++
	c.mu.Unlock()
	return c.Store.BusinessUnitGetRecord(ctx, id)
}

// TestBatchScopeReadsOncePerBatch: rows of one claimed batch that share a setting, a source
// and a business unit are revalidated against one read of each (they were read once per
// row); outside a batch scope every row still reads; and a transient store error is not
// kept for the rest of the batch - the next row reads again and completes.
func TestBatchScopeReadsOncePerBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	f.clock.Set(utc("2026-10-30T22:00:00Z")) // all three offsets are due (the earlier two too late: an outcome, not an error)
	rows, err := f.st.SchedulerClaimDue(context.Background(), store.SchedulerClaimDueParams{Now: f.clock.Now(), Lease: 60e9, Limit: 10})
	if err != nil || len(rows) < 2 {
		t.Fatalf("claimed %d rows: %v", len(rows), err)
	}
	cs := &countingStore{Store: f.st.(reminder.Store)}
	h := &reminder.Handler{Store: cs}
	ctx := h.BatchScope(context.Background(), rows)
	for _, row := range rows {
		if _, err := h.Execute(ctx, row, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if cs.settings != 1 || cs.snaps != 1 || cs.units != 1 {
		t.Errorf("in one batch of %d rows: %d setting, %d snapshot, %d unit reads; want 1 each", len(rows), cs.settings, cs.snaps, cs.units)
	}

	cs.settings, cs.snaps, cs.units = 0, 0, 0
	for _, row := range rows {
		if _, err := h.Execute(context.Background(), row, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if cs.settings != len(rows) || cs.snaps != len(rows) {
		t.Errorf("without a batch scope: %d setting and %d snapshot reads for %d rows", cs.settings, cs.snaps, len(rows))
	}

	// The scope's own read fails, and so does the first row's read again; the next row
	// reads a third time and completes.
	cs.failSnaps, cs.snaps = 2, 0
	ctx = h.BatchScope(context.Background(), rows)
	if _, err := h.Execute(ctx, rows[0], f.clock.Now()); err == nil || automation.IsPermanent(err) {
		t.Fatalf("transient snapshot error: %v", err)
	}
	if _, err := h.Execute(ctx, rows[1], f.clock.Now()); err != nil || cs.snaps != 3 {
		t.Fatalf("the next row of the batch did not read again (%d snapshot reads): %v", cs.snaps, err)
	}
}

// TestBatchScopeLoadsBeforeRowsExecute: BatchScope makes the batch's reads itself, on the
// caller's goroutine, before any row executes (so that on the embedded store they run on the
// connection the claim committed on, docs/performance.md#revalidation-per-batch); rows of other
// automation types are not read for; and a read that failed in the scope is made again by
// the row that needs it, which then completes.
func TestBatchScopeLoadsBeforeRowsExecute(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	f.clock.Set(utc("2026-10-30T22:00:00Z"))
	rows, err := f.st.SchedulerClaimDue(context.Background(), store.SchedulerClaimDueParams{Now: f.clock.Now(), Lease: 60e9, Limit: 10})
	if err != nil || len(rows) < 2 {
		t.Fatalf("claimed %d rows: %v", len(rows), err)
	}
	cs := &countingStore{Store: f.st.(reminder.Store)}
	h := &reminder.Handler{Store: cs}
	other := rows[0]
	other.AutomationType, other.SettingGuid, other.SourceEntityGuid, other.BusinessUnitID = automation.TypeReportSubscription, "other", "other", "other"
	ctx := h.BatchScope(context.Background(), append([]automation.SchedulerRow{other}, rows...))
	if cs.settings != 1 || cs.snaps != 1 || cs.units != 1 {
		t.Fatalf("after BatchScope: %d setting, %d snapshot, %d unit reads; want 1 each, made before any row executes", cs.settings, cs.snaps, cs.units)
	}
	for _, row := range rows {
		if _, err := h.Execute(ctx, row, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if cs.settings != 1 || cs.snaps != 1 || cs.units != 1 {
		t.Errorf("after executing %d rows: %d setting, %d snapshot, %d unit reads; want no more", len(rows), cs.settings, cs.snaps, cs.units)
	}

	cs.settings, cs.snaps, cs.units, cs.failSnaps = 0, 0, 0, 1
	ctx = h.BatchScope(context.Background(), rows)
	if cs.snaps != 1 {
		t.Fatalf("BatchScope made %d snapshot reads, want 1", cs.snaps)
	}
	for _, row := range rows {
		if _, err := h.Execute(ctx, row, f.clock.Now()); err != nil {
			t.Fatalf("a failed read of the scope was kept: %v", err)
		}
	}
	if cs.snaps != 2 {
		t.Errorf("%d snapshot reads, want 2 (the scope's failed one, the first row's again)", cs.snaps)
	}
}
