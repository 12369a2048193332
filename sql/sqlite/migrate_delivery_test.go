package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// Migration 0004 rebuilds NotificationJob (SQLite cannot alter its CHECK constraint): the
// rows written before it must survive with their Id, EffectKey = DeliveryKey and the UTC
// date of CreatedOn as LocalDate.
func TestDeliveryMigrationKeepsExistingJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := upgradeFrom(t, 3, func(db *sql.DB) {
		created := storetest.T0.Add(-72 * time.Hour)
		if _, err := db.Exec(`INSERT INTO NotificationJob (Id, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, Status, AttemptCount, Version, CreatedOn, UpdatedOn)
		VALUES (42, 'dlv_old', 'reminder:k', 'bu-1', 'log', 'a@example.test', 't', '{}', 'Queued', 0, 1, ?, ?)`, created.UnixMilli(), created.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	})
	j, err := s.NotificationGetByKey(ctx, "dlv_old")
	if err != nil || j.ID != 42 || j.EffectKey != "dlv_old" || j.LocalDate != "2026-09-28" || j.Revision != 1 || j.Status != store.NotificationQueued {
		t.Fatalf("migrated job: %+v %v", j, err)
	}
	if _, err := s.DB().Exec(`UPDATE NotificationJob SET Status = 'Unknown' WHERE Id = 42`); err != nil {
		t.Fatalf("Unknown must be allowed: %v", err)
	}
	if _, err := s.DB().Exec(`UPDATE NotificationJob SET Status = 'Lost' WHERE Id = 42`); err == nil {
		t.Fatal("the status CHECK constraint is gone")
	}
}

// Migration 0025 rebuilds NotificationJob again (SQLite cannot drop its (BusinessUnitId,
// EffectKey) UNIQUE constraint): every job keeps its Id and the table its AUTOINCREMENT
// sequence, a job is linked to the scheduler row with its SchedulerKey (or left unlinked
// when there is none), and a job whose effect is another key is still unique per unit.
func TestFewerRandomKeysMigrationKeepsJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := upgradeFrom(t, 22, func(db *sql.DB) {
		now := storetest.T0.UnixMilli()
		exec := func(db *sql.DB, q string, args ...any) {
			t.Helper()
			if _, err := db.Exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec(db, `INSERT INTO AutomationScheduler (Id, Guid, AutomationType, TriggerType, SchedulerKey, SourceEntityType, SourceEntityGuid,
		BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, InputHash, CreatedOn, UpdatedOn)
		VALUES (5, 'g-5', 'Reminder', 'DateBased', 'reminder:linked', 'PoliceVetting', 'src-1', 'bu-1', ?, '2026-10-01', '09:00', 'UTC', 'Completed', 'h', ?, ?)`, now, now, now)
		job := func(id int, dk, effect, key string) {
			t.Helper()
			exec(db, `INSERT INTO NotificationJob (Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson,
			LocalDate, Status, CreatedOn, UpdatedOn) VALUES (?, ?, ?, ?, 'bu-1', 'log', 'a@example.test', 't', '{}', '2026-10-01', 'Sent', ?, ?)`,
				id, dk, effect, key, now, now)
		}
		job(7, "dlv_linked", "dlv_linked", "reminder:linked")
		job(9, "dlv_unlinked", "dlv_unlinked", "reminder:none")
		job(12, "dlv_effect", "effect-e", "reminder:linked")
		// Ids up to 100 were handed out before (the rows are gone from this copy).
		exec(db, `UPDATE sqlite_sequence SET seq = 100 WHERE name = 'NotificationJob'`)
	})
	for dk, id := range map[string]int64{"dlv_linked": 7, "dlv_unlinked": 9, "dlv_effect": 12} {
		if j, err := s.NotificationGetByKey(ctx, dk); err != nil || j.ID != id {
			t.Fatalf("job %s: %+v %v", dk, j, err)
		}
	}
	var linked, unlinked sql.NullInt64
	if err := s.DB().QueryRow(`SELECT (SELECT SchedulerId FROM NotificationJob WHERE Id = 7), (SELECT SchedulerId FROM NotificationJob WHERE Id = 9)`).Scan(&linked, &unlinked); err != nil {
		t.Fatal(err)
	}
	if !linked.Valid || linked.Int64 != 5 || unlinked.Valid {
		t.Fatalf("SchedulerId of job 7: %v (want 5), of job 9: %v (want NULL)", linked, unlinked)
	}
	for key, want := range map[string][]string{"reminder:linked": {"dlv_linked", "dlv_effect"}, "reminder:none": {"dlv_unlinked"}} {
		jobs, err := s.SupportNotificationList(ctx, key, 10)
		if err != nil || len(jobs) != len(want) {
			t.Fatalf("jobs of %s: %+v %v", key, jobs, err)
		}
		for i, j := range jobs {
			if j.DeliveryKey != want[i] {
				t.Fatalf("jobs of %s: %s at %d, want %s", key, j.DeliveryKey, i, want[i])
			}
		}
	}
	res, err := s.DB().Exec(`INSERT INTO NotificationJob (DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson,
		LocalDate, Status, CreatedOn, UpdatedOn) VALUES ('dlv_new', 'dlv_new', 'reminder:x', 'bu-1', 'log', 'a@example.test', 't', '{}', '2026-10-01', 'Queued', 1, 1)`)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 101 {
		t.Fatalf("new job's Id %d, want 101 (the sequence was not kept)", id)
	}
	if _, err := s.DB().Exec(`INSERT INTO NotificationJob (DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson,
		LocalDate, Status, CreatedOn, UpdatedOn) VALUES ('dlv_other', 'effect-e', 'reminder:x', 'bu-1', 'log', 'a@example.test', 't', '{}', '2026-10-01', 'Queued', 1, 1)`); err == nil {
		t.Fatal("a second job for effect-e in bu-1 was accepted")
	}
}

// Jobs written before migration 0025 keep their effects: after it, the store's completions
// (SchedulerCompleteBatch) write no second job for an effect that a migrated job holds, in
// each of the shapes the partial index and the inserts' checks cover, while an effect that
// is free (the same key in another unit, or a key that is only another job's DeliveryKey
// where that job's effect is a third key) still gets its job. The migrated table keeps every
// index of the table before except the two migration 0025 replaces, and passes SQLite's
// integrity check.
func TestFewerRandomKeysMigrationKeepsEffects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var before map[string]string
	s := upgradeFrom(t, 22, func(db *sql.DB) {
		before = indexSQL(t, db, "NotificationJob")
		now := storetest.T0.UnixMilli()
		job := func(dk, effect, bu string) {
			t.Helper()
			if _, err := db.Exec(`INSERT INTO NotificationJob (DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson,
			LocalDate, Status, CreatedOn, UpdatedOn) VALUES (?, ?, 'reminder:old', ?, 'log', 'old@example.test', 't', '{}', '2026-10-01', 'Sent', ?, ?)`,
				dk, effect, bu, now, now); err != nil {
				t.Fatal(err)
			}
		}
		job("old-a", "old-a", "bu-1")    // its own effect
		job("old-b", "effect-c", "bu-1") // another key's effect
		job("old-d", "old-a", "bu-2")    // old-a's key as the effect of another unit
	})
	after := indexSQL(t, s.DB(), "NotificationJob")
	for name, text := range before {
		if name == "IX_NotificationJob_SchedulerKey" || name == "sqlite_autoindex_NotificationJob_2" {
			continue
		}
		if name == "IX_NotificationJob_Updated" { // partial since migration 0029, with the channel since 0064
			text = strings.Replace(text, "(UpdatedOn, Status, BusinessUnitId)", "(UpdatedOn, Status, BusinessUnitId, Channel)\n    WHERE Status IN ('Sent', 'Failed', 'Unknown')", 1)
		}
		if got, ok := after[name]; !ok || got != text {
			t.Errorf("index %s: %q (present %v) after migration 0025, was %q", name, got, ok, text)
		}
	}
	var check string
	if err := s.DB().QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}

	want := map[string]bool{
		"new-1":    false, // bu-1 effect old-a: old-a's own effect
		"old-c":    false, // bu-1 effect effect-c: old-b's
		"effect-c": false, // key effect-c as its own effect: old-b's effect
		"new-2":    false, // bu-2 effect old-a: old-d's
		"new-3":    true,  // bu-2 effect old-b: old-b is a key of bu-1 only
		"new-4":    true,  // bu-1 effect old-d: old-d's effect is old-a, so old-d as an effect is free
		"new-5":    true,  // bu-2 effect old-d: likewise in old-d's own unit
	}
	reqs := []store.NotificationRequest{
		{DeliveryKey: "new-1", EffectKey: "old-a", BusinessUnitID: "bu-1"},
		{DeliveryKey: "old-c", EffectKey: "effect-c", BusinessUnitID: "bu-1"},
		{DeliveryKey: "effect-c", BusinessUnitID: "bu-1"},
		{DeliveryKey: "new-2", EffectKey: "old-a", BusinessUnitID: "bu-2"},
		{DeliveryKey: "new-3", EffectKey: "old-b", BusinessUnitID: "bu-2"},
		{DeliveryKey: "new-4", EffectKey: "old-d", BusinessUnitID: "bu-1"},
		{DeliveryKey: "new-5", EffectKey: "old-d", BusinessUnitID: "bu-2"},
	}
	n := len(reqs)
	cands := make([]automation.Candidate, n)
	for i := range cands {
		cands[i] = storetest.Candidate(i, storetest.T0)
	}
	if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: storetest.T0, Candidates: cands}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: storetest.T0, Lease: time.Minute, Limit: n})
	if err != nil || len(rows) != n {
		t.Fatalf("claimed %d: %v", len(rows), err)
	}
	// Half in single completions, half in one batch.
	var batch []store.SchedulerCompleteParams
	for i, d := range reqs {
		d.SchedulerKey, d.Channel, d.Recipient, d.Template, d.PayloadJSON = rows[i].SchedulerKey, "log", "new@example.test", "t", "{}"
		item := store.SchedulerCompleteParams{ID: rows[i].ID, Token: rows[i].Version, Now: storetest.T0, Deliveries: []store.NotificationRequest{d}}
		if i%2 == 0 {
			if err := s.SchedulerComplete(ctx, item); err != nil {
				t.Fatal(err)
			}
			continue
		}
		batch = append(batch, item)
	}
	if errs, err := s.SchedulerCompleteBatch(ctx, batch); err != nil || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatalf("batch: %v %v", errs, err)
	}
	for dk, written := range want {
		_, err := s.NotificationGetByKey(ctx, dk)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		if (err == nil) != written {
			t.Errorf("job %s written: %v, want %v", dk, err == nil, written)
		}
	}
}

// Migration 0026 rebuilds Outbox without the column UNIQUE on MessageId: every row, its Id
// and the AUTOINCREMENT sequence are kept, and every message but a delivery fact still has
// a unique MessageId (UX_Outbox_MessageId).
func TestOutboxFactsMigrationKeepsMessages(t *testing.T) {
	t.Parallel()
	s := upgradeFrom(t, 25, seedRows(t,
		`INSERT INTO Outbox (Id, MessageId, Destination, Body, CreatedOn) VALUES (3, 'dlv_a', 'notification-dispatch', x'7b7d', 1)`,
		`INSERT INTO Outbox (Id, MessageId, Destination, Body, CreatedOn, PublishedOn, Attempts, LeaseUntil, ClaimToken, RetryAt) VALUES (8, 'dlv_a:r2', 'delivery-facts', x'00ff', 2, 5, 1, 6, 'tok', 7)`,
		`UPDATE sqlite_sequence SET seq = 50 WHERE name = 'Outbox'`))
	var id, published, attempts, lease, retry int64
	var dest, token string
	var body []byte
	if err := s.DB().QueryRow(`SELECT Id, Destination, Body, PublishedOn, Attempts, LeaseUntil, ClaimToken, RetryAt FROM Outbox WHERE MessageId = 'dlv_a:r2'`).
		Scan(&id, &dest, &body, &published, &attempts, &lease, &token, &retry); err != nil {
		t.Fatal(err)
	}
	if id != 8 || dest != "delivery-facts" || string(body) != "\x00\xff" || published != 5 || attempts != 1 || lease != 6 || token != "tok" || retry != 7 {
		t.Fatalf("migrated fact: %d %s %x %d %d %d %s %d", id, dest, body, published, attempts, lease, token, retry)
	}
	res, err := s.DB().Exec(`INSERT INTO Outbox (MessageId, Destination, Body, CreatedOn) VALUES ('m-new', 'q', x'00', 9)`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.LastInsertId(); n != 51 {
		t.Fatalf("new message's Id %d, want 51 (the sequence was not kept)", n)
	}
	if _, err := s.DB().Exec(`INSERT OR IGNORE INTO Outbox (MessageId, Destination, Body, CreatedOn) VALUES ('dlv_a', 'notification-dispatch', x'00', 9)`); err != nil {
		t.Fatal(err)
	}
	var copies int
	if err := s.DB().QueryRow(`SELECT COUNT(*) FROM Outbox WHERE MessageId = 'dlv_a'`).Scan(&copies); err != nil || copies != 1 {
		t.Fatalf("dispatch message dlv_a: %d rows (%v), want 1", copies, err)
	}
	if _, err := s.DB().Exec(`INSERT INTO Outbox (MessageId, Destination, Body, CreatedOn) VALUES ('m-new', 'q2', x'00', 9)`); err == nil {
		t.Fatal("a second message m-new was accepted")
	}
}

// upgradeFrom builds a store file as an older binary left it: the embedded migrations applied
// up to version, then seed writing its rows through db, a plain connection to that schema.
// It then opens the store on the file, which runs every migration after version, and
// returns it (closed when t ends). Any error fails t.
func upgradeFrom(t *testing.T, version int64, seed func(db *sql.DB)) *sqlstore.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "upgrade.db")
	db := sqlitetest.AtMigration(t, path, version)
	seed(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return sqlitetest.OpenAt(t, path, nil)
}

// seedRows is a seed for upgradeFrom that runs each statement in turn, failing t on the
// first error (naming the statement).
func seedRows(t *testing.T, stmts ...string) func(db *sql.DB) {
	return func(db *sql.DB) {
		t.Helper()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}
