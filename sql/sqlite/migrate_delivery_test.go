package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
)

// Migration 0004 rebuilds NotificationJob (SQLite cannot alter its CHECK constraint): the
// rows written before it must survive with their Id, EffectKey = DeliveryKey and the UTC
// date of CreatedOn as LocalDate.
func TestDeliveryMigrationKeepsExistingJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sqlite.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	created := storetest.T0.Add(-72 * time.Hour)
	if _, err := db.Exec(`INSERT INTO NotificationJob (Id, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, Status, AttemptCount, Version, CreatedOn, UpdatedOn)
		VALUES (42, 'dlv_old', 'reminder:k', 'bu-1', 'log', 'a@example.test', 't', '{}', 'Queued', 0, 1, ?, ?)`, created.UnixMilli(), created.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
