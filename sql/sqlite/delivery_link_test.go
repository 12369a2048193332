package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// TestDeliverySchedulerIdLinks: a completion links each job it writes to the scheduler row
// with the job's SchedulerKey (migration 0025), in a single completion and in a batch: the
// completing row's own key, another existing row's key (found by key), and leaves SchedulerId
// NULL only for a key with no row when the job is written: an unknown key, or the key of a
// follow-up the same completion creates (follow-ups are ensured after the deliveries).
// Only those stay in the random-key index IX_NotificationJob_SchedulerKeyUnlinked; a job
// linked to the wrong row would vanish from SupportNotificationList.
func TestDeliverySchedulerIdLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := sqlitetest.Open(t)
	t0 := storetest.T0
	a, b, c, follow := storetest.Candidate(1, t0), storetest.Candidate(2, t0), storetest.Candidate(3, t0.Add(time.Hour)), storetest.Candidate(4, t0.Add(48*time.Hour))
	if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0, Candidates: []automation.Candidate{a, b, c}}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0, Lease: time.Minute, Limit: 2})
	if err != nil || len(rows) != 2 {
		t.Fatalf("claimed %d: %v", len(rows), err)
	}
	idOf := map[string]int64{}
	for _, k := range []string{a.SchedulerKey, b.SchedulerKey, c.SchedulerKey} {
		r, err := s.SchedulerGetByKey(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		idOf[k] = r.ID
	}
	req := func(dk, key string) store.NotificationRequest {
		return store.NotificationRequest{DeliveryKey: dk, SchedulerKey: key, BusinessUnitID: "bu-1", Channel: "log", Recipient: dk + "@example.test", Template: "t", PayloadJSON: "{}"}
	}
	byKey := map[int64]automation.SchedulerRow{rows[0].ID: rows[0], rows[1].ID: rows[1]}
	ra, rb := byKey[idOf[a.SchedulerKey]], byKey[idOf[b.SchedulerKey]]
	// A single completion of a, then a batch with b's.
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: ra.ID, Token: ra.Version, Now: t0,
		Deliveries: []store.NotificationRequest{req("a-own", a.SchedulerKey), req("a-c", c.SchedulerKey), req("a-none", "reminder:none"), req("a-follow", follow.SchedulerKey)},
		FollowUps:  []automation.Candidate{follow}}); err != nil {
		t.Fatal(err)
	}
	if errs, err := s.SchedulerCompleteBatch(ctx, []store.SchedulerCompleteParams{{ID: rb.ID, Token: rb.Version, Now: t0,
		Deliveries: []store.NotificationRequest{req("b-a", a.SchedulerKey), req("b-own", b.SchedulerKey), req("b-follow", follow.SchedulerKey)}}}); err != nil || errs[0] != nil {
		t.Fatalf("batch: %v %v", errs, err)
	}
	fr, err := s.SchedulerGetByKey(ctx, follow.SchedulerKey)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sql.NullInt64{
		"a-own": {Int64: idOf[a.SchedulerKey], Valid: true}, "a-c": {Int64: idOf[c.SchedulerKey], Valid: true}, "a-none": {}, "a-follow": {},
		"b-a": {Int64: idOf[a.SchedulerKey], Valid: true}, "b-own": {Int64: idOf[b.SchedulerKey], Valid: true}, "b-follow": {Int64: fr.ID, Valid: true},
	}
	for dk, w := range want {
		var got sql.NullInt64
		if err := s.DB().QueryRow(`SELECT SchedulerId FROM NotificationJob WHERE DeliveryKey = ?`, dk).Scan(&got); err != nil {
			t.Fatalf("%s: %v", dk, err)
		}
		if got != w {
			t.Errorf("job %s: SchedulerId %v, want %v", dk, got, w)
		}
	}
	jobs, err := s.SupportNotificationList(ctx, follow.SchedulerKey, 10)
	if err != nil || len(jobs) != 2 || jobs[0].DeliveryKey != "a-follow" || jobs[1].DeliveryKey != "b-follow" {
		t.Fatalf("jobs of the follow-up's key: %+v %v", jobs, err)
	}
}
