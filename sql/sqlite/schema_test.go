package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/automation-platform/automation/sql/mssql"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// The custom handler opens with SkipMigrations: a database at the binary's version opens,
// any other is refused with a SchemaError naming both versions and the migrate command, and
// nothing is migrated (the database keeps its version).
func TestSkipMigrationsChecksTheSchemaVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want, err := sqlstore.MaxMigration(sqlite.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	dbAt := func(t *testing.T, version int64, extra string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "a.db")
		db := sqlitetest.AtMigration(t, path, version)
		defer db.Close()
		if extra != "" {
			if _, err := db.Exec(extra); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	cases := []struct {
		name     string
		path     string
		have     int64
		inErr    []string
		ok       bool
		keptHave int64
	}{
		{"current", dbAt(t, want, ""), want, nil, true, want},
		{"older", dbAt(t, 3, ""), 3, []string{"version 3", fmt.Sprintf("expects %d", want), "`automation migrate`", "db_ddladmin"}, false, 3},
		{"empty file", dbAt(t, -1, ""), 0, []string{"version 0", "`automation migrate`"}, false, 0},
		{"newer", dbAt(t, want, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, 1)`), 99,
			[]string{"version 99 is newer", fmt.Sprintf("binary's %d", want), "deploy the release"}, false, 99},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := sqlite.Open(ctx, tc.path, &sqlite.Options{SkipMigrations: true})
			if tc.ok {
				if err != nil {
					t.Fatalf("open at the binary's version: %v", err)
				}
				st.Close()
			} else {
				var se *sqlstore.SchemaError
				if !errors.As(err, &se) || !errors.Is(err, sqlstore.ErrSchemaMismatch) || se.Database != tc.have || se.Binary != want {
					t.Fatalf("err = %v (%T), want SchemaError{%d, %d}", err, err, tc.have, want)
				}
				for _, s := range tc.inErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
			}
			db, err := sql.Open("sqlite", "file:"+tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got, err := sqlstore.DatabaseVersion(ctx, db, sqlite.VersionQueries)
			if err != nil || got != tc.keptHave {
				t.Fatalf("after the check the database is at %d (%v), want %d: SkipMigrations must not migrate", got, err, tc.keptHave)
			}
		})
	}
}

// Both dialects embed the same highest migration, so one binary expects one version.
func TestBothDialectsExpectTheSameVersion(t *testing.T) {
	t.Parallel()
	a, err := sqlstore.MaxMigration(sqlite.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	b, err := sqlstore.MaxMigration(mssql.Migrations())
	if err != nil || a != b || a < 1 {
		t.Fatalf("sqlite expects %d, mssql %d (%v)", a, b, err)
	}
}

func TestMaxMigration(t *testing.T) {
	t.Parallel()
	got, err := sqlstore.MaxMigration(fstest.MapFS{"0002_b.sql": {}, "0010_c.sql": {}, "0009_a.sql": {}, "README.md": {}, "x.sql": {}})
	if err != nil || got != 10 {
		t.Fatalf("got %d %v", got, err)
	}
	if _, err := sqlstore.MaxMigration(fstest.MapFS{"README.md": {}}); err == nil {
		t.Fatal("no migrations accepted")
	}
}
