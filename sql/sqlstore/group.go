package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Group commit (docs/performance.md, "Group commit on the writer").
//
// With a pinned writer connection (UseWriterConn) every write transaction runs on that one
// connection, one after the other, so the writer is the pipeline's bottleneck: at W6's
// rates the transactions waiting for it were two or three on average, each paying its own
// BEGIN, its own COMMIT and its own WAL frames for the index pages it shares with the
// others. With group commit the transactions that queue while one runs are run, one after
// the other and each in its own savepoint, inside one physical transaction that commits
// once:
//
//	caller ──inTx──▶ queue empty? ──yes──▶ LEADER: BEGIN ─▶ own fn in SAVEPOINT g
//	                      │                      │
//	                      no                     ▼
//	                      ▼               next queued member? ──no──▶ COMMIT ─▶ each member: nil
//	                 MEMBER: wait for            │yes                    │ failed
//	                 its turn (bounded)          ▼                       ▼
//	                      │               SAVEPOINT g; member's fn   each member: the error
//	                      ▼               on the member's goroutine
//	                 fn on the shared tx         │
//	                 ──ran──▶ leader       ok: RELEASE g (member joins the commit)
//	                 ◀─done── leader       failed: ROLLBACK TO g; RELEASE g; the others go
//	                                       on; the member gets its own error after the COMMIT
//
// What each caller sees is what a transaction of its own gives: nil only once its writes
// are committed, its own error (nothing of it written) when its fn fails, and the commit's
// error when the group's COMMIT fails (nothing of the group written). A failed member hears
// its error only once the group has committed, like the others: its fn saw the writes of
// the members before it (a Version moved, a key taken), which no other connection sees
// before the COMMIT, and a caller that re-reads after a conflict (an optimistic retry loop)
// must find what it conflicted with; answered at once, it re-read the old row, conflicted
// again, and a guard's five tries ran out inside one group (the flake of
// TestEightWorkersBudgetForHundredThenRaise; TestGroupCommitFailedMemberAnsweredAfterCommit).
// When the group is not committed, what it failed on never existed: it runs again, alone. The members run
// serially, each seeing the writes of those before it, so the group is one serial order
// of the transactions, as the writer queue gave. When the physical transaction is lost in
// the middle (a statement interrupted by its context makes SQLite roll back the whole
// transaction, which the next RELEASE or ROLLBACK TO then reports), nothing of the group
// is committed and each member whose fn had succeeded runs again (errGroupLost), alone, as
// a transaction of its own on the writer: another caller's context can end its group any
// number of times, but never a transaction of its own, so the rerun is not bounded by how
// often the others are interrupted.
//
// A group takes at most groupMax members (SetGroupCommit; SQLite: sqlite.Options) and
// stops taking more once it has run groupWindow, so the first member's wait is bounded.
// A member waits for its turn at most the dialect's WriterQueueWait: past that (a
// transaction begun inside another one's fn, which the group cannot reach while that fn
// runs) it begins on the pool as it did without a group.

// groupWindow bounds how long a group keeps taking members.
const groupWindow = 20 * time.Millisecond

// errGroupLost: the group's physical transaction ended before its COMMIT; nothing of the
// group was written.
var errGroupLost = errors.New("the grouped write transaction was lost before its commit")

// groupMember is one transaction waiting to run in a group.
type groupMember struct {
	ctx  context.Context
	fn   func(*sql.Tx) error
	turn chan groupTurn // leader → member: run now on tx, or lead the next group
	ran  chan error     // member → leader: fn's outcome
	done chan error     // leader → member: the outcome the member's caller gets
}

type groupTurn struct {
	tx   *sql.Tx
	lead bool
}

// WriteStats counts the write transactions committed on the pinned writer and the
// physical commits they took (equal without group commit; Transactions/Commits is the mean group).
type WriteStats struct {
	Transactions, Commits int64
}

// writeStats are the WriteStats counters.
type writeStats struct{ transactions, commits atomic.Int64 }

// WriteStats returns the counters of the writer's transactions and commits since Open.
func (s *Store) WriteStats() WriteStats {
	return WriteStats{Transactions: s.wstats.transactions.Load(), Commits: s.wstats.commits.Load()}
}

// SetGroupCommit turns group commit on the pinned writer on with at most max transactions
// per physical commit (max ≤ 1: off). Call it right after UseWriterConn, before the store
// is shared. Errors: no writer connection.
func (s *Store) SetGroupCommit(max int) error {
	if s.writer == nil {
		return fmt.Errorf("%s: group commit needs a writer connection", s.d.Name)
	}
	s.groupMax = max
	return nil
}

// inGroup runs fn as a member of a group (see above); after a lost group, once more as a
// transaction of its own on the writer's slot (a group could be lost again by another
// member, and again: three lost groups in a row failed a caller that did nothing wrong).
func (s *Store) inGroup(ctx context.Context, fn func(*sql.Tx) error) error {
	err := s.inGroupOnce(ctx, fn)
	if !errors.Is(err, errGroupLost) || ctx.Err() != nil {
		return err
	}
	return s.inTxSlot(ctx, fn, true)
}

func (s *Store) inGroupOnce(ctx context.Context, fn func(*sql.Tx) error) error {
	m := &groupMember{ctx: ctx, fn: fn, turn: make(chan groupTurn, 1), ran: make(chan error, 1), done: make(chan error, 1)}
	s.gmu.Lock()
	if !s.gActive {
		s.gActive = true
		s.gmu.Unlock()
		return s.leadGroup(m)
	}
	s.gQueue = append(s.gQueue, m)
	s.gmu.Unlock()
	wait := s.d.WriterQueueWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	var turn groupTurn
	select {
	case turn = <-m.turn:
	case <-ctx.Done():
		if s.dequeue(m) {
			return fmt.Errorf("%s: begin: %w", s.d.Name, ctx.Err())
		}
		turn = <-m.turn // taken by the leader meanwhile: fn runs and fails on ctx
	case <-t.C:
		if s.dequeue(m) {
			return s.inTxSlot(ctx, fn, false)
		}
		turn = <-m.turn
	}
	if turn.lead {
		return s.leadGroup(m)
	}
	return m.runOn(turn.tx)
}

// dequeue removes m from the queue and reports whether it was still there (false: a
// leader took it, and its turn comes).
func (s *Store) dequeue(m *groupMember) bool {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	for i, x := range s.gQueue {
		if x == m {
			s.gQueue = append(s.gQueue[:i], s.gQueue[i+1:]...)
			return true
		}
	}
	return false
}

// popQueue takes the first waiting member (nil: none).
func (s *Store) popQueue() *groupMember {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	if len(s.gQueue) == 0 {
		return nil
	}
	m := s.gQueue[0]
	s.gQueue[0] = nil
	s.gQueue = s.gQueue[1:]
	return m
}

// handOn makes the first waiting member the next leader, or ends the group mode's
// activity when none waits.
func (s *Store) handOn() {
	s.gmu.Lock()
	if len(s.gQueue) == 0 {
		s.gActive = false
		s.gmu.Unlock()
		return
	}
	m := s.gQueue[0]
	s.gQueue[0] = nil
	s.gQueue = s.gQueue[1:]
	s.gmu.Unlock()
	m.turn <- groupTurn{lead: true}
}

// runOn runs the member's fn on the group's tx (on the member's own goroutine, with its own
// context), tells the leader, and returns what the leader answers. A panic in fn is told
// to the leader as a failure (its writes are rolled back to its savepoint, the group goes
// on) and then panics again here, in the caller's goroutine. So is fn ending the goroutine
// (runtime.Goexit, a test's t.FailNow): the leader would otherwise wait for it forever,
// holding the writer.
func (m *groupMember) runOn(tx *sql.Tx) error {
	var p any
	told := false
	defer func() {
		if !told { // runtime.Goexit in fn: no recover, only deferred calls run
			m.ran <- errors.New("the write transaction's goroutine exited in fn")
			<-m.done
		}
	}()
	err := func() (err error) {
		defer func() {
			if p = recover(); p != nil {
				err = fmt.Errorf("panic in a write transaction: %v", p)
			}
		}()
		return m.fn(tx)
	}()
	told = true
	m.ran <- err
	res := <-m.done
	if p != nil {
		panic(p)
	}
	return res
}

// leadGroup begins the physical transaction, runs first's fn, then the queued members' in
// turn, and commits. It returns first's outcome; each member gets its own on done.
func (s *Store) leadGroup(first *groupMember) (err error) {
	release, held, err := s.enterWriters(first.ctx)
	if err != nil {
		s.handOn()
		return fmt.Errorf("%s: begin: %w", s.d.Name, err)
	}
	if !held { // the writer queue's wait ran out: no group, the pool as without one
		release()
		s.handOn()
		return s.inTxSlot(first.ctx, first.fn, false)
	}
	bg := context.WithoutCancel(first.ctx)
	tx, err := s.writer.BeginTx(bg, nil) // without cancellation: see inTxSlot
	if err != nil {
		release()
		s.handOn()
		return fmt.Errorf("%s: begin: %w", s.d.Name, err)
	}
	var members []*groupMember // savepoints released: they commit with the group
	type failure struct {
		m   *groupMember
		err error
	}
	var failed []failure // own failures, answered once the group's outcome is known
	finished := false
	defer func() {
		if finished {
			return
		}
		// first's fn panicked (no member has run yet): end the transaction on this
		// goroutine before the slot is released, as inTxSlot does.
		_ = tx.Rollback()
		s.takeOutbox(tx)
		release()
		s.handOn()
	}()
	own, lost := s.runSaved(tx, first.fn, first.ctx, nil)
	if own != nil {
		// first's own failure, with nothing of the group yet: end the transaction here and
		// let the next member lead.
		finished = true
		_ = tx.Rollback()
		if lost != nil {
			_, _ = s.writer.ExecContext(bg, "ROLLBACK")
		}
		s.takeOutbox(tx)
		release()
		s.handOn()
		return own
	}
	// The window is a bound on how long the first member waits, not an instant of the
	// domain: a runtime timer, as a context deadline would be, not the injected Clock.
	window := time.NewTimer(groupWindow)
	defer window.Stop()
	open := func() bool {
		select {
		case <-window.C:
			return false
		default:
			return true
		}
	}
	for lost == nil && len(members)+1 < s.groupMax && open() {
		m := s.popQueue()
		if m == nil {
			break
		}
		if _, err := tx.ExecContext(bg, "SAVEPOINT g"); err != nil {
			// Its turn never came: back at the head of the queue, for the next group.
			s.gmu.Lock()
			s.gQueue = append([]*groupMember{m}, s.gQueue...)
			s.gmu.Unlock()
			lost = fmt.Errorf("savepoint: %w", err)
			break
		}
		var fnErr error
		fnErr, lost = s.runSaved(tx, nil, m.ctx, m)
		switch {
		case fnErr != nil && lost == nil:
			// Its own failure: nothing of it is written. It may have failed on what the
			// members before it wrote (a version that moved, a key that exists), which no
			// other connection sees before the COMMIT: its caller hears it only then.
			failed = append(failed, failure{m, fnErr})
		case fnErr != nil:
			m.done <- fmt.Errorf("%s: %w: %w (%w)", s.d.Name, errGroupLost, lost, fnErr)
		case lost != nil:
			m.done <- fmt.Errorf("%s: %w: %w", s.d.Name, errGroupLost, lost)
		default:
			members = append(members, m)
		}
	}
	finished = true
	fail := func(err error) error {
		s.takeOutbox(tx)
		for _, m := range members {
			m.done <- err
		}
		for _, f := range failed {
			// What it failed on was never committed: it runs again, alone (inGroup).
			f.m.done <- fmt.Errorf("%s: %w: %w (%w)", s.d.Name, errGroupLost, err, f.err)
		}
		release()
		s.handOn()
		return err
	}
	if lost != nil {
		_ = tx.Rollback()
		_, _ = s.writer.ExecContext(bg, "ROLLBACK") // the connection must start the next BEGIN clean
		return fail(fmt.Errorf("%s: %w: %w", s.d.Name, errGroupLost, lost))
	}
	commitAt := s.commitWatch()
	if err := tx.Commit(); err != nil {
		_, _ = s.writer.ExecContext(bg, "ROLLBACK") // see inTxSlot
		return fail(fmt.Errorf("%s: commit: %w", s.d.Name, err))
	}
	s.observeCommit(commitAt)
	s.wstats.commits.Add(1)
	s.wstats.transactions.Add(int64(len(members) + 1))
	if s.afterCommit != nil {
		s.afterCommit()
	}
	if n := s.takeOutbox(tx); n > 0 {
		s.onOutbox(n)
	}
	for _, m := range members {
		m.done <- nil
	}
	for _, f := range failed {
		f.m.done <- f.err
	}
	release()
	s.handOn()
	return nil
}

// runSaved runs one transaction of the group in a savepoint: fn on this goroutine (which
// begins the savepoint), or member's fn on the member's goroutine (runOn; the leader has
// begun its savepoint). fnErr is the transaction's own failure
// (its writes rolled back to the savepoint, the outbox count it added taken back); lost
// means the physical transaction is gone (a savepoint statement failed).
func (s *Store) runSaved(tx *sql.Tx, fn func(*sql.Tx) error, ctx context.Context, member *groupMember) (fnErr, lost error) {
	bg := context.WithoutCancel(ctx)
	before := s.peekOutbox(tx)
	if member == nil {
		if _, err := tx.ExecContext(bg, "SAVEPOINT g"); err != nil {
			return nil, fmt.Errorf("savepoint: %w", err)
		}
	}
	if member != nil {
		member.turn <- groupTurn{tx: tx}
		fnErr = <-member.ran
	} else {
		fnErr = fn(tx)
	}
	if fnErr == nil {
		if _, err := tx.ExecContext(bg, "RELEASE g"); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		return nil, nil
	}
	s.setOutbox(tx, before)
	if _, err := tx.ExecContext(bg, "ROLLBACK TO g"); err != nil {
		return fnErr, fmt.Errorf("rollback to savepoint: %w", err)
	}
	if _, err := tx.ExecContext(bg, "RELEASE g"); err != nil {
		return fnErr, fmt.Errorf("release: %w", err)
	}
	return fnErr, nil
}
