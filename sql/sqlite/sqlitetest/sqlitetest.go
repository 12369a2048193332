package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"

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
