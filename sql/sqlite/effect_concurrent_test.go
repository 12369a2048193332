package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// TestEffectOnceAcrossStores: two stores on one database file (two processes) complete
// batches at the same time whose deliveries fight over the same effects, in every shape
// migration 0025 splits between the partial unique index and the inserts' NOT EXISTS (a
// job whose effect is its own key against one whose effect is that key, both orders). The
// checks and the insert run in one BEGIN IMMEDIATE transaction, so no effect and no
// DeliveryKey ends with two jobs.
func TestEffectOnceAcrossStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "two.db")
	open := func() store.Store { return sqlitetest.OpenAt(t, path, nil) }
	a := open()
	b := open()
	const n = 60
	t0 := storetest.T0
	cands := make([]automation.Candidate, n)
	for i := range cands {
		cands[i] = storetest.Candidate(i, t0)
	}
	if _, err := a.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0, Candidates: cands}); err != nil {
		t.Fatal(err)
	}
	claimHalf := func(s store.Store) []automation.SchedulerRow {
		rows, err := s.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0, Lease: time.Hour, Limit: n / 2})
		if err != nil || len(rows) != n/2 {
			t.Fatalf("claimed %d: %v", len(rows), err)
		}
		return rows
	}
	rowsA, rowsB := claimHalf(a), claimHalf(b)
	// Store A writes jobs whose effect is their own key k-i; store B jobs of other keys
	// whose effect is k-i; both also write the third-key effect e-i from two keys each.
	run := func(s store.Store, rows []automation.SchedulerRow, side string, errs chan<- error) {
		for start := 0; start < len(rows); start += 3 {
			var items []store.SchedulerCompleteParams
			for j, r := range rows[start:min(start+3, len(rows))] {
				i := start + j
				p := store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: t0}
				add := func(dk, effect string) {
					p.Deliveries = append(p.Deliveries, store.NotificationRequest{DeliveryKey: dk, EffectKey: effect, SchedulerKey: r.SchedulerKey,
						BusinessUnitID: "bu-1", Channel: "log", Recipient: side + "@example.test", Template: "t", PayloadJSON: "{}"})
				}
				if side == "a" {
					add(fmt.Sprintf("k-%d", i), "")
					add(fmt.Sprintf("a-e-%d", i), fmt.Sprintf("e-%d", i))
					add(fmt.Sprintf("a-x-%d", i), fmt.Sprintf("k-%d", (i+7)%len(rows)))
				} else {
					add(fmt.Sprintf("b-k-%d", i), fmt.Sprintf("k-%d", i))
					add(fmt.Sprintf("b-e-%d", i), fmt.Sprintf("e-%d", i))
					add(fmt.Sprintf("k-%d", (i+7)%len(rows)), "")
				}
				items = append(items, p)
			}
			res, err := s.SchedulerCompleteBatch(ctx, items)
			if err == nil {
				for _, e := range res {
					err = e
					if err != nil {
						break
					}
				}
			}
			if err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); run(a, rowsA, "a", errs) }()
	go func() { defer wg.Done(); run(b, rowsB, "b", errs) }()
	wg.Wait()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db := a.(interface{ DB() *sql.DB }).DB()
	var dups, jobs int
	if err := db.QueryRow(`SELECT COUNT(*) FROM (SELECT 1 FROM NotificationJob GROUP BY BusinessUnitId, EffectKey HAVING COUNT(*) > 1)`).Scan(&dups); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM NotificationJob`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if dups != 0 {
		t.Fatalf("%d effects with more than one job", dups)
	}
	// Every effect k-i and e-i has its job: 2 per index.
	if jobs != 2*(n/2) {
		t.Fatalf("%d jobs, want %d (one per effect)", jobs, n)
	}
}
