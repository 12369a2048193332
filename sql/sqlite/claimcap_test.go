package sqlite_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// limitSpy is a database/sql driver around SQLite's that records the @Limit of every
// statement run: what a claim asked the database for, statement by statement. failQuery,
// when set, is asked before each query (not exec) a prepared statement runs, with the
// statement's text: its error fails the query (a read that fails, for the fallbacks).
type limitSpy struct {
	driver.Driver
	mu        sync.Mutex
	limits    []int64
	failQuery func(query string) error
}

func (d *limitSpy) record(args []driver.NamedValue) {
	for _, a := range args {
		if a.Name == "Limit" {
			if n, ok := a.Value.(int64); ok {
				d.mu.Lock()
				d.limits = append(d.limits, n)
				d.mu.Unlock()
			}
		}
	}
}

func (d *limitSpy) Open(name string) (driver.Conn, error) {
	c, err := d.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return &spyConn{Conn: c, d: d}, nil
}

type spyConn struct {
	driver.Conn
	d *limitSpy
}

func (c *spyConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &spyStmt{Stmt: st, d: c.d, query: query}, nil
}

func (c *spyConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

type spyStmt struct {
	driver.Stmt
	d     *limitSpy
	query string
}

func (s *spyStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.d.record(args)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *spyStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.d.record(args)
	if s.d.failQuery != nil {
		if err := s.d.failQuery(s.query); err != nil {
			return nil, err
		}
	}
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

var registerSpy sync.Once

// openSpied opens a migrated SQLite database in t's temporary directory through the
// "sqlite-limitspy" driver (registered once), whose statements the returned limitSpy sees
// (and fails, with failQuery) for t alone.
func openSpied(t *testing.T) (*limitSpy, *sql.DB, *sqlstore.Queries) {
	t.Helper()
	spy := &limitSpy{}
	registerSpy.Do(func() {
		db, _ := sql.Open("sqlite", "file::memory:")
		sql.Register("sqlite-limitspy", &limitSpyRouter{base: db.Driver()})
		db.Close()
	})
	router.add(t.Name(), spy)
	db, q := migratedDB(t, "sqlite-limitspy", t.Name()+"|file:"+filepath.Join(t.TempDir(), "spied.db")+"?_pragma=busy_timeout(5000)")
	return spy, db, q
}

// TestClaimsNeverAskForMoreThanMaxClaim: with a dialect's MaxClaim set (SQL Server's is
// mssql.MaxClaim, 300: lock escalation), no claiming statement asks for more rows, and a
// scheduler claim larger than it still takes every due row, in order, in several statements.
// Run on SQLite with MaxClaim 3; the statements' @Limit are read at the driver.
func TestClaimsNeverAskForMoreThanMaxClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spy, db, q := openSpied(t)
	d := sqlite.Dialect
	d.MaxClaim = 3
	st := sqlstore.New(db, q, d, nil)

	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var cands []automation.Candidate
	for i := range 10 {
		due := t0.Add(time.Duration(10-i) * time.Minute) // inserted newest first
		key := fmt.Sprintf("claim-cap-%02d", i)
		cands = append(cands, automation.Candidate{AutomationType: automation.TypeReminder, TriggerType: automation.TriggerDateBased,
			SchedulerKey: key, InputHash: automation.InputHash(map[string]string{"key": key}), SourceEntityType: "Test",
			SourceEntityGuid: key, BusinessUnitID: "bu-1", ScheduledOn: due, ScheduledLocalDate: due.Format("2006-01-02"),
			ScheduledLocalTime: due.Format("15:04"), TimeZoneID: "UTC"})
	}
	if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0, Candidates: cands}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := db.Exec(`INSERT INTO Outbox (MessageId, Destination, Body, CreatedOn) VALUES (?, 'd', X'31', ?)`, fmt.Sprintf("m%d", i), t0.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	spy.mu.Lock()
	spy.limits = nil
	spy.mu.Unlock()

	rows, err := st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0.Add(time.Hour), Lease: time.Minute, Limit: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("claimed %d rows, want 8 of the 10 due", len(rows))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].ScheduledOn.Before(rows[i-1].ScheduledOn) {
			t.Fatalf("claim out of schedule order at %d", i)
		}
	}
	if rest, err := st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0.Add(time.Hour), Lease: time.Minute, Limit: 100}); err != nil || len(rest) != 2 {
		t.Fatalf("the rest: %d rows, %v; want the 2 left", len(rest), err)
	}
	msgs, err := st.OutboxClaim(ctx, store.OutboxClaimParams{Now: t0, Lease: time.Minute, Limit: 100})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("OutboxClaim: %d messages, %v; want MaxClaim (3)", len(msgs), err)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.limits) < 4 {
		t.Fatalf("recorded @Limit values %v: the claims did not run through the spy", spy.limits)
	}
	for _, n := range spy.limits {
		if n > int64(d.MaxClaim) {
			t.Errorf("a statement asked for %d rows, over MaxClaim %d (all: %v)", n, d.MaxClaim, spy.limits)
		}
	}
}

// limitSpyRouter is the one registered driver; a DSN "name|dsn" picks the test's spy.
type limitSpyRouter struct {
	base driver.Driver
}

type spyRegistry struct {
	mu   sync.Mutex
	byID map[string]*limitSpy
}

var router = &spyRegistry{byID: map[string]*limitSpy{}}

func (r *spyRegistry) add(id string, s *limitSpy) {
	r.mu.Lock()
	r.byID[id] = s
	r.mu.Unlock()
}

func (l *limitSpyRouter) Open(name string) (driver.Conn, error) {
	for i := 0; i < len(name); i++ {
		if name[i] == '|' {
			router.mu.Lock()
			s := router.byID[name[:i]]
			router.mu.Unlock()
			if s == nil {
				return nil, fmt.Errorf("no spy %q", name[:i])
			}
			s.Driver = l.base
			return s.Open(name[i+1:])
		}
	}
	return nil, fmt.Errorf("limitspy: DSN %q lacks the spy's name", name)
}
