package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// TestOutboxClaimLeasesARange: a relay's claim writes one OutboxLease row over its batch's
// Id range and leaves the outbox rows as they were (migration 0028: a lease in every row was
// one more rewrite of each row, body included); the next claim skips the range; giving the
// lease back from an id frees the rows from there, giving it all back frees the rest; a row
// an older build leased in the row itself stays held until that lease ends; an ended lease
// is dropped by the next claim. The candidate rows' check seeks IX_OutboxLease_LastId.
func TestOutboxClaimLeasesARange(t *testing.T) {
	t.Parallel()
	s, q := planStore(t)
	ctx := context.Background()
	db := s.DB()
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	ms := func(at time.Time) int64 { return at.UnixMilli() }
	for i := range 6 {
		if _, err := db.Exec(`INSERT INTO Outbox (MessageId, Destination, Body, CreatedOn) VALUES (?, 'q', x'7b7d', ?)`, fmt.Sprintf("m-%d", i), ms(t0)); err != nil {
			t.Fatal(err)
		}
	}
	// m-5 carries a live lease an older build wrote into the row.
	if _, err := db.Exec(`UPDATE Outbox SET LeaseUntil = ?, ClaimToken = 'old' WHERE MessageId = 'm-5'`, ms(t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	ids := func(msgs []store.OutboxMessage) string {
		var out []string
		for _, m := range msgs {
			out = append(out, m.MessageID)
		}
		return strings.Join(out, ",")
	}
	leases := func() string {
		return strings.Join(queryRows(t, db, `SELECT FirstId || '-' || LastId FROM OutboxLease ORDER BY FirstId`, scanString), ",")
	}
	first, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: t0, Lease: time.Minute, Limit: 3})
	if err != nil || ids(first) != "m-0,m-1,m-2" || first[0].ClaimToken == "" || first[2].ClaimToken != first[0].ClaimToken {
		t.Fatalf("first claim %s %v %+v", ids(first), err, first)
	}
	var written int
	_ = db.QueryRow(`SELECT COUNT(*) FROM Outbox WHERE ClaimToken IS NOT NULL AND ClaimToken <> 'old'`).Scan(&written)
	if written != 0 || leases() != fmt.Sprintf("%d-%d", first[0].ID, first[2].ID) {
		t.Fatalf("%d rows written, leases %s", written, leases())
	}
	second, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: t0, Lease: time.Minute, Limit: 10})
	if err != nil || ids(second) != "m-3,m-4" {
		t.Fatalf("second claim %s %v (m-5 is held by the older build's lease)", ids(second), err)
	}
	// A failed publish at m-1: m-1 waits for its RetryAt, m-2 is given back, m-0 stays held.
	if err := s.OutboxRetryLater(ctx, first[1].ID, "another claim", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.OutboxRetryLater(ctx, first[1].ID, first[0].ClaimToken, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.OutboxRelease(ctx, []int64{first[2].ID}, first[0].ClaimToken); err != nil {
		t.Fatal(err)
	}
	third, _ := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: t0.Add(2 * time.Second), Lease: time.Minute, Limit: 10})
	if ids(third) != "m-2" {
		t.Fatalf("after the release from m-2: %s", ids(third))
	}
	// The first claim is over: m-1, whose RetryAt came, is claimable again.
	if err := s.OutboxRelease(ctx, nil, first[0].ClaimToken); err != nil {
		t.Fatal(err)
	}
	fourth, _ := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: t0.Add(2 * time.Second), Lease: time.Minute, Limit: 10})
	if ids(fourth) != "m-0,m-1" || fourth[1].Attempts != 1 {
		t.Fatalf("after the whole release: %s %+v", ids(fourth), fourth)
	}
	// Every lease ends: the next claim drops them and takes every row again, m-5 included.
	all, _ := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: t0.Add(3 * time.Minute), Lease: time.Minute, Limit: 10})
	if ids(all) != "m-0,m-1,m-2,m-3,m-4,m-5" || leases() != fmt.Sprintf("%d-%d", all[0].ID, all[5].ID) {
		t.Fatalf("after every lease ended: %s, leases %s", ids(all), leases())
	}
	plan, err := explain(db, q.SQL("OutboxClaim"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "IX_OutboxLease_LastId (LastId>?)") {
		t.Errorf("the lease check does not seek IX_OutboxLease_LastId: %q", plan)
	}
}
