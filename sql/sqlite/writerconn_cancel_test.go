package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
)

// TestCancelledWriteLeavesNextWriteIntact, through the public store API: after a
// SchedulerEnsure whose context ends mid-transaction, the next SchedulerEnsure (a plain
// Background context) succeeds and commits its rows. It used to fail when database/sql's
// late rollback of the cancelled one ran on the pinned writer after the slot was released
// ("cannot start a transaction within a transaction", or a COMMIT that found no transaction
// after its rows were written one by one).
func TestCancelledWriteLeavesNextWriteIntact(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var failures []string
	committedAnyway := 0
	for round := 0; round < 150; round++ {
		var big []automation.Candidate
		for i := 0; i < 1000; i++ {
			big = append(big, storetest.Candidate(1_000_000+round*1000+i, now))
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(1+round%5)*time.Millisecond)
		aDone := make(chan struct{})
		go func() {
			defer close(aDone)
			_, _ = st.SchedulerEnsure(cctx, store.SchedulerEnsureParams{Now: now, Candidates: big})
		}()
		time.Sleep(300 * time.Microsecond)
		small := []automation.Candidate{storetest.Candidate(round*2, now), storetest.Candidate(round*2+1, now)}
		if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: small}); err != nil {
			failures = append(failures, err.Error())
			var n int
			_ = st.DB().QueryRow("SELECT COUNT(*) FROM AutomationScheduler WHERE SchedulerKey IN (?, ?)", small[0].SchedulerKey, small[1].SchedulerKey).Scan(&n)
			if n > 0 {
				committedAnyway++
				t.Logf("failed call's rows committed anyway (%d): %v", n, err)
			}
		}
		<-aDone
		cancel()
	}
	if len(failures) > 0 {
		t.Fatalf("%d of 150 uncancelled SchedulerEnsure calls failed after a cancelled one ; %d of them committed their rows anyway (first: %s)", len(failures), committedAnyway, failures[0])
	}
}
