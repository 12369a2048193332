package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestOutboxMarkRewritesARowInPlace: marking a large outbox row (an envelope in a chain of
// overflow pages) writes the pages whose bytes changed, not the whole chain again
// (migration 0030, MarkReserve). It counts the WAL frames of the mark's transaction: a row
// that carries no MarkReserve (written before the migration) is rewritten in full, as
// every row was before.
func TestOutboxMarkRewritesARowInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := migratedDB(t, "sqlite", "file:"+filepath.Join(t.TempDir(), "mark.db")+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	const now = int64(1_790_000_000_000)               // 2026-09-21, Unix ms
	body := bytes.Repeat([]byte(`{"fact":"x"}`), 3500) // 42 KB: about ten overflow pages
	markFrames := func(id string, reserve bool) int {
		t.Helper()
		if _, err := db.ExecContext(ctx, q.SQL("OutboxInsert"), sql.Named("MessageId", id), sql.Named("Destination", "delivery-facts"),
			sql.Named("SessionId", nil), sql.Named("Body", body), sql.Named("Envelope", 1), sql.Named("Now", now),
			sql.Named("TraceParent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")); err != nil {
			t.Fatal(err)
		}
		if !reserve {
			if _, err := db.ExecContext(ctx, "UPDATE Outbox SET MarkReserve = NULL WHERE MessageId = ?", id); err != nil {
				t.Fatal(err)
			}
		}
		var rowID int64
		if err := db.QueryRowContext(ctx, "SELECT Id FROM Outbox WHERE MessageId = ?", id).Scan(&rowID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, q.SQL("OutboxMarkPublished"), sql.Named("Id", rowID), sql.Named("Now", now+5)); err != nil {
			t.Fatal(err)
		}
		var busy, frames, done int
		if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done); err != nil {
			t.Fatal(err)
		}
		var published, left sql.NullInt64
		if err := db.QueryRowContext(ctx, "SELECT PublishedOn, MarkReserve FROM Outbox WHERE Id = ?", rowID).Scan(&published, &left); err != nil {
			t.Fatal(err)
		}
		if published.Int64 != now+5 || left.Valid {
			t.Fatalf("after the mark: PublishedOn %v, MarkReserve %v; want %d and NULL", published, left, now+5)
		}
		return frames
	}
	inPlace, full := markFrames("envelope:a+99", true), markFrames("envelope:b+99", false)
	// In place: the table leaf, the last overflow page (the columns after Body) and the
	// three outbox indexes the mark moves the row in or out of.
	if inPlace > 6 || full-inPlace < 8 {
		t.Fatalf("the mark wrote %d pages in place and %d rewriting the row; want at most 6, and the ten overflow pages more rewriting it", inPlace, full)
	}
	t.Logf("mark of a 42 KB row: %d pages written in place, %d rewritten in full", inPlace, full)
}
