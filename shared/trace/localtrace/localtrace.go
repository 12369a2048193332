package localtrace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // "sqlite" driver

	"github.com/automation-platform/automation/shared/trace"
)

// Store keeps trace rows in dir/trace.db and blobs under dir/blobs/.
type Store struct {
	db  *sql.DB
	dir string
	// full is the jobsPerInsert-row INSERT, prepared once: a 1000-row batch's trace parses
	// no SQL (a shorter last chunk is built and parsed for its use).
	full *sql.Stmt
}

var (
	_ trace.Store       = (*Store)(nil)
	_ trace.BatchWriter = (*Store)(nil)
)

// schemaVersion is the trace database's layout, kept in PRAGMA user_version: 0 is a new
// file, or one written before versions (1's layout); 2 is schema below.
const schemaVersion = 2

// schema is version 2. A trace row's identity is (RowGuid, Attempt, Version) (trace.Writer):
// a row's RowGuid always comes with the same SchedulerKey (a scheduler row's Guid and key
// never change; a dead-letter record's RowGuid and key are both made from its function and
// message id), so the one unique index on (SchedulerKey, RowGuid, Attempt, Version) keeps
// that identity, and it is the index JobsByKey seeks. Version 1 had that identity as the
// table's PRIMARY KEY beside an index on (SchedulerKey, StartedOn): two indexes whose keys
// arrive in no useful order, where each of a 1000-row batch's inserts dirties a leaf page of
// its own (docs/performance.md, "One random-key index in the trace").
const schema = `
CREATE TABLE IF NOT EXISTS AutomationJob (
    RowGuid TEXT NOT NULL, Attempt INTEGER NOT NULL, Version INTEGER NOT NULL,
    SchedulerKey TEXT NOT NULL, RowId INTEGER NOT NULL, BusinessUnitId TEXT NOT NULL,
    AutomationType TEXT NOT NULL, Outcome TEXT NOT NULL, ReasonCode TEXT NOT NULL,
    ErrorCode TEXT NOT NULL, Message TEXT NOT NULL, StartedOn INTEGER NOT NULL,
    FinishedOn INTEGER NOT NULL, UtcDay TEXT NOT NULL, TraceBlobName TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS UX_AutomationJob_Key ON AutomationJob (SchedulerKey, RowGuid, Attempt, Version);
CREATE INDEX IF NOT EXISTS IX_AutomationJob_BuDay ON AutomationJob (BusinessUnitId, UtcDay, StartedOn);`

// columns are AutomationJob's columns in both versions, in order.
const columns = `RowGuid, Attempt, Version, SchedulerKey, RowId, BusinessUnitId, AutomationType, Outcome,
         ReasonCode, ErrorCode, Message, StartedOn, FinishedOn, UtcDay, TraceBlobName`

// migrate brings the database to schemaVersion in one transaction that holds the write lock
// from its start, so two processes opening one directory migrate it once: a new file gets
// schema; a version-1 table (by user_version or by its primary key) is copied, every row,
// into a version-2 one that replaces it; a version-1 key index on a version-2 table is
// dropped.
// Errors: a version newer than schemaVersion (a later build wrote it), or SQLite's.
func migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Another process may be migrating a large file (about 7 µs per row: a million rows take
	// longer than busyTimeout): wait up to migrateBusyTimeout for its lock, then give the
	// connection back to the pool with the usual bound.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", migrateBusyTimeout.Milliseconds())); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	var version, tables int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > schemaVersion {
		return fmt.Errorf("trace.db is at schema version %d; this build knows up to %d", version, schemaVersion)
	}
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'AutomationJob'").Scan(&tables); err != nil {
		return err
	}
	// The layout, not only user_version, says whether the table is version 1: a file marked
	// 2 can still hold a primary-key table (an old file whose mark was set by hand).
	var keyed int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_table_info('AutomationJob') WHERE pk > 0").Scan(&keyed); err != nil {
		return err
	}
	// An older build that reopens a version-2 file adds its key index back
	// (IX_AutomationJob_Key on (SchedulerKey, StartedOn)): dropped again here, or every
	// write would keep paying for a second random-key index.
	steps := []string{"DROP INDEX IF EXISTS IX_AutomationJob_Key", schema}
	if tables == 1 && (version < schemaVersion || keyed > 0) {
		steps = []string{
			"ALTER TABLE AutomationJob RENAME TO AutomationJob_v1",
			"DROP INDEX IF EXISTS IX_AutomationJob_Key",
			"DROP INDEX IF EXISTS IX_AutomationJob_BuDay",
			schema,
			"INSERT INTO AutomationJob (" + columns + ") SELECT " + columns + " FROM AutomationJob_v1",
			"DROP TABLE AutomationJob_v1",
		}
	}
	steps = append(steps, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
	for _, q := range steps {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	done = true
	return nil
}

// busyTimeout is how long a statement waits for another connection's lock (SQLite's
// busy_timeout, set on every connection); migrateBusyTimeout is the migration's wait for
// another process's migration, which can hold the lock far longer.
const (
	busyTimeout        = 10 * time.Second
	migrateBusyTimeout = 10 * time.Minute
)

// Open opens (creating) the local trace store under dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return nil, fmt.Errorf("localtrace: %w", err)
	}
	// wal_autocheckpoint 10,000 pages (40 MB of log; SQLite's default is 1,000): a 1000-row
	// batch dirties leaf pages all over the key index (two random-key indexes before schema
	// version 2), and a checkpoint every 1,000 pages wrote most of them into the file again
	// for every batch. W1 at 100,000 rows: 160 -> 135-141 CPU-µs per row for the whole process
	// (docs/performance.md, "Checkpoints with a rest between them").
	// cache_size 256 KiB per connection (SQLite's default is 2 MiB): the page caches of all
	// the process's connections, the store's included, are one cache bounded by the sum of
	// their sizes, about 2.1 times that in memory (sql/sqlite.DefaultCacheKiB); four
	// connections at 2 MiB would add 8 MiB to it.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "trace.db")+"?_pragma=busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(10000)&_pragma=cache_size(-"+strconv.Itoa(cacheKiB)+")")
	if err != nil {
		return nil, fmt.Errorf("localtrace: %w", err)
	}
	db.SetMaxOpenConns(4)
	if err := migrate(context.Background(), db); err != nil {
		db.Close()
		return nil, fmt.Errorf("localtrace: schema: %w", err)
	}
	full, err := db.Prepare(insertJobs(jobsPerInsert))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("localtrace: prepare: %w", err)
	}
	return &Store{db: db, dir: dir, full: full}, nil
}

// cacheKiB is each connection's page cache, in KiB (Open).
const cacheKiB = 256

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.full.Close(), s.db.Close()) }

// insertJobs is insertJob for n rows.
func insertJobs(n int) string {
	return insertJob + strings.Repeat(",(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", n-1)
}

// insertJob replaces the row of the same identity (UX_AutomationJob_Key).
const insertJob = `INSERT OR REPLACE INTO AutomationJob (` + columns + `)
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

func jobArgs(r trace.JobRecord) []any {
	return []any{r.RowGuid, r.Attempt, r.Version, r.SchedulerKey, r.RowID, r.BusinessUnitID, r.AutomationType,
		string(r.Outcome), r.ReasonCode, r.ErrorCode, r.Message, r.StartedOn.UTC().UnixMilli(),
		r.FinishedOn.UTC().UnixMilli(), r.StartedOn.UTC().Format("2006-01-02"), r.TraceBlobName}
}

// WriteJob implements trace.Writer.
func (s *Store) WriteJob(ctx context.Context, r trace.JobRecord) error {
	return s.WriteJobs(ctx, []trace.JobRecord{r})
}

// jobsPerInsert bounds the rows of one multi-row INSERT (15 parameters each, under SQLite's
// 32,766-parameter bound): a poller batch (at most store.MaxBatch, 1000 rows) is one statement.
const jobsPerInsert = 1000

// WriteJobs implements trace.BatchWriter: all records atomically, written by multi-row
// INSERTs of up to jobsPerInsert rows (docs/performance.md, "Pipelined trace write"). Up to
// jobsPerInsert records are one statement in its own transaction: SQLite then keeps no
// statement journal (the copy of every page a multi-row statement touches that it keeps
// inside a larger transaction, since INSERT OR REPLACE can still abort on a NOT NULL
// column); more records are several statements in one transaction.
func (s *Store) WriteJobs(ctx context.Context, recs []trace.JobRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if len(recs) <= jobsPerInsert {
		return s.writeChunk(ctx, nil, recs)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("localtrace: write jobs: %w", err)
	}
	defer tx.Rollback()
	for start := 0; start < len(recs); start += jobsPerInsert {
		if err := s.writeChunk(ctx, tx, recs[start:min(start+jobsPerInsert, len(recs))]); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("localtrace: write jobs: %w", err)
	}
	return nil
}

// writeChunk writes up to jobsPerInsert records in one statement: inside tx, or in a
// transaction of its own when tx is nil. A full chunk uses the prepared statement.
func (s *Store) writeChunk(ctx context.Context, tx *sql.Tx, chunk []trace.JobRecord) error {
	args := make([]any, 0, 15*len(chunk))
	for _, r := range chunk {
		args = append(args, jobArgs(r)...)
	}
	var err error
	switch {
	case len(chunk) == jobsPerInsert && tx != nil:
		_, err = tx.StmtContext(ctx, s.full).ExecContext(ctx, args...)
	case len(chunk) == jobsPerInsert:
		_, err = s.full.ExecContext(ctx, args...)
	case tx != nil:
		_, err = tx.ExecContext(ctx, insertJobs(len(chunk)), args...)
	default:
		_, err = s.db.ExecContext(ctx, insertJobs(len(chunk)), args...)
	}
	if err != nil {
		return fmt.Errorf("localtrace: write jobs: %w", err)
	}
	return nil
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]trace.JobRecord, error) {
	rs, err := s.db.QueryContext(ctx, `SELECT RowGuid, Attempt, Version, SchedulerKey, RowId, BusinessUnitId,
        AutomationType, Outcome, ReasonCode, ErrorCode, Message, StartedOn, FinishedOn, TraceBlobName
        FROM AutomationJob `+q, args...)
	if err != nil {
		return nil, fmt.Errorf("localtrace: %w", err)
	}
	defer rs.Close()
	var out []trace.JobRecord
	for rs.Next() {
		var r trace.JobRecord
		var outcome string
		var started, finished int64
		if err := rs.Scan(&r.RowGuid, &r.Attempt, &r.Version, &r.SchedulerKey, &r.RowID, &r.BusinessUnitID,
			&r.AutomationType, &outcome, &r.ReasonCode, &r.ErrorCode, &r.Message, &started, &finished, &r.TraceBlobName); err != nil {
			return nil, err
		}
		r.Outcome = trace.Outcome(outcome)
		r.StartedOn, r.FinishedOn = time.UnixMilli(started).UTC(), time.UnixMilli(finished).UTC()
		out = append(out, r)
	}
	return out, rs.Err()
}

// The two reads' conditions: byKey seeks UX_AutomationJob_Key and sorts a key's few rows,
// byBuDay seeks IX_AutomationJob_BuDay in StartedOn order.
const (
	byKey   = `WHERE SchedulerKey = ? ORDER BY StartedOn, Attempt, Version`
	byBuDay = `WHERE BusinessUnitId = ? AND UtcDay = ? ORDER BY StartedOn, RowGuid, Attempt LIMIT ?`
)

// JobsByKey implements trace.Reader.
func (s *Store) JobsByKey(ctx context.Context, key string) ([]trace.JobRecord, error) {
	return s.query(ctx, byKey, key)
}

// JobsByBusinessUnitDay implements trace.Reader.
func (s *Store) JobsByBusinessUnitDay(ctx context.Context, bu, day string, limit int) ([]trace.JobRecord, error) {
	if _, err := time.Parse("2006-01-02", day); err != nil {
		return nil, fmt.Errorf("localtrace: day %q is not YYYY-MM-DD", day)
	}
	if limit <= 0 || limit > 1000 {
		return nil, fmt.Errorf("localtrace: limit %d outside 1..1000", limit)
	}
	return s.query(ctx, byBuDay, bu, day, limit)
}

func (s *Store) blobPath(name string) (string, error) {
	clean := filepath.ToSlash(filepath.Clean(name))
	if name == "" || name == "." || clean != name || strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, "..") || strings.Contains(clean, "/../") {
		return "", fmt.Errorf("localtrace: invalid blob name %q", name)
	}
	return filepath.Join(s.dir, "blobs", filepath.FromSlash(clean)), nil
}

// PutBlob implements trace.Writer (write to a temp file of its own, then rename: no torn
// blobs, and concurrent writers of one name do not share a temp file).
func (s *Store) PutBlob(_ context.Context, name string, data []byte) error {
	p, err := s.blobPath(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("localtrace: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return fmt.Errorf("localtrace: %w", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("localtrace: put blob %q: %w", name, werr)
	}
	return nil
}

// GetBlob implements trace.Reader.
func (s *Store) GetBlob(_ context.Context, name string) ([]byte, error) {
	p, err := s.blobPath(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, trace.ErrBlobNotFound
	}
	if err != nil {
		// A name that is only a prefix of other blobs (a directory here) is not a blob.
		if fi, serr := os.Stat(p); serr == nil && fi.IsDir() {
			return nil, trace.ErrBlobNotFound
		}
		return nil, fmt.Errorf("localtrace: get blob %q: %w", name, err)
	}
	return b, nil
}
