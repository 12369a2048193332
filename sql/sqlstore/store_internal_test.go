package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math/bits"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

var errTransient = errors.New("transient")

func TestInTxRetriesOnlyRetryableFailures(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := New(db, &Queries{byName: map[string]string{}}, Dialect{Name: "test", IsRetryable: func(err error) bool { return errors.Is(err, errTransient) }}, nil)
	ctx := context.Background()
	cases := []struct {
		name     string
		failures int
		failWith error
		calls    int
		wantErr  bool
	}{
		{"succeeds after two transient failures", 2, errTransient, 3, false},
		{"gives up after three attempts", 5, errTransient, 3, true},
		{"does not retry a permanent error", 5, errors.New("constraint"), 1, true},
	}
	for _, tc := range cases {
		calls := 0
		err := s.inTx(ctx, func(*sql.Tx) error {
			calls++
			if calls <= tc.failures {
				return tc.failWith
			}
			return nil
		})
		if calls != tc.calls || (err != nil) != tc.wantErr {
			t.Errorf("%s: calls %d err %v", tc.name, calls, err)
		}
	}
}

// TestExpandRows: the tuple between the row markers is repeated with each copy's parameters
// suffixed, parameters are listed once in order of first use, and a query without markers
// is refused.
func TestExpandRows(t *testing.T) {
	head, tuple, tail, params, err := splitRows("INSERT INTO T (A, B, C) VALUES /*row*/(@A, @Bee, @A)/*end*/ ON CONFLICT DO NOTHING;")
	if err != nil || strings.Join(params, ",") != "A,Bee" {
		t.Fatalf("params %q %v", params, err)
	}
	got := expandRows(head, tuple, tail, params, 2)
	want := "INSERT INTO T (A, B, C) VALUES (@A_0, @Bee_0, @A_0),\n(@A_1, @Bee_1, @A_1) ON CONFLICT DO NOTHING;"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	for _, bad := range []string{"INSERT INTO T VALUES (@A)", "VALUES /*row*/(@A)", "/*row*/(@A)/*end*/, /*row*/(@B)/*end*/"} {
		if _, _, _, _, err := splitRows(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestExecRowsBindsEveryRow: a multi-row insert of 250 rows (two full-size prepared
// statements and a shorter last one) writes every row with its own values, bound by name
// and, with PositionalRows, by position (a parameter used twice in the tuple gets its value
// twice); a row missing a parameter is refused, and positional rows refuse a parameter
// outside the tuple.
// memStore is a store over a one-connection in-memory SQLite database with table (its
// CREATE TABLE) and the one query name, every statement prepared (PrepareAll).
func memStore(t *testing.T, table, name, query string, d Dialect) (*Store, *sql.DB) {
	t.Helper()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(table); err != nil {
		t.Fatal(err)
	}
	s := New(db, &Queries{byName: map[string]string{name: query}}, d, nil)
	if err := s.PrepareAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, db
}

func TestExecRowsBindsEveryRow(t *testing.T) {
	t.Parallel()
	const q = "-- name: TInsertMany :exec\n-- a note naming @A is not a parameter\nINSERT INTO T (A, B, C) SELECT column1, column2, column3 FROM (VALUES /*row*/(@A, @Bee, @A)/*end*/);"
	for _, positional := range []bool{false, true} {
		ctx := context.Background()
		s, db := memStore(t, "CREATE TABLE T (A INTEGER, B TEXT, C INTEGER)", "TInsertMany", q, Dialect{Name: "test", PositionalRows: positional})
		rows := make([]map[string]any, 250)
		for i := range rows {
			rows[i] = map[string]any{"A": i, "Bee": "b" + strings.Repeat("x", i%3)}
		}
		if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.execRows(ctx, tx, "TInsertMany", rows) }); err != nil {
			t.Fatalf("positional %v: %v", positional, err)
		}
		var n, bad int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*), SUM(A <> C OR B <> 'b' || substr('xx', 1, A % 3)) FROM T`).Scan(&n, &bad); err != nil {
			t.Fatal(err)
		}
		if n != len(rows) || bad != 0 {
			t.Errorf("positional %v: %d rows, %d with wrong values; want %d, 0", positional, n, bad, len(rows))
		}
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			return s.execRows(ctx, tx, "TInsertMany", []map[string]any{{"A": 1}})
		})
		if err == nil || !strings.Contains(err.Error(), "has no @Bee") {
			t.Errorf("positional %v: a row without @Bee: %v", positional, err)
		}
	}
	s := New(nil, &Queries{byName: map[string]string{"X": "INSERT INTO T SELECT @Z, column1 FROM (VALUES /*row*/(@A)/*end*/);"}}, Dialect{Name: "test", PositionalRows: true}, nil)
	if _, err := s.multiRow("X"); err == nil {
		t.Error("positional rows accepted a parameter outside the tuple")
	}
}

// TestWriterQueue: with Dialect.WriterQueue, transactions of one store run one after
// another (the second begins after the first committed, though it was started while the
// first ran), a transaction begun inside another one's fn is not stuck on the queue (it
// begins without a slot after WriterQueueWait), and a waiter whose context ends returns its
// error.
func TestWriterQueue(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/q.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := New(db, &Queries{byName: map[string]string{}}, Dialect{Name: "test", WriterQueue: true, WriterQueueWait: 200 * time.Millisecond}, nil)
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	note := func(e string) { mu.Lock(); order = append(order, e); mu.Unlock() }
	inFirst := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- s.inTx(ctx, func(*sql.Tx) error {
			note("first begins")
			close(inFirst)
			time.Sleep(30 * time.Millisecond)
			note("first ends")
			return nil
		})
	}()
	<-inFirst
	go func() {
		done <- s.inTx(ctx, func(*sql.Tx) error { note("second begins"); return nil })
	}()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(order, ", "); got != "first begins, first ends, second begins" {
		t.Errorf("order %q", got)
	}
	nested := false
	err = s.inTx(ctx, func(*sql.Tx) error {
		// A read-only inner transaction on another connection (deferred, so it takes no write
		// lock): it must get past the queue even though the outer one holds the slot.
		return s.inTx(ctx, func(*sql.Tx) error { nested = true; return nil })
	})
	if err != nil || !nested {
		t.Errorf("nested transaction: ran %v, err %v", nested, err)
	}
	s.writers <- struct{}{}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.inTx(cctx, func(*sql.Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	<-s.writers
}

// TestWriterConn: with UseWriterConn, every transaction that holds the writer queue's slot
// runs on the pinned connection (its own cache_size shows inside the transaction), each
// commit on it calls afterCommit once and a rollback does not; a transaction begun inside
// another one's fn gets no slot and runs on the pool; a statement run without a
// transaction runs on the writer in a transaction of its own; a store without a writer queue
// refuses a writer connection; Close closes the pinned connection.
func TestWriterConn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/w.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=cache_size(-2000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE T (A INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if err := New(db, &Queries{byName: map[string]string{}}, Dialect{Name: "test"}, nil).UseWriterConn(nil, nil); err == nil {
		t.Error("a store without a writer queue took a writer connection")
	}
	s := New(db, &Queries{byName: map[string]string{"TInsert": "INSERT INTO T VALUES (42)"}}, Dialect{Name: "test", WriterQueue: true, WriterQueueWait: 50 * time.Millisecond}, nil)
	w, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, "PRAGMA cache_size = -777"); err != nil {
		t.Fatal(err)
	}
	var commits int
	if err := s.UseWriterConn(w, func() { commits++ }); err != nil {
		t.Fatal(err)
	}
	cacheIn := func(tx *sql.Tx) int {
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i := 0; i < 3; i++ {
		if err := s.inTx(ctx, func(tx *sql.Tx) error {
			if got := cacheIn(tx); got != -777 {
				t.Errorf("transaction %d ran on a connection with cache_size %d, want the writer's -777", i, got)
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO T VALUES (?)", i)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if commits != 3 {
		t.Errorf("afterCommit ran %d times for 3 commits", commits)
	}
	if err := s.inTx(ctx, func(tx *sql.Tx) error { return errTransient }); !errors.Is(err, errTransient) || commits != 3 {
		t.Errorf("rolled back transaction: %v, afterCommit ran %d times (want 3)", err, commits)
	}
	// Nested: the outer transaction holds the slot (and the writer); the inner one waits
	// WriterQueueWait, then begins on the pool, where SQLite's own lock makes it wait for the
	// outer one; it is started in a goroutine so the outer one can commit.
	innerCache := make(chan int, 1)
	if err := s.inTx(ctx, func(tx *sql.Tx) error {
		go func() {
			_ = s.inTx(ctx, func(tx *sql.Tx) error { innerCache <- cacheIn(tx); return nil })
		}()
		time.Sleep(100 * time.Millisecond)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := <-innerCache; got != -2000 {
		t.Errorf("a transaction without a slot ran with cache_size %d, want the pool's -2000", got)
	}
	// A statement run without a transaction is a write like any other: it runs on the writer,
	// in a transaction of its own.
	if _, err := s.exec(ctx, nil, "TInsert"); err != nil {
		t.Fatal(err)
	}
	if commits != 5 { // 3 inserts, the nesting outer transaction, this statement
		t.Errorf("a statement without a transaction: afterCommit ran %d times in all, want 5 (it did not run on the writer)", commits)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, "SELECT 1"); !errors.Is(err, sql.ErrConnDone) {
		t.Errorf("writer connection after Close: %v, want sql.ErrConnDone", err)
	}
}

// TestMultiRowSizes: a batch of any length splits into statements whose sizes are all
// prepared (PrepareAll prepared each), in order, summing to the batch: full ones first, then
// the binary digits of the rest, so a batch is at most ⌊n/per⌋ + ⌊log2 per⌋ + 1 statements.
// Also for a per cut by the dialect's parameter bound (13 rows of 3 parameters under 40).
func TestMultiRowSizes(t *testing.T) {
	t.Parallel()
	const q = "INSERT INTO T (A, B, C) SELECT column1, column2, column3 FROM (VALUES /*row*/(@A, @B, @C)/*end*/);"
	for _, maxParams := range []int{0, 40} {
		ctx := context.Background()
		s, db := memStore(t, "CREATE TABLE T (A INTEGER, B INTEGER, C INTEGER)", "TMany", q, Dialect{Name: "test", MaxParams: maxParams})
		m, err := s.multiRow("TMany")
		if err != nil {
			t.Fatal(err)
		}
		wantPer := map[int]int{0: rowsPer, 40: 13}[maxParams]
		if m.per != wantPer {
			t.Fatalf("maxParams %d: per %d, want %d", maxParams, m.per, wantPer)
		}
		s.mu.Lock()
		prepared := len(s.stmts)
		for _, k := range m.prepared {
			if s.stmts[m.key(k)] == nil {
				t.Errorf("maxParams %d: the %d-row statement is not prepared", maxParams, k)
			}
		}
		s.mu.Unlock()
		limit := bits.Len(uint(wantPer - 1)) // the powers of two below per: one statement each at most
		for n := 1; n <= 3*wantPer+7; n++ {
			sizes := m.sizes(n)
			sum, rest := 0, 0
			for i, k := range sizes {
				if m.text[k] == "" {
					t.Fatalf("maxParams %d, %d rows: size %d is not a prepared size (%v)", maxParams, n, k, sizes)
				}
				if i > 0 && k > sizes[i-1] {
					t.Fatalf("maxParams %d, %d rows: sizes %v grow", maxParams, n, sizes)
				}
				if k < m.per {
					rest++
				}
				sum += k
			}
			if sum != n || rest > limit {
				t.Fatalf("maxParams %d, %d rows: sizes %v (sum %d, %d short statements)", maxParams, n, sizes, sum, rest)
			}
			rows := make([]map[string]any, n)
			for i := range rows {
				rows[i] = map[string]any{"A": n, "B": i, "C": -i}
			}
			if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.execRows(ctx, tx, "TMany", rows) }); err != nil {
				t.Fatalf("maxParams %d, %d rows: %v", maxParams, n, err)
			}
			var got, bad int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(DISTINCT B), COALESCE(SUM(B <> -C), 0) FROM T WHERE A = ?", n).Scan(&got, &bad); err != nil {
				t.Fatal(err)
			}
			if got != n || bad != 0 {
				t.Fatalf("maxParams %d, %d rows: %d written, %d wrong", maxParams, n, got, bad)
			}
		}
		s.mu.Lock()
		if len(s.stmts) != prepared {
			t.Errorf("maxParams %d: %d statements prepared after the batches, %d before: a batch prepared its own", maxParams, len(s.stmts), prepared)
		}
		s.mu.Unlock()
	}
}

// TestMultiRowOrderAcrossStatements: a batch split into several statements (99 rows: 64,
// 32, 2, 1) keeps the order a multi-row INSERT … ORDER BY the row's ordinal gives within
// one statement (OutboxInsertMany, NotificationInsertMany): the statements run in row order,
// so ids ascend with the ordinal across the whole batch, and each row's own values land with it.
func TestMultiRowOrderAcrossStatements(t *testing.T) {
	t.Parallel()
	const q = "INSERT INTO T (Ord, V) SELECT column1, column2 FROM (VALUES /*row*/(@Ord, @V)/*end*/) ORDER BY column1;"
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE T (Id INTEGER PRIMARY KEY AUTOINCREMENT, Batch INTEGER, Ord INTEGER, V TEXT)"); err != nil {
		t.Fatal(err)
	}
	s := New(db, &Queries{byName: map[string]string{"TMany": q}}, Dialect{Name: "test", PositionalRows: true}, nil)
	if err := s.PrepareAll(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{99, 100, 163, 255} {
		rows := make([]map[string]any, n)
		for i := range rows {
			rows[i] = map[string]any{"Ord": i, "V": "v" + strings.Repeat("x", i%5)}
		}
		if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.execRows(ctx, tx, "TMany", rows) }); err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		rs, err := db.QueryContext(ctx, "SELECT Ord, V FROM T WHERE Batch IS NULL ORDER BY Id")
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rs.Next() {
			var ord int
			var v string
			if err := rs.Scan(&ord, &v); err != nil {
				t.Fatal(err)
			}
			if ord != i || v != rows[i]["V"] {
				t.Fatalf("%d rows: row %d in id order is (%d, %q), want (%d, %q)", n, i, ord, v, i, rows[i]["V"])
			}
			i++
		}
		rs.Close()
		if i != n {
			t.Fatalf("%d rows: %d written", n, i)
		}
		if _, err := db.ExecContext(ctx, "UPDATE T SET Batch = ? WHERE Batch IS NULL", n); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMultiRowWithoutPrepareAll: a store built without PrepareAll runs a batch of every
// split (statements prepared on the transaction's connection, one connection in the pool:
// no wait on the pool while the transaction holds it) and keeps none of them: its
// statement cache does not grow with the sizes a batch happened to split into.
func TestMultiRowWithoutPrepareAll(t *testing.T) {
	t.Parallel()
	const q = "INSERT INTO T (A, B) SELECT column1, column2 FROM (VALUES /*row*/(@A, @B)/*end*/);"
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE T (A INTEGER, B INTEGER)"); err != nil {
		t.Fatal(err)
	}
	s := New(db, &Queries{byName: map[string]string{"TMany": q}}, Dialect{Name: "test", PositionalRows: true}, nil)
	total := 0
	for _, n := range []int{1, 3, 99, 100, 231} {
		rows := make([]map[string]any, n)
		for i := range rows {
			rows[i] = map[string]any{"A": n, "B": i}
		}
		if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.execRows(ctx, tx, "TMany", rows) }); err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		total += n
	}
	var got int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM T").Scan(&got); err != nil || got != total {
		t.Fatalf("%d rows written (%v), want %d", got, err, total)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.stmts) != 0 {
		t.Errorf("%d statements cached by a store built without PrepareAll, want 0", len(s.stmts))
	}
}

// TestMultiRowParamCapEdge: a statement may bind exactly the dialect's MaxParams and never
// one more. With three parameters a row, a cap of 60 fits 20 rows in one statement (60
// parameters, exactly the cap) and a cap of 59 only 19 (57): 20 rows then take two
// statements. Every statement run binds at most the cap, and StatementShape reports it. A row
// wider than the cap, and a parameter outside the tuple (which nothing would bind), are
// refused. The SQL Server cap itself (2,098) is checked against every mssql query in sql/mssql.
func TestMultiRowParamCapEdge(t *testing.T) {
	t.Parallel()
	const q = "INSERT INTO T (A, B, C) SELECT column1, column2, column3 FROM (VALUES /*row*/(@A, @B, @C)/*end*/);"
	cases := []struct {
		maxParams int
		rows      int
		want      []int // parameters bound by each statement, in order
	}{
		{60, 20, []int{60}},
		{60, 21, []int{60, 3}},
		{59, 20, []int{57, 3}},
		{59, 19, []int{57}},
		{3, 2, []int{3, 3}},
	}
	for _, tc := range cases {
		ctx := context.Background()
		s, db := memStore(t, "CREATE TABLE T (A INTEGER, B INTEGER, C INTEGER)", "TMany", q, Dialect{Name: "test", MaxParams: tc.maxParams})
		rows := make([]map[string]any, tc.rows)
		for i := range rows {
			rows[i] = map[string]any{"A": i, "B": i, "C": i}
		}
		var got []int
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			return s.eachStatement(ctx, tx, "TMany", rows, func(st *sql.Stmt, args []any) error {
				got = append(got, len(args))
				_, err := st.ExecContext(ctx, args...)
				return err
			})
		})
		if err != nil {
			t.Fatalf("cap %d, %d rows: %v", tc.maxParams, tc.rows, err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("cap %d, %d rows: statements bind %v, want %v", tc.maxParams, tc.rows, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] || got[i] > tc.maxParams {
				t.Fatalf("cap %d, %d rows: statements bind %v, want %v", tc.maxParams, tc.rows, got, tc.want)
			}
		}
		if _, params, err := s.StatementShape("TMany"); err != nil || params != tc.want[0] {
			t.Errorf("cap %d: StatementShape binds %d (%v), want %d", tc.maxParams, params, err, tc.want[0])
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM T").Scan(&n); err != nil || n != tc.rows {
			t.Fatalf("cap %d: %d rows written (%v), want %d", tc.maxParams, n, err, tc.rows)
		}
	}
	narrow := New(nil, &Queries{byName: map[string]string{"X": q}}, Dialect{Name: "test", MaxParams: 2}, nil)
	if _, err := narrow.multiRow("X"); err == nil {
		t.Error("a row of 3 parameters accepted under a cap of 2")
	}
	outside := New(nil, &Queries{byName: map[string]string{"X": "INSERT INTO T SELECT @Z, column1 FROM (VALUES /*row*/(@A)/*end*/);"}}, Dialect{Name: "test", MaxParams: 2098}, nil)
	if _, err := outside.multiRow("X"); err == nil {
		t.Error("a parameter outside the tuple accepted with named rows")
	}
}

// TestRowsParameterQuery: a multi-row query written without row markers around one @Rows
// parameter (Dialect.EncodeRows; SQL Server's OPENJSON form, here SQLite's json_each) runs in
// statements of at most rowsPer rows, each the query's one text with exactly one argument,
// @Rows, holding its rows in order; a row missing a member ('$.Name') is refused before
// anything runs; a parameter other than @Rows is refused.
func TestRowsParameterQuery(t *testing.T) {
	t.Parallel()
	const q = "INSERT INTO T (A, B) SELECT json_extract(value, '$.A'), json_extract(value, '$.Bee') FROM json_each(@Rows) ORDER BY key;"
	encode := func(rows []map[string]any) (any, error) {
		b, err := json.Marshal(rows)
		return string(b), err
	}
	ctx := context.Background()
	s, db := memStore(t, "CREATE TABLE T (Id INTEGER PRIMARY KEY AUTOINCREMENT, A INTEGER, B TEXT)", "TRows", q, Dialect{Name: "test", EncodeRows: encode, MaxParams: 3})
	rows := make([]map[string]any, 250)
	for i := range rows {
		rows[i] = map[string]any{"A": i, "Bee": strings.Repeat("b", i%7)}
	}
	var calls []int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return s.eachStatement(ctx, tx, "TRows", rows, func(st *sql.Stmt, args []any) error {
			if len(args) != 1 || args[0].(sql.NamedArg).Name != "Rows" {
				t.Fatalf("args %v, want one @Rows", args)
			}
			var chunk []map[string]any
			if err := json.Unmarshal([]byte(args[0].(sql.NamedArg).Value.(string)), &chunk); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, len(chunk))
			_, err := st.ExecContext(ctx, args...)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0] != rowsPer || calls[1] != rowsPer || calls[2] != 50 {
		t.Fatalf("statements of %v rows, want 100, 100, 50", calls)
	}
	var n, bad int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(Id <> A + 1 OR length(B) <> A % 7), 0) FROM T").Scan(&n, &bad); err != nil {
		t.Fatal(err)
	}
	if n != len(rows) || bad != 0 {
		t.Fatalf("%d rows, %d out of order or wrong; want %d, 0", n, bad, len(rows))
	}
	if r, p, err := s.StatementShape("TRows"); err != nil || r != rowsPer || p != 1 {
		t.Fatalf("StatementShape %d %d %v", r, p, err)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		return s.execRows(ctx, tx, "TRows", []map[string]any{{"A": 1, "Bee": "x"}, {"A": 2}})
	})
	if err == nil || !strings.Contains(err.Error(), "row 1 has no @Bee") {
		t.Fatalf("a row without Bee: %v", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM T").Scan(&n); err != nil || n != len(rows) {
		t.Fatalf("a refused batch wrote rows: %d %v", n, err)
	}
	other := New(nil, &Queries{byName: map[string]string{"X": "SELECT value FROM json_each(@Rows) WHERE key = @K AND '$.A' <> ''"}}, Dialect{Name: "test", EncodeRows: encode}, nil)
	if _, err := other.multiRow("X"); err == nil {
		t.Error("a rows parameter query with another parameter accepted")
	}
}

// A write the dialect's IsPermanent classifies (SQL Server's 1946, an index key over the
// limit) comes back as store.ErrValueTooLarge marked automation.Permanent with the code
// InvalidInput (HTTP 422), inside a transaction and without one, and is never retried,
// even by a dialect that would call it retryable.
func TestPermanentWriteErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	attempts := 0
	d := Dialect{Name: "test",
		IsPermanent: func(err error) bool { return strings.Contains(err.Error(), "CHECK constraint failed") },
		IsRetryable: func(error) bool { attempts++; return true },
	}
	s, _ := memStore(t, "CREATE TABLE T (A INTEGER CHECK (A < 10))", "TInsert", "-- name: TInsert :exec\nINSERT INTO T (A) VALUES (@A);", d)
	calls := 0
	errTx := s.inTx(ctx, func(tx *sql.Tx) error {
		calls++
		_, err := s.exec(ctx, tx, "TInsert", sql.Named("A", 11))
		return err
	})
	_, errNoTx := s.exec(ctx, nil, "TInsert", sql.Named("A", 12))
	for name, err := range map[string]error{"in a transaction": errTx, "without one": errNoTx} {
		if !errors.Is(err, store.ErrValueTooLarge) || !automation.IsPermanent(err) || automation.CodeOf(err) != automation.CodeInvalidInput {
			t.Errorf("%s: %v (permanent %v, code %s), want ErrValueTooLarge, permanent, InvalidInput", name, err, automation.IsPermanent(err), automation.CodeOf(err))
		}
		if err != nil && !strings.Contains(err.Error(), "CHECK constraint failed") {
			t.Errorf("%s: %v lost the database's message", name, err)
		}
	}
	if calls != 1 || attempts != 0 {
		t.Errorf("the transaction ran %d times (IsRetryable asked %d times), want once", calls, attempts)
	}
	// An error the dialect does not classify is returned as it was.
	plain, _ := memStore(t, "CREATE TABLE T (A INTEGER CHECK (A < 10))", "TInsert", "-- name: TInsert :exec\nINSERT INTO T (A) VALUES (@A);", Dialect{Name: "test"})
	_, err := plain.exec(ctx, nil, "TInsert", sql.Named("A", 11))
	if err == nil || errors.Is(err, store.ErrValueTooLarge) || automation.IsPermanent(err) {
		t.Errorf("an unclassified error became permanent: %v", err)
	}
}
