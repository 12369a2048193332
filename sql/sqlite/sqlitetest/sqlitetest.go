package sqlitetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/automation-platform/automation/shared/trace/localtrace"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// Open opens a new migrated store in a fresh file of t.TempDir() with the default options.
func Open(t testing.TB) *sqlstore.Store {
	t.Helper()
	return OpenAt(t, filepath.Join(t.TempDir(), "test.db"), nil)
}

// OpenAt opens the store at path (created when missing, migrated unless opts.SkipMigrations)
// with opts (nil: defaults), failing t on an error; it is closed when t ends.
func OpenAt(t testing.TB, path string, opts *sqlite.Options) *sqlstore.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// OpenTrace opens the local trace store (shared/trace/localtrace) in dir/trace, beside a
// store OpenAt opened in dir as the embedded runtime lays them out, failing t on an error;
// it is closed when t ends.
func OpenTrace(t testing.TB, dir string) *localtrace.Store {
	t.Helper()
	tr, err := localtrace.Open(filepath.Join(dir, "trace"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// AtMigration opens the SQLite file at path (created when missing) as a plain database/sql
// pool, with the embedded migrations applied up to version (a database as an older binary
// left it; version 0 or less applies none: an empty file). It is closed when t ends, or
// before by the caller (the store that opens the file next wants it closed); an error fails t.
func AtMigration(t testing.TB, path string, version int64) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if version <= 0 {
		return db
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sqlite.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db
}
