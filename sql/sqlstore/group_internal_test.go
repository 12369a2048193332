package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// groupTestStore is writerTestStore with a pinned writer and group commit on, and a table
// G (one row per transaction that commits) and H (bulk rows of long transactions).
func groupTestStore(t *testing.T, max int) (*Store, *sql.DB) {
	t.Helper()
	s, db := writerTestStore(t, true, true)
	if err := s.SetGroupCommit(max); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE G (V INTEGER NOT NULL); CREATE TABLE H (V INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return s, db
}

// Under group commit every caller of inTx sees the outcome of a transaction of its own,
// whatever its group-mates do: nil exactly when its writes are committed (once), an error
// exactly when none of them is. 48 writers at once, five rounds, each transaction one of:
// commits; fails after its write; panics after its write (its caller recovers); runs a long
// bulk insert whose context ends in the middle (SQLite then rolls back the whole physical
// transaction, which the group must notice and run its other members again); or waits
// with a context that ends before its turn. The transactions did share commits.
func TestGroupCommitEachCallerGetsItsOwnOutcome(t *testing.T) {
	s, db := groupTestStore(t, 32)
	const writers, rounds, bulk = 48, 5, 300000
	type outcome struct {
		id       int
		kind     int
		err      error
		panicked bool
	}
	var mu sync.Mutex
	var outs []outcome
	errOwn := errors.New("own failure")
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			id := r*writers + w
			kind := (id * 7) % 5
			wg.Go(func() {
				o := outcome{id: id, kind: kind}
				ctx := context.Background()
				var cancel context.CancelFunc = func() {}
				switch kind {
				case 3:
					ctx, cancel = context.WithTimeout(ctx, time.Duration(2+id%3)*time.Millisecond)
				case 4:
					ctx, cancel = context.WithCancel(ctx)
					cancel() // ends before its turn (or at once, if it leads)
				}
				defer cancel()
				func() {
					defer func() {
						if p := recover(); p != nil {
							o.panicked = true
						}
					}()
					o.err = s.inTx(ctx, func(tx *sql.Tx) error {
						if kind == 3 {
							_, err := tx.ExecContext(ctx, fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < %d) INSERT INTO H SELECT ? FROM c", bulk), id)
							if err != nil {
								return err
							}
						}
						if _, err := tx.ExecContext(ctx, "INSERT INTO G VALUES (?)", id); err != nil {
							return err
						}
						switch kind {
						case 1:
							return errOwn
						case 2:
							panic("boom")
						}
						return nil
					})
				}()
				mu.Lock()
				outs = append(outs, o)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	count := func(q string, id int) int {
		var n int
		if err := db.QueryRow(q, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	committed := 0
	for _, o := range outs {
		g := count("SELECT COUNT(*) FROM G WHERE V = ?", o.id)
		h := count("SELECT COUNT(*) FROM H WHERE V = ?", o.id)
		switch {
		case o.panicked:
			if o.kind != 2 || g != 0 || h != 0 {
				t.Errorf("transaction %d (kind %d) panicked: rows %d/%d, want a panic of kind 2 only, nothing written", o.id, o.kind, g, h)
			}
		case o.err == nil:
			committed++
			wantH := 0
			if o.kind == 3 {
				wantH = bulk
			}
			if o.kind == 1 || o.kind == 2 || o.kind == 4 || g != 1 || h != wantH {
				t.Errorf("transaction %d (kind %d) answered nil: rows %d/%d, want 1/%d", o.id, o.kind, g, h, wantH)
			}
		default:
			if o.kind == 0 || g != 0 || h != 0 {
				t.Errorf("transaction %d (kind %d) answered %v: rows %d/%d, want a failing kind and nothing written", o.id, o.kind, o.err, g, h)
			}
			if o.kind == 1 && !errors.Is(o.err, errOwn) {
				t.Errorf("transaction %d failed on purpose and got %v", o.id, o.err)
			}
		}
	}
	if len(outs) != writers*rounds {
		t.Fatalf("%d outcomes", len(outs))
	}
	ws := s.WriteStats()
	if ws.Transactions != int64(committed) || ws.Commits >= ws.Transactions {
		t.Fatalf("write stats %+v for %d committed transactions: want every one counted, in fewer commits", ws, committed)
	}
	// The writer is usable afterwards, alone.
	if err := s.inTx(context.Background(), func(tx *sql.Tx) error { _, err := tx.Exec("INSERT INTO G VALUES (-1)"); return err }); err != nil {
		t.Fatal(err)
	}
}

// A transaction that waits for its turn longer than the writer queue's wait (here: one
// begun inside another one's fn, which the group cannot reach while that fn runs) leaves
// the queue and begins on the pool, as it did without group commit: no deadlock.
func TestGroupCommitNestedTransactionDoesNotHang(t *testing.T) {
	s, db := groupTestStore(t, 32)
	s.d.WriterQueueWait = 100 * time.Millisecond
	if _, err := db.Exec("PRAGMA busy_timeout = 200"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.inTx(context.Background(), func(tx *sql.Tx) error {
			// The nested one cannot take the write lock this transaction holds: it fails
			// (busy), as without group commit, and the outer one goes on.
			_ = s.inTx(context.Background(), func(tx2 *sql.Tx) error { _, err := tx2.Exec("INSERT INTO G VALUES (2)"); return err })
			_, err := tx.Exec("INSERT INTO G VALUES (1)")
			return err
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a transaction begun inside another one's fn hangs under group commit")
	}
}
