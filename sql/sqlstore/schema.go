package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
)

// MigrateCommand is the command that applies the embedded migrations (functions/main.go).
// Schema errors name it so the log line says what to run.
const MigrateCommand = "automation migrate"

// ErrSchemaMismatch is the cause of every SchemaError: the database's migration version is
// not the highest one embedded in the binary.
var ErrSchemaMismatch = errors.New("database schema version does not match this binary")

// SchemaError reports a database whose goose version (Database; 0 = no migration applied,
// no goose_db_version table) differs from the highest migration embedded in the binary
// (Binary). Database < Binary: run MigrateCommand with a DDL-capable identity before this
// code serves. Database > Binary: the database was migrated by a newer release; deploy that
// release (forward-only migrations are never rolled back).
type SchemaError struct {
	Dialect  string // "sqlite" or "mssql"
	Database int64
	Binary   int64
}

// Error names both versions and what to do; it never contains a connection string.
func (e *SchemaError) Error() string {
	if e.Database > e.Binary {
		return fmt.Sprintf("%s: database schema version %d is newer than this binary's %d: deploy the release that carries migration %d (migrations are forward-only)",
			e.Dialect, e.Database, e.Binary, e.Database)
	}
	return fmt.Sprintf("%s: database schema version %d, this binary expects %d: run `%s` with a DDL-capable identity (db_ddladmin or the Entra admin) before deploying this code",
		e.Dialect, e.Database, e.Binary, MigrateCommand)
}

// Unwrap makes errors.Is(err, ErrSchemaMismatch) hold.
func (e *SchemaError) Unwrap() error { return ErrSchemaMismatch }

// migrationFileRE is goose's SQL file name: a numeric version, an underscore, a name.
var migrationFileRE = regexp.MustCompile(`^([0-9]+)_[^/]*\.sql$`)

// MaxMigration returns the highest goose version among the *.sql files at the root of
// migrations (file names "0007_name.sql" → 7). It errors when there is none or the folder
// cannot be read.
func MaxMigration(migrations fs.FS) (int64, error) {
	entries, err := fs.ReadDir(migrations, ".")
	if err != nil {
		return 0, fmt.Errorf("sqlstore: migrations: %w", err)
	}
	var max int64 = -1
	for _, e := range entries {
		m := migrationFileRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("sqlstore: migration %s: %w", e.Name(), err)
		}
		if v > max {
			max = v
		}
	}
	if max < 0 {
		return 0, errors.New("sqlstore: no migrations embedded")
	}
	return max, nil
}

// VersionQueries are a dialect's two read-only queries over goose's version table
// (goose_db_version): TableExists returns one row whose first column is non-zero when the
// table exists; MaxVersion returns MAX(version_id). Neither writes, so an identity with
// read access only (db_datareader) can run them.
type VersionQueries struct {
	TableExists string
	MaxVersion  string
}

// DatabaseVersion returns the database's goose version: 0 when the version table does not
// exist or holds no row, else its highest version_id. Errors are the driver's (an
// unreachable server, a login failure, no read permission).
func DatabaseVersion(ctx context.Context, db *sql.DB, q VersionQueries) (int64, error) {
	var exists int64
	if err := db.QueryRowContext(ctx, q.TableExists).Scan(&exists); err != nil {
		return 0, fmt.Errorf("sqlstore: schema version: %w", err)
	}
	if exists == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, q.MaxVersion).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlstore: schema version: %w", err)
	}
	return v.Int64, nil
}

// CheckSchema compares the database's goose version (DatabaseVersion) with the highest
// migration in migrations (MaxMigration). It returns nil when they are equal, a
// *SchemaError (errors.Is ErrSchemaMismatch) when they differ, and the read error
// otherwise. It never migrates.
func CheckSchema(ctx context.Context, db *sql.DB, dialect string, q VersionQueries, migrations fs.FS) error {
	want, err := MaxMigration(migrations)
	if err != nil {
		return err
	}
	have, err := DatabaseVersion(ctx, db, q)
	if err != nil {
		return err
	}
	if have != want {
		return &SchemaError{Dialect: dialect, Database: have, Binary: want}
	}
	return nil
}
