package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// Two stores on one file (two processes), three claimers each, claim leased ranges at
// once; every third claim gives back its batch's second half (OutboxRelease from an id) and
// then marks the first half and gives back the rest of the lease, the others mark the whole
// batch and give it back. No row is ever in two live claims, and every row ends marked: the
// claims are serialized across connections by SQLite's write lock (a transaction begun
// IMMEDIATE), not only by the store's own writer.
func TestOutboxClaimsOfTwoStoresOnOneFileAreDisjoint(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "claims.db")
	open := func() *sqlstore.Store { return sqlitetest.OpenAt(t, path, nil) }
	a, b := open(), open()
	ctx := context.Background()
	now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	const rows = 240
	for i := range rows {
		if _, err := a.DB().Exec(`INSERT INTO Outbox (MessageId, Destination, Body, CreatedOn) VALUES (?, 'q', x'7b7d', ?)`, fmt.Sprintf("m-%d", i), now.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	held := map[int64]string{} // row -> the claim holding it
	var overlaps []string
	marked := 0
	var wg sync.WaitGroup
	for w := range 6 {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for k := 0; ; k++ {
				msgs, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: now, Lease: time.Hour, Limit: 4})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				done := marked >= rows || len(overlaps) > 0 || k > 5000
				for _, m := range msgs {
					if other, ok := held[m.ID]; ok {
						overlaps = append(overlaps, fmt.Sprintf("row %d in claims %s and %s", m.ID, other, m.ClaimToken))
					}
					held[m.ID] = m.ClaimToken
				}
				mu.Unlock()
				if len(msgs) == 0 || done {
					if done {
						return
					}
					time.Sleep(time.Millisecond)
					continue
				}
				keep := msgs
				if k%3 == 0 && len(msgs) > 1 {
					keep = msgs[:len(msgs)/2]
					var back []int64
					mu.Lock()
					for _, m := range msgs[len(msgs)/2:] {
						back = append(back, m.ID)
						delete(held, m.ID) // before the release: a claim after it may take them
					}
					mu.Unlock()
					if err := s.OutboxRelease(ctx, back, msgs[0].ClaimToken); err != nil {
						t.Error(err)
						return
					}
				}
				var ids []int64
				for _, m := range keep {
					ids = append(ids, m.ID)
				}
				if err := s.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: ids, Now: now}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					delete(held, id)
				}
				marked += len(ids)
				mu.Unlock()
				if err := s.OutboxRelease(ctx, nil, msgs[0].ClaimToken); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(overlaps) > 0 {
		t.Fatalf("%d overlaps, first: %s", len(overlaps), overlaps[0])
	}
	var left, leases int
	_ = a.DB().QueryRow(`SELECT COUNT(*) FROM Outbox WHERE PublishedOn IS NULL`).Scan(&left)
	_ = a.DB().QueryRow(`SELECT COUNT(*) FROM OutboxLease`).Scan(&leases)
	if left != 0 || leases != 0 || marked != rows {
		t.Fatalf("%d rows unpublished, %d leases left, %d marked of %d", left, leases, marked, rows)
	}
}
