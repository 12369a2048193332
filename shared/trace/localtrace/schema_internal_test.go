package localtrace

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/trace"
)

// schemaV1 is the trace database's layout before schema versions (user_version 0), as
// earlier builds wrote it: the identity as the PRIMARY KEY, and an index on the key.
const schemaV1 = `
CREATE TABLE AutomationJob (
    RowGuid TEXT NOT NULL, Attempt INTEGER NOT NULL, Version INTEGER NOT NULL,
    SchedulerKey TEXT NOT NULL, RowId INTEGER NOT NULL, BusinessUnitId TEXT NOT NULL,
    AutomationType TEXT NOT NULL, Outcome TEXT NOT NULL, ReasonCode TEXT NOT NULL,
    ErrorCode TEXT NOT NULL, Message TEXT NOT NULL, StartedOn INTEGER NOT NULL,
    FinishedOn INTEGER NOT NULL, UtcDay TEXT NOT NULL, TraceBlobName TEXT NOT NULL,
    PRIMARY KEY (RowGuid, Attempt, Version));
CREATE INDEX IX_AutomationJob_Key ON AutomationJob (SchedulerKey, StartedOn);
CREATE INDEX IX_AutomationJob_BuDay ON AutomationJob (BusinessUnitId, UtcDay, StartedOn);`

func rawDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "trace.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// oldDir writes a trace database as an older build left it: a new directory whose file holds
// setup (a schema and its user_version) and recs, written in one transaction straight into
// AutomationJob; it returns the directory.
func oldDir(t *testing.T, setup string, recs ...trace.JobRecord) string {
	t.Helper()
	dir := t.TempDir()
	old := rawDB(t, dir)
	if _, err := old.Exec(setup); err != nil {
		t.Fatal(err)
	}
	tx, err := old.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := tx.Exec(insertJob, jobArgs(r)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openIn opens the store in dir, failing t on an error; it is closed when t ends.
func openIn(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// indexes lists the names of AutomationJob's indexes, sorted (automatic ones included).
func indexes(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rs, err := db.Query("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'AutomationJob' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var n string
		if err := rs.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestMigrateFromVersion1 opens a version-1 trace database with rows in it: every row is
// kept with every field, the layout is version 2 (one unique index on the key and the
// identity, no primary-key index on RowGuid), and a rewrite of an old row's identity still
// replaces it instead of adding a second row.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 3, 14, 1, 2, 3, 4_000_000, time.UTC)
	var recs []trace.JobRecord
	for i, g := range []string{"g1", "g2", "g3"} {
		recs = append(recs, trace.JobRecord{SchedulerKey: "reminder:k:" + g, RowGuid: g, RowID: int64(10 + i), BusinessUnitID: "bu-1",
			AutomationType: "Reminder", Attempt: 1, Version: int64(5 + i), Outcome: trace.OutcomeRetrying, ReasonCode: "r",
			ErrorCode: "Timeout", Message: "m", StartedOn: started.Add(time.Duration(i) * time.Minute),
			FinishedOn: started.Add(time.Duration(i)*time.Minute + time.Second), TraceBlobName: trace.BlobName(g, 1, int64(5+i))})
	}
	dir := oldDir(t, schemaV1, recs...)

	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open a version-1 database: %v", err)
	}
	defer s.Close()
	for _, r := range recs {
		got, err := s.JobsByKey(t.Context(), r.SchedulerKey)
		if err != nil || len(got) != 1 || got[0] != r {
			t.Errorf("JobsByKey(%s) after the migration = %+v, %v; want only %+v", r.SchedulerKey, got, err, r)
		}
	}
	var version int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version %d (%v), want %d", version, err, schemaVersion)
	}
	if got, want := indexes(t, s.db), []string{"IX_AutomationJob_BuDay", "UX_AutomationJob_Key"}; !slices.Equal(got, want) {
		t.Errorf("indexes %v, want %v", got, want)
	}
	var leftover int
	if err := s.db.QueryRow("SELECT COUNT(*) FROM sqlite_schema WHERE name LIKE '%_v1'").Scan(&leftover); err != nil || leftover != 0 {
		t.Errorf("%d objects of the version-1 table left (%v)", leftover, err)
	}
	again := recs[1]
	again.Outcome, again.ErrorCode, again.Message = trace.OutcomeCompleted, "", "rewritten"
	if err := s.WriteJobs(t.Context(), []trace.JobRecord{again}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.JobsByKey(t.Context(), again.SchedulerKey); err != nil || len(got) != 1 || got[0] != again {
		t.Errorf("after rewriting a migrated row's identity: %+v, %v; want only %+v", got, err, again)
	}

	// A second Open finds version 2 and changes nothing.
	s.Close()
	s2, err := Open(dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	var n int
	if err := s2.db.QueryRow("SELECT COUNT(*) FROM AutomationJob").Scan(&n); err != nil || n != len(recs) {
		t.Errorf("%d rows after reopening (%v), want %d", n, err, len(recs))
	}
}

// TestOpenRefusesANewerSchema: a trace database a later build migrated further is not
// opened (and not changed) by this one.
func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := rawDB(t, dir)
	if _, err := db.Exec("PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir); err == nil || !strings.Contains(err.Error(), "schema version 3") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open a version-3 database: %v, want a schema version error", err)
	}
	var tables int
	if err := db.QueryRow("SELECT COUNT(*) FROM sqlite_schema").Scan(&tables); err != nil || tables != 0 {
		t.Errorf("%d schema objects written (%v), want none", tables, err)
	}
}

// TestReadsSeekIndexes pins the plans of the two reads: JobsByKey seeks the unique key
// index, JobsByBusinessUnitDay the (unit, day) index; neither scans the table.
func TestReadsSeekIndexes(t *testing.T) {
	t.Parallel()
	s := openIn(t, t.TempDir())
	for q, want := range map[string]string{
		"SELECT * FROM AutomationJob " + byKey:   "USING INDEX UX_AutomationJob_Key (SchedulerKey=?)",
		"SELECT * FROM AutomationJob " + byBuDay: "USING INDEX IX_AutomationJob_BuDay (BusinessUnitId=? AND UtcDay=?)",
		"SELECT 1 FROM AutomationJob WHERE RowGuid = 'g' AND Attempt = 1 AND Version = 1 AND SchedulerKey = 'k'": "USING COVERING INDEX UX_AutomationJob_Key",
	} {
		rs, err := s.db.Query("EXPLAIN QUERY PLAN "+q, "k", "2026-01-01", 10)
		if err != nil {
			rs, err = s.db.Query("EXPLAIN QUERY PLAN " + q)
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var plan []string
		for rs.Next() {
			var id, parent, notused int
			var detail string
			if err := rs.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rs.Close()
		if joined := strings.Join(plan, "; "); !strings.Contains(joined, want) {
			t.Errorf("plan of %s: %s; want %s", q, joined, want)
		}
	}
}

// TestConcurrentOpensMigrateOnce: stores opening one version-1 directory at once (two
// processes starting together) all open it; the migration runs once (BEGIN IMMEDIATE: the
// others wait, then find version 2), and every row is there once, with the version-2 layout.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	t.Parallel()
	const rows = 3000
	started := time.Date(2026, 3, 14, 1, 2, 3, 0, time.UTC)
	recs := make([]trace.JobRecord, 0, rows)
	for i := range rows {
		g := "g" + strings.Repeat("x", i%7) + time.Duration(i).String()
		recs = append(recs, trace.JobRecord{SchedulerKey: "reminder:k:" + g, RowGuid: g, BusinessUnitID: "bu-1", AutomationType: "Reminder",
			Attempt: 1, Version: 1, Outcome: trace.OutcomeCompleted, StartedOn: started, FinishedOn: started})
	}
	dir := oldDir(t, schemaV1, recs...)
	const opens = 4
	stores := make([]*Store, opens)
	errs := make([]error, opens)
	var wg sync.WaitGroup
	for i := range opens {
		wg.Go(func() { stores[i], errs[i] = Open(dir) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var n int
	if err := stores[0].db.QueryRow("SELECT COUNT(*) FROM AutomationJob").Scan(&n); err != nil || n != rows {
		t.Errorf("%d rows after concurrent opens (%v), want %d", n, err, rows)
	}
	if got, want := indexes(t, stores[opens-1].db), []string{"IX_AutomationJob_BuDay", "UX_AutomationJob_Key"}; !slices.Equal(got, want) {
		t.Errorf("indexes %v, want %v", got, want)
	}
}

// TestOpenRepairsAVersion2FileWithTheOldLayout: a file marked version 2 whose table still
// has the version-1 layout (a copy of an old file whose user_version was set by hand, or
// an older build that reopened a version-2 file and added its key index back) is brought
// to the version-2 layout: one unique key index and the day index, no primary key, no
// version-1 index on (SchedulerKey, StartedOn), every row kept.
func TestOpenRepairsAVersion2FileWithTheOldLayout(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]string{
		"version-1 table at user_version 2": schemaV1 + "\nPRAGMA user_version = 2;",
		"version-2 table with the old key index": schema + `
CREATE INDEX IF NOT EXISTS IX_AutomationJob_Key ON AutomationJob (SchedulerKey, StartedOn);
PRAGMA user_version = 2;`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			started := time.Date(2026, 3, 14, 1, 2, 3, 0, time.UTC)
			r := trace.JobRecord{SchedulerKey: "reminder:k:g1", RowGuid: "g1", BusinessUnitID: "bu-1", AutomationType: "Reminder",
				Attempt: 1, Version: 3, Outcome: trace.OutcomeCompleted, StartedOn: started, FinishedOn: started}
			dir := oldDir(t, setup, r)
			s := openIn(t, dir)
			if got, want := indexes(t, s.db), []string{"IX_AutomationJob_BuDay", "UX_AutomationJob_Key"}; !slices.Equal(got, want) {
				t.Errorf("indexes %v, want %v", got, want)
			}
			if got, err := s.JobsByKey(t.Context(), r.SchedulerKey); err != nil || len(got) != 1 || got[0] != r {
				t.Errorf("JobsByKey = %+v, %v; want only %+v", got, err, r)
			}
		})
	}
}

// TestOpenWaitsOutALongMigration: an Open that finds another process migrating (here a
// transaction holding the write lock for 11 s, longer than the 10 s every other statement
// waits for a lock) waits for it instead of failing with "database is locked": a large
// version-1 file takes that long to copy (300,000 rows: about 2 s), and the process that
// starts beside the migrating one must not fail to start.
func TestOpenWaitsOutALongMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for 11 s")
	}
	t.Parallel()
	dir := t.TempDir()
	first, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	hold := rawDB(t, dir)
	conn, err := hold.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(11 * time.Second)
		_, _ = conn.ExecContext(context.Background(), "COMMIT")
	}()
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open while another process migrates: %v", err)
	}
	s.Close()
}
