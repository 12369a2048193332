package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"
)

// writerTestStore is a store on a fresh SQLite file with the writer queue, and with a pinned
// writer connection when pinned; with cleanup, the test closes it at its end.
func writerTestStore(t *testing.T, pinned, cleanup bool) (*Store, *sql.DB) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/h.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(6)
	if _, err := db.Exec("CREATE TABLE T (V INTEGER NOT NULL); CREATE TABLE U (V INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	s := New(db, &Queries{byName: map[string]string{}}, Dialect{Name: "test", WriterQueue: true, WriterQueueWait: 5 * time.Second}, nil)
	if pinned {
		w, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UseWriterConn(w, nil); err != nil {
			t.Fatal(err)
		}
	}
	if cleanup {
		t.Cleanup(func() { s.Close() })
	}
	return s, db
}

// TestPanicInTxLeavesWriterUsable: after a panic in fn (recovered by the caller, as
// net/http does) the pinned writer's transaction is rolled back, so the next write
// transaction succeeds and Close returns (a transaction left open refused every later BEGIN
// and made Close wait forever). The test closes the store itself, with a deadline.
func TestPanicInTxLeavesWriterUsable(t *testing.T) {
	s, _ := writerTestStore(t, true, false)
	func() {
		defer func() { _ = recover() }()
		_ = s.inTx(context.Background(), func(tx *sql.Tx) error {
			if _, err := tx.Exec("INSERT INTO T VALUES (1)"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	done := make(chan error, 1)
	go func() {
		done <- s.inTx(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec("INSERT INTO T VALUES (2)")
			return err
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("write after a recovered panic: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("write after a recovered panic hangs")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Error("Store.Close hangs after a recovered panic (the pinned writer's Conn.Close waits for the open transaction)")
	}
}

// TestInterruptedTxDoesNotEndNextTx: a transaction's context ends while its write statement
// runs, and a second transaction already waits for the writer slot and then fails on
// purpose. None of the second transaction's rows may commit: database/sql rolls back a
// transaction whose context ended on a goroutine of its own, later, and on the pinned
// writer that late ROLLBACK used to end the next slot holder's transaction, whose
// statements then committed one by one. Pool and pinned writer alike.
func TestInterruptedTxDoesNotEndNextTx(t *testing.T) {
	for _, c := range []struct {
		name   string
		pinned bool
		group  int
	}{{"pool", false, 0}, {"pinned", true, 0}, {"pinned, group commit", true, 32}} {
		t.Run(c.name, func(t *testing.T) { interruptedTxRace(t, c.pinned, c.group) })
	}
}

func interruptedTxRace(t *testing.T, pinned bool, group int) {
	s, db := writerTestStore(t, pinned, true)
	if group > 1 {
		if err := s.SetGroupCommit(group); err != nil {
			t.Fatal(err)
		}
	}
	errAbort := errors.New("abort")
	var others []string
	for i := 0; i < 300; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+i%4)*time.Millisecond)
		aDone := make(chan struct{})
		go func() {
			defer close(aDone)
			_ = s.inTx(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 3000000) INSERT INTO T SELECT x FROM c")
				return err
			})
		}()
		time.Sleep(500 * time.Microsecond)
		err := s.inTx(context.Background(), func(tx *sql.Tx) error {
			if _, err := tx.Exec("INSERT INTO U VALUES (?)", i); err != nil {
				return err
			}
			time.Sleep(200 * time.Microsecond)
			if _, err := tx.Exec("INSERT INTO U VALUES (?)", i); err != nil {
				return err
			}
			return errAbort
		})
		<-aDone
		cancel()
		if !errors.Is(err, errAbort) {
			others = append(others, err.Error())
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM U").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 || len(others) != 0 {
		first := ""
		if len(others) > 0 {
			first = others[0]
		}
		t.Fatalf("300 rounds: %d rows of failed transactions committed; %d unexpected errors of the second transaction (first: %s)", n, len(others), first)
	}
}
