package mssql_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-sql/civil"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/mssql"
)

// dsnEnv names a login that may CREATE and DROP databases, for example
// "sqlserver://sa:Passw0rd!@localhost:1433?database=master&encrypt=disable". Each test of
// the conformance suite runs in a database of its own, created and dropped here.
const dsnEnv = "AUTOMATION_SQLSERVER_DSN"

func serverDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skip("AUTOMATION_SQLSERVER_DSN not set: SQL Server conformance suite skipped (no SQL Server on this machine; `ACCEPT_EULA=Y make test/azure` runs it where Docker exists)")
	}
	return dsn
}

// TestConformance runs the one store suite against SQL Server, once with locking READ
// COMMITTED (SQL Server's default) and once with READ_COMMITTED_SNAPSHOT on (Azure SQL
// Database's default), since the claim and upsert hints must hold under both.
func TestConformance(t *testing.T) {
	t.Parallel()
	dsn := serverDSN(t)
	for _, rcsi := range []bool{false, true} {
		name := "READ_COMMITTED_SNAPSHOT=OFF"
		if rcsi {
			name = "READ_COMMITTED_SNAPSHOT=ON"
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				s, err := mssql.Open(context.Background(), freshDatabase(t, dsn, rcsi), nil)
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

func TestMigrateTwiceIsNoop(t *testing.T) {
	t.Parallel()
	dsn := freshDatabase(t, serverDSN(t), false)
	for i := 0; i < 2; i++ {
		s, err := mssql.Open(context.Background(), dsn, nil)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		s.Close()
	}
}

// freshDatabase creates an empty database on the server behind adminDSN, drops it when the
// test ends (after the store, which the suite closes first), and returns a DSN for it.
func freshDatabase(t *testing.T, adminDSN string, rcsi bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	admin, err := mssql.OpenDB(adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "automation_test_" + hex.EncodeToString(b[:]) // [a-z0-9_]: safe inside [ ]
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE ["+name+"]"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		admin, err := mssql.OpenDB(adminDSN)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer admin.Close()
		// SINGLE_USER is not supported on Azure SQL Database; there the store's pool is
		// already closed and the plain DROP suffices.
		_, _ = admin.ExecContext(ctx, "ALTER DATABASE ["+name+"] SET SINGLE_USER WITH ROLLBACK IMMEDIATE")
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS ["+name+"]"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	mode := "OFF"
	if rcsi {
		mode = "ON"
	}
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE ["+name+"] SET READ_COMMITTED_SNAPSHOT "+mode); err != nil {
		t.Fatalf("set READ_COMMITTED_SNAPSHOT %s on %s: %v", mode, name, err)
	}
	dsn, err := withDatabase(adminDSN, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// withDatabase returns dsn pointing at database db, for the URL (sqlserver://), ODBC
// (odbc:) and ADO (key=value;...) forms; in the latter two a later key overrides an earlier.
func withDatabase(dsn, db string) (string, error) {
	if strings.HasPrefix(strings.ToLower(dsn), "sqlserver://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		q := u.Query()
		for k := range q {
			if strings.EqualFold(k, "database") || strings.EqualFold(k, "initial catalog") {
				q.Del(k)
			}
		}
		q.Set("database", db)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return strings.TrimRight(dsn, "; ") + ";database=" + db, nil
}

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"sqlserver://sa:pw@localhost:1433?database=master&encrypt=disable": "sqlserver://sa:pw@localhost:1433?database=t1&encrypt=disable",
		"server=localhost;user id=sa;password=pw;database=master;":         "server=localhost;user id=sa;password=pw;database=master;database=t1",
	}
	for in, want := range cases {
		got, err := withDatabase(in, "t1")
		if err != nil || got != want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestDialectTimeRoundTrip(t *testing.T) {
	t.Parallel()
	sydney := time.FixedZone("AEST", 10*3600)
	for _, in := range []time.Time{
		storetest.T0,
		time.Date(2026, 3, 29, 1, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 10, 4, 2, 30, 0, 123_456_789, sydney),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
	} {
		want := in.UTC().Truncate(time.Millisecond)
		enc := mssql.Dialect.EncodeTime(in)
		dt, ok := enc.(civil.DateTime)
		if !ok {
			t.Fatalf("EncodeTime(%v) = %T, want civil.DateTime (a datetime2 parameter)", in, enc)
		}
		// What go-mssqldb hands back for a datetime2 column: the stored wall clock in the
		// session location, which need not be UTC.
		for _, loc := range []*time.Location{time.UTC, sydney} {
			scanned := dt.In(loc)
			got, err := mssql.Dialect.DecodeTime(scanned)
			if err != nil || !got.Equal(want) || got.Location() != time.UTC {
				t.Errorf("round trip of %v via %v: %v, %v; want %v UTC", in, loc, got, err, want)
			}
		}
		if got, err := mssql.Dialect.DecodeTime(dt); err != nil || !got.Equal(want) {
			t.Errorf("DecodeTime(civil %v) = %v, %v; want %v", dt, got, err, want)
		}
	}
	if _, err := mssql.Dialect.DecodeTime(int64(0)); err == nil {
		t.Error("DecodeTime accepted an int64")
	}
}

// serverClock matches T-SQL functions that read the server clock; "now" is a parameter.
var serverClock = regexp.MustCompile(`(?i)\b(GETDATE|GETUTCDATE|SYSDATETIME|SYSUTCDATETIME|SYSDATETIMEOFFSET|CURRENT_TIMESTAMP)\b`)

// sqliteSyntax matches SQLite-only clauses (LIMIT, RETURNING, ON CONFLICT, excluded.) that
// must not survive a port; @Limit, a parameter, does not match.
var sqliteSyntax = regexp.MustCompile(`(?i)(?:^|[^@\w])(LIMIT|RETURNING)\b|\bON\s+CONFLICT\b|\bexcluded\.`)

func TestQueryFilesLoad(t *testing.T) {
	t.Parallel()
	q := loadQueries(t)
	if len(q.Names()) == 0 {
		t.Fatal("no queries loaded")
	}
	for _, name := range q.Names() {
		sqlText := q.SQL(name)
		if strings.TrimSpace(stripComments(sqlText)) == "" {
			t.Errorf("query %s is empty", name)
		}
		if m := serverClock.FindString(stripComments(sqlText)); m != "" {
			t.Errorf("query %s reads the server clock (%s); pass now as a parameter", name, m)
		}
		if sqliteSyntax.MatchString(stripComments(sqlText)) {
			t.Errorf("query %s uses SQLite syntax", name)
		}
	}
	for m, text := range readMigrations(t, "") {
		if !strings.HasPrefix(text, "-- +goose Up") || !strings.Contains(text, "-- +goose Down") {
			t.Errorf("migration %s lacks the goose Up/Down annotations", m)
		}
		if c := serverClock.FindString(stripComments(text)); c != "" {
			t.Errorf("migration %s reads the server clock (%s)", m, c)
		}
		if strings.Contains(strings.ToLower(stripComments(text)), "datetimeoffset") {
			t.Errorf("migration %s uses datetimeoffset; instants are datetime2(3) UTC", m)
		}
	}
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestOpenRejectsBadDSN(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"empty":              "",
		"malformed URL":      "sqlserver://%zz",
		"bad port":           "server=localhost;port=notaport;user id=sa;password=x",
		"incomplete fedauth": "sqlserver://example.database.windows.net?database=automation&fedauth=ActiveDirectoryPassword",
		// Nothing listens on port 1: the connection is refused at once.
		"unreachable": "sqlserver://sa:x@127.0.0.1:1?database=automation&dial+timeout=2&connection+timeout=3&encrypt=disable",
	}
	for name, dsn := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			s, err := mssql.Open(ctx, dsn, nil)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", dsn)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("Open(%q) took %s to fail", dsn, d)
			}
			t.Logf("Open(%q): %v", dsn, err)
		})
	}
}
