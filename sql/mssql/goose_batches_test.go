package mssql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/automation-platform/automation/sql/mssql"
)

// batchLog records what goose sends to the database: each batch, BEGIN/COMMIT around the
// transactional migrations, and "VERSION n" when goose records a migration as applied.
type batchLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *batchLog) add(s string) {
	l.mu.Lock()
	l.entries = append(l.entries, s)
	l.mu.Unlock()
}

type recordDriver struct{ log *batchLog }

func (d recordDriver) Open(string) (driver.Conn, error) { return recordConn(d), nil }

type recordConn struct{ log *batchLog }

func (c recordConn) Prepare(q string) (driver.Stmt, error) { return recordStmt{c.log, q}, nil }
func (c recordConn) Close() error                          { return nil }
func (c recordConn) Begin() (driver.Tx, error)             { c.log.add("BEGIN"); return recordTx(c), nil }
func (c recordConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	c.log.add(q)
	return driver.RowsAffected(0), nil
}

type recordTx struct{ log *batchLog }

func (t recordTx) Commit() error   { t.log.add("COMMIT"); return nil }
func (t recordTx) Rollback() error { t.log.add("ROLLBACK"); return nil }

type recordStmt struct {
	log *batchLog
	q   string
}

func (s recordStmt) Close() error  { return nil }
func (s recordStmt) NumInput() int { return -1 }
func (s recordStmt) Exec([]driver.Value) (driver.Result, error) {
	s.log.add(s.q)
	return driver.RowsAffected(0), nil
}
func (s recordStmt) Query([]driver.Value) (driver.Rows, error) { return emptyRows{}, nil }

type emptyRows struct{}

func (emptyRows) Columns() []string         { return nil }
func (emptyRows) Close() error              { return nil }
func (emptyRows) Next([]driver.Value) error { return io.EOF }

// memVersions is a goose version store in memory.
type memVersions struct {
	log     *batchLog
	applied []int64
}

func (m *memVersions) Tablename() string                                           { return "goose_db_version" }
func (m *memVersions) CreateVersionTable(context.Context, database.DBTxConn) error { return nil }
func (m *memVersions) Insert(_ context.Context, _ database.DBTxConn, r database.InsertRequest) error {
	m.applied = append(m.applied, r.Version)
	m.log.add(fmt.Sprintf("VERSION %d", r.Version))
	return nil
}
func (m *memVersions) Delete(context.Context, database.DBTxConn, int64) error { return nil }
func (m *memVersions) GetMigration(_ context.Context, _ database.DBTxConn, v int64) (*database.GetMigrationResult, error) {
	for _, a := range m.applied {
		if a == v {
			return &database.GetMigrationResult{IsApplied: true}, nil
		}
	}
	return nil, database.ErrVersionNotFound
}
func (m *memVersions) GetLatestVersion(context.Context, database.DBTxConn) (int64, error) {
	if len(m.applied) == 0 {
		return 0, database.ErrVersionNotFound
	}
	return m.applied[len(m.applied)-1], nil
}
func (m *memVersions) ListMigrations(context.Context, database.DBTxConn) ([]*database.ListMigrationsResult, error) {
	var out []*database.ListMigrationsResult
	for i := len(m.applied) - 1; i >= 0; i-- {
		out = append(out, &database.ListMigrationsResult{Version: m.applied[i], IsApplied: true})
	}
	return out, nil
}

var registerRecorder sync.Once

// TestGooseSendsTheOnlineMigrationsAsWritten runs the embedded migrations through goose (the
// version the module pins) against a driver that records what it is sent: the migrations
// that rebuild or backfill large tables (0025, 0029, 0031, 0032, 0064, 0075) run outside a transaction,
// and each of their T-SQL blocks arrives as one batch (a DECLARE and the EXEC that uses it
// together, the backfill's WHILE whole); every other migration runs in a transaction.
func TestGooseSendsTheOnlineMigrationsAsWritten(t *testing.T) {
	t.Parallel()
	log := &batchLog{}
	registerRecorder.Do(func() { sql.Register("mssql-goose-recorder", recordDriver{log}) })
	db, err := sql.Open("mssql-goose-recorder", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	p, err := goose.NewProvider(goose.DialectCustom, db, mssql.Migrations(), goose.WithStore(&memVersions{log: log}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	noTx := map[string]int{"VERSION 25": 5, "VERSION 29": 1, "VERSION 31": 6, "VERSION 32": 4, "VERSION 64": 1, "VERSION 75": 12} // batches each sends
	var batch []string
	inTx := false
	for _, e := range log.entries {
		switch {
		case e == "BEGIN":
			inTx, batch = true, nil
		case e == "COMMIT":
			inTx = false
		case strings.HasPrefix(e, "VERSION "):
			want, online := noTx[e]
			if online {
				if inTx {
					t.Errorf("%s ran inside a transaction (-- +goose NO TRANSACTION lost)", e)
				}
				if len(batch) != want {
					t.Errorf("%s: %d batches sent, want %d: %q", e, len(batch), want, batch)
				}
				for _, b := range batch {
					if strings.Contains(b, "EXEC (") && !strings.Contains(b, "DECLARE @with") {
						t.Errorf("%s: an EXEC sent without the DECLARE of its options: %q", e, b)
					}
					if strings.Contains(b, "WHILE") && !strings.Contains(b, "END") {
						t.Errorf("%s: the backfill loop was cut: %q", e, b)
					}
				}
				delete(noTx, e)
			} else if !inTx {
				t.Errorf("%s ran outside a transaction", e)
			}
			batch = nil
		default:
			if strings.TrimSpace(e) == "" {
				t.Error("an empty batch was sent")
			}
			batch = append(batch, e)
		}
	}
	for v := range noTx {
		t.Errorf("%s was never applied", v)
	}
}
