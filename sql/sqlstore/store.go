package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
)

// Store implements store.Store over database/sql for one dialect.
type Store struct {
	db *sql.DB
	q  *Queries
	d  Dialect
	// closeFn, when set, runs on Close (dialects own extra resources).
	closeFn func() error

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // prepared once per pool, by query name (multi-row: name#rows)
	multi map[string]*multiRow // multi-row queries, split once, by query name
	// writers is the writer queue (Dialect.WriterQueue): a slot is held from BeginTx to
	// Commit or Rollback. Nil: no queue.
	writers chan struct{}
	// writer, when set (UseWriterConn), is the connection every transaction that holds the
	// writer queue's slot begins on; only the slot's holder touches it. afterCommit, when
	// set, runs after each commit on it, still holding the slot.
	writer      *sql.Conn
	afterCommit func()
	// onOutbox (OnOutboxCommit) is told after each commit how many outbox rows it wrote;
	// outboxRows counts them per open transaction (noteOutbox), bounded by the transactions
	// open at once (each entry is removed when its transaction ends).
	onOutbox   func(int)
	outboxMu   sync.Mutex
	outboxRows map[*sql.Tx]int
	// Group commit on the writer (group.go): groupMax > 1 turns it on; gQueue holds the
	// transactions waiting for the running group (at most one per goroutine that writes),
	// gActive says a leader runs. wstats counts transactions and commits on the writer.
	groupMax int
	gmu      sync.Mutex
	gActive  bool
	gQueue   []*groupMember
	wstats   writeStats
	// txObs (SetTxObserver; nil: none) hears each write transaction's kind and hold.
	txObs atomic.Pointer[TxObserver]
}

var _ store.OutboxCommitNotifier = (*Store)(nil)

// OnOutboxCommit implements store.OutboxCommitNotifier.
func (s *Store) OnOutboxCommit(fn func(rows int)) { s.onOutbox = fn }

// noteOutbox counts n outbox rows written in tx, for the commit hook (OnOutboxCommit). A
// row written without a transaction (tx nil: its statement committed on its own) is
// announced at once.
func (s *Store) noteOutbox(tx *sql.Tx, n int) {
	if s.onOutbox == nil || n <= 0 {
		return
	}
	if tx == nil {
		s.onOutbox(n)
		return
	}
	s.outboxMu.Lock()
	if s.outboxRows == nil {
		s.outboxRows = map[*sql.Tx]int{}
	}
	s.outboxRows[tx] += n
	s.outboxMu.Unlock()
}

// peekOutbox returns tx's count (noteOutbox) so far.
func (s *Store) peekOutbox(tx *sql.Tx) int {
	if s.onOutbox == nil {
		return 0
	}
	s.outboxMu.Lock()
	defer s.outboxMu.Unlock()
	return s.outboxRows[tx]
}

// setOutbox sets tx's count back to n (a savepoint rolled back what was counted after it).
func (s *Store) setOutbox(tx *sql.Tx, n int) {
	if s.onOutbox == nil {
		return
	}
	s.outboxMu.Lock()
	defer s.outboxMu.Unlock()
	if n == 0 {
		delete(s.outboxRows, tx)
		return
	}
	s.outboxRows[tx] = n
}

// takeOutbox removes tx's count (noteOutbox) and returns it.
func (s *Store) takeOutbox(tx *sql.Tx) int {
	if s.onOutbox == nil {
		return 0
	}
	s.outboxMu.Lock()
	n, ok := s.outboxRows[tx]
	if ok {
		delete(s.outboxRows, tx)
	}
	s.outboxMu.Unlock()
	return n
}

var _ store.Store = (*Store)(nil)

// New wraps an open, migrated database. onClose (optional) runs after db.Close.
func New(db *sql.DB, q *Queries, d Dialect, onClose func() error) *Store {
	s := &Store{db: db, q: q, d: d, closeFn: onClose}
	if d.WriterQueue {
		s.writers = make(chan struct{}, 1)
	}
	return s
}

// PrepareAll prepares every named query on the pool up front. Dialects call it from Open:
// a statement first needed inside a transaction then never has to be prepared on the pool
// while the transaction holds the write lock (see stmt), and is parsed once per pooled
// connection instead of once per use.
// A multi-row query is also prepared at each size a statement of it can have (multiRow.per
// rows, and each power of two below it: multiRow.sizes), so no batch parses SQL.
func (s *Store) PrepareAll(ctx context.Context) error {
	for _, name := range s.q.Names() {
		if _, err := s.stmt(ctx, nil, name); err != nil {
			return err
		}
		if !strings.Contains(s.q.SQL(name), "/*row*/") {
			continue
		}
		m, err := s.multiRow(name)
		if err != nil {
			return err
		}
		for _, n := range m.prepared {
			if _, err := s.stmtText(ctx, nil, m.key(n), m.text[n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// DB exposes the pool for migrations and diagnostics.
func (s *Store) DB() *sql.DB { return s.db }

// UseWriterConn pins one connection of the pool as the writer: from then on every
// transaction that holds the writer queue's slot (Dialect.WriterQueue) begins on conn, so
// the pages a write transaction reads and dirties stay in that one connection's page cache
// from one transaction to the next (docs/performance.md, "One writer connection"). A
// transaction that finds no slot (the queue's wait ran out, or it was begun inside another
// one's fn) begins on the pool as before. afterCommit (optional) runs after every commit
// on conn, while the slot is still held; it must not block (the SQLite dialect uses it to
// wake its background checkpointer). The store closes conn on Close. Call it once, right
// after New, before the store is shared. Errors: the dialect has no writer queue.
func (s *Store) UseWriterConn(conn *sql.Conn, afterCommit func()) error {
	if s.writers == nil {
		return fmt.Errorf("%s: a writer connection needs the writer queue", s.d.Name)
	}
	s.writer, s.afterCommit = conn, afterCommit
	return nil
}

// Close closes the prepared statements and the pool.
func (s *Store) Close() error {
	if s.writer != nil {
		_ = s.writer.Close()
	}
	s.mu.Lock()
	for _, st := range s.stmts {
		_ = st.Close()
	}
	s.stmts = nil
	s.mu.Unlock()
	err := s.db.Close()
	if s.closeFn != nil {
		err = errors.Join(err, s.closeFn())
	}
	return err
}

// stmt returns the prepared statement for a named query, bound to tx when tx is non-nil.
func (s *Store) stmt(ctx context.Context, tx *sql.Tx, name string) (*sql.Stmt, error) {
	return s.stmtText(ctx, tx, name, s.q.SQL(name))
}

// stmtText is stmt for the statement text under key (a query name, or name#rows for a
// multi-row query's full-size expansion).
func (s *Store) stmtText(ctx context.Context, tx *sql.Tx, name, text string) (*sql.Stmt, error) {
	s.mu.Lock()
	st, ok := s.stmts[name]
	s.mu.Unlock()
	if !ok && tx != nil {
		// Not prepared by PrepareAll (a store built without it): prepare on the transaction's
		// own connection. Preparing on the pool here could wait for a free connection while
		// this transaction holds the write lock that every other connection is waiting for (a
		// deadlock until the busy timeout). The statement closes with the transaction.
		prepared, err := tx.PrepareContext(ctx, text)
		if err != nil {
			return nil, fmt.Errorf("%s prepare %s: %w", s.d.Name, name, err)
		}
		return prepared, nil
	}
	if !ok {
		prepared, err := s.db.PrepareContext(ctx, text)
		if err != nil {
			return nil, fmt.Errorf("%s prepare %s: %w", s.d.Name, name, err)
		}
		s.mu.Lock()
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		if existing, ok := s.stmts[name]; ok {
			_ = prepared.Close()
			prepared = existing
		} else {
			s.stmts[name] = prepared
		}
		s.mu.Unlock()
		st = prepared
	}
	if tx != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

// exec runs a named statement on tx (nil: the pool).
//
// With a writer connection (UseWriterConn), a statement without tx runs in a transaction of
// its own through inTx, so it takes the writer queue's slot and the writer connection like
// every other write: on a pooled connection it would wait on SQLite's lock by polling, and
// its commit would make the writer's connection empty its whole page cache before its next
// transaction (SQLite does that when another connection wrote). Every store method that
// runs exec without tx runs one statement, so the transaction changes nothing else.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, name string, args ...any) (sql.Result, error) {
	if tx == nil && s.writer != nil {
		var res sql.Result
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			res, err = s.exec(ctx, tx, name, args...)
			return err
		})
		return res, err
	}
	st, err := s.stmt(ctx, tx, name)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(ctx, args...)
	if tx == nil {
		err = s.permanent(err)
	}
	return res, err
}

// permanent returns err as store.ErrValueTooLarge marked automation.Permanent when the
// dialect's IsPermanent says the database refused a value as too large for the schema
// (SQL Server error 1946 and the truncation errors), err itself otherwise. The message keeps
// the database's own text, which names the index or column.
func (s *Store) permanent(err error) error {
	if err == nil || s.d.IsPermanent == nil || errors.Is(err, store.ErrValueTooLarge) || !s.d.IsPermanent(err) {
		return err
	}
	return automation.Permanent(fmt.Errorf("%w: %w", store.ErrValueTooLarge, err))
}

// query runs a named query on tx (nil: the pool).
func (s *Store) query(ctx context.Context, tx *sql.Tx, name string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, tx, name)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryRow runs a named single-row query on tx (nil: the pool). A prepare error surfaces
// from Scan, as database/sql does.
func (s *Store) queryRow(ctx context.Context, tx *sql.Tx, name string, args ...any) *sql.Row {
	st, err := s.stmt(ctx, tx, name)
	if err != nil {
		if tx != nil {
			return tx.QueryRowContext(ctx, s.q.SQL(name), args...)
		}
		return s.db.QueryRowContext(ctx, s.q.SQL(name), args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// txAttempts bounds how often inTx runs a transaction whose failure the dialect calls
// retryable; txRetryPause is the pause before the first retry (doubled each time).
const (
	txAttempts   = 3
	txRetryPause = 50 * time.Millisecond
)

// inTx runs fn in a transaction, committing when fn returns nil. When the dialect says the
// failure is retryable (deadlock victim, transient error), the whole transaction runs again,
// up to txAttempts times: fn must only assign its results, never accumulate them.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	fn = s.observed(fn, 1)
	pause := txRetryPause
	for attempt := 1; ; attempt++ {
		err := s.permanent(s.inTxOnce(ctx, fn))
		if err == nil || automation.IsPermanent(err) || attempt == txAttempts || s.d.IsRetryable == nil || !s.d.IsRetryable(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause *= 2
	}
}

func (s *Store) inTxOnce(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.writer != nil && s.groupMax > 1 {
		return s.inGroup(ctx, fn)
	}
	return s.inTxSlot(ctx, fn, true)
}

// inTxSlot runs fn in a transaction of its own: with slot, on the writer queue's slot (and
// the pinned writer, when there is one); without, on the pool.
func (s *Store) inTxSlot(ctx context.Context, fn func(tx *sql.Tx) error, slot bool) error {
	release, held := func() {}, false
	var err error
	if slot {
		if release, held, err = s.enterWriters(ctx); err != nil {
			return fmt.Errorf("%s: begin: %w", s.d.Name, err)
		}
	}
	defer release()
	onWriter := held && s.writer != nil
	var tx *sql.Tx
	if onWriter {
		// Begun without ctx's cancellation: database/sql rolls back a transaction whose
		// context ends on a goroutine of its own, some time later, and by then the pinned
		// connection would carry the next slot holder's transaction, which that late ROLLBACK
		// would end (its statements then commit one by one). The statements still take ctx,
		// so a cancelled ctx interrupts them; the rollback below runs before the slot is
		// released, on this goroutine.
		tx, err = s.writer.BeginTx(context.WithoutCancel(ctx), nil)
	} else {
		tx, err = s.db.BeginTx(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("%s: begin: %w", s.d.Name, err)
	}
	committed, commitOK := false, false
	defer func() {
		// Also when fn panics: a transaction left open on the pinned writer would refuse
		// every later BEGIN and hang Close.
		if !committed {
			_ = tx.Rollback()
		}
		if n := s.takeOutbox(tx); n > 0 && committed && commitOK {
			s.onOutbox(n)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	commitAt := s.commitWatch()
	if err := tx.Commit(); err != nil {
		committed = true // database/sql considers the transaction done either way
		if onWriter {
			// A COMMIT that failed (SQLITE_BUSY, a full disk) leaves SQLite's transaction open
			// on the connection: end it, so the writer's next BEGIN starts clean.
			_, _ = s.writer.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
		return fmt.Errorf("%s: commit: %w", s.d.Name, err)
	}
	committed, commitOK = true, true
	if onWriter {
		s.observeCommit(commitAt)
		s.wstats.transactions.Add(1)
		s.wstats.commits.Add(1)
	}
	if onWriter && s.afterCommit != nil {
		s.afterCommit()
	}
	return nil
}

// enterWriters takes a slot in the writer queue (Dialect.WriterQueue) and returns its
// release, and whether the slot is held. It waits at most the dialect's WriterQueueWait (default 10 s): past that, or with
// no queue, it returns at once without a slot (the database's own lock wait applies, so a
// transaction begun inside another one's fn is never stuck on the queue). Errors: ctx ended
// while waiting.
func (s *Store) enterWriters(ctx context.Context) (func(), bool, error) {
	if s.writers == nil {
		return func() {}, false, nil
	}
	select {
	case s.writers <- struct{}{}:
		return func() { <-s.writers }, true, nil
	default:
	}
	wait := s.d.WriterQueueWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s.writers <- struct{}{}:
		return func() { <-s.writers }, true, nil
	case <-t.C:
		return func() {}, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// claimSize is the most rows of n one claiming statement takes: n, or the dialect's
// MaxClaim when that is smaller (Dialect.MaxClaim).
func (s *Store) claimSize(n int) int {
	if s.d.MaxClaim > 0 && n > s.d.MaxClaim {
		return s.d.MaxClaim
	}
	return n
}

// purgeBefore runs the purge query named name (up to limit rows older than before: @Before, an
// instant stored UTC, and @Limit) and returns how many rows it deleted. A limit outside
// 1..store.MaxBatch is refused before the query runs (checkLimit); a failure is wrapped with
// the dialect and the query name ("sqlite IdempotencyPurge: ...").
func (s *Store) purgeBefore(ctx context.Context, name string, before time.Time, limit int) (int, error) {
	if err := checkLimit(name, limit); err != nil {
		return 0, err
	}
	n, err := s.execCount(ctx, nil, name, sql.Named("Before", s.tm(before)), sql.Named("Limit", limit))
	return int(n), err
}

// nextWakeUp runs the query named name, which reads the earliest instant (UTC) at which a row
// it watches falls due: nil when none is waiting.
func (s *Store) nextWakeUp(ctx context.Context, name string) (*time.Time, error) {
	var t *time.Time
	if err := s.queryRow(ctx, nil, name).Scan(s.nt(&t)); err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	return t, nil
}

// versionedSave picks the statement of a save by version: insert (a new row) when version
// is 0, else update, guarded by @Version (the version read), added to args.
func versionedSave(insert, update string, version int64, args []any) (string, []any) {
	if version > 0 {
		return update, append(args, sql.Named("Version", version))
	}
	return insert, args
}

func checkLimit(what string, n int) error {
	if n <= 0 || n > store.MaxBatch {
		return fmt.Errorf("%s: limit %d outside 1..%d", what, n, store.MaxBatch)
	}
	return nil
}

// checkLease refuses a lease that is not positive: what names the call.
func checkLease(what string, lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("%s: lease %s must be positive", what, lease)
	}
	return nil
}

// checkClaim is a claim's input check: a batch limit within 1..store.MaxBatch and a positive
// lease (checkLimit, checkLease).
func checkClaim(what string, limit int, lease time.Duration) error {
	if err := checkLimit(what, limit); err != nil {
		return err
	}
	return checkLease(what, lease)
}

// ms truncates to the stored precision (milliseconds) so round trips compare equal.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func (s *Store) tm(t time.Time) any { return s.d.EncodeTime(ms(t)) }

func (s *Store) ntm(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return s.tm(*t)
}

func nstr(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// --- scanning helpers ---------------------------------------------------------------

type timeScan struct {
	d    *Dialect
	dst  *time.Time
	ndst **time.Time
}

func (t timeScan) Scan(src any) error {
	if src == nil {
		if t.ndst != nil {
			*t.ndst = nil
			return nil
		}
		return errors.New("unexpected NULL instant")
	}
	v, err := t.d.DecodeTime(src)
	if err != nil {
		return err
	}
	v = v.UTC()
	if t.ndst != nil {
		*t.ndst = &v
	} else {
		*t.dst = v
	}
	return nil
}

func (s *Store) t(dst *time.Time) sql.Scanner   { return timeScan{d: &s.d, dst: dst} }
func (s *Store) nt(dst **time.Time) sql.Scanner { return timeScan{d: &s.d, ndst: dst} }

type strScan struct{ dst *string }

func (n strScan) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.dst = ""
	case string:
		*n.dst = v
	case []byte:
		*n.dst = string(v)
	default:
		*n.dst = fmt.Sprint(v)
	}
	return nil
}

func ns(dst *string) sql.Scanner { return strScan{dst} }

type rowScanner interface{ Scan(dest ...any) error }

func (s *Store) scanScheduler(r rowScanner) (automation.SchedulerRow, error) {
	var row automation.SchedulerRow
	var at, tt, st, frc, rc string
	err := r.Scan(&row.ID, &row.Guid, &at, &tt, &row.SchedulerKey, ns(&row.SettingGuid),
		&row.SourceEntityType, &row.SourceEntityGuid, &row.BusinessUnitID, s.t(&row.ScheduledOn),
		&row.ScheduledLocalDate, &row.ScheduledLocalTime, &row.TimeZoneID, &st,
		s.nt(&row.ProcessingLeaseExpiresOn), &row.RetryCount, s.nt(&row.NextRetryOn), ns(&frc), ns(&rc),
		&row.IsOnSupportHold, &row.InputHash, ns(&row.ConflictInputHash), ns(&row.DispatchResultJSON),
		ns(&row.TraceBlobName), &row.Version, s.t(&row.CreatedOn), s.t(&row.UpdatedOn), s.nt(&row.CompletedOn), ns(&row.TraceParent))
	row.AutomationType = automation.AutomationType(at)
	row.TriggerType = automation.TriggerType(tt)
	row.Status = automation.Status(st)
	row.FailureReasonCode = automation.ReasonCode(frc)
	row.ReasonCode = automation.ReasonCode(rc)
	return row, err
}

// queryAll runs a named query on tx (nil: the pool) and scans every row with scan.
func queryAll[T any](ctx context.Context, s *Store, tx *sql.Tx, name string, scan func(rowScanner) (T, error), args ...any) ([]T, error) {
	rs, err := s.query(ctx, tx, name, args...)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	defer rs.Close()
	var out []T
	for rs.Next() {
		v, err := scan(rs)
		if err != nil {
			return nil, fmt.Errorf("%s %s: scan: %w", s.d.Name, name, err)
		}
		out = append(out, v)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	return out, nil
}

// queryPage is queryAll (outside a transaction) of a page query: its limit, which args also
// carry as @Limit, is checked first (checkLimit, naming the query), so a limit outside
// 1..store.MaxBatch runs nothing.
func queryPage[T any](ctx context.Context, s *Store, name string, limit int, scan func(rowScanner) (T, error), args ...any) ([]T, error) {
	if err := checkLimit(name, limit); err != nil {
		return nil, err
	}
	return queryAll(ctx, s, nil, name, scan, args...)
}

// batchInTx runs one for each item of ps (i its index), in order, all in one transaction,
// and returns their results in ps's order: the first error rolls every item back and is
// returned as one made it (naming the item).
func batchInTx[P, R any](ctx context.Context, s *Store, ps []P, one func(tx *sql.Tx, i int, p P) (R, error)) ([]R, error) {
	out := make([]R, len(ps))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for i, p := range ps {
			r, err := one(tx, i, p)
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queryBoth runs queries a and b (outside a transaction) with the same args and returns the
// rows of each (queryAll): two reads of one set of parameters, such as two kinds of row
// merged by the caller.
func queryBoth[T any](ctx context.Context, s *Store, a, b string, scan func(rowScanner) (T, error), args ...any) ([]T, []T, error) {
	first, err := queryAll(ctx, s, nil, a, scan, args...)
	if err != nil {
		return nil, nil, err
	}
	second, err := queryAll(ctx, s, nil, b, scan, args...)
	if err != nil {
		return nil, nil, err
	}
	return first, second, nil
}

func (s *Store) queryRows(ctx context.Context, tx *sql.Tx, name string, args ...any) ([]automation.SchedulerRow, error) {
	return queryAll(ctx, s, tx, name, s.scanScheduler, args...)
}

func (s *Store) queryOne(ctx context.Context, tx *sql.Tx, name string, args ...any) (automation.SchedulerRow, error) {
	rows, err := s.queryRows(ctx, tx, name, args...)
	if err != nil {
		return automation.SchedulerRow{}, err
	}
	if len(rows) == 0 {
		return automation.SchedulerRow{}, store.ErrNotFound
	}
	return rows[0], nil
}

// execCount runs the statement named name (in tx, or on its own when tx is nil) and returns
// how many rows it changed; a failure is wrapped with the dialect and the name.
func (s *Store) execCount(ctx context.Context, tx *sql.Tx, name string, args ...any) (int64, error) {
	res, err := s.exec(ctx, tx, name, args...)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	return n, nil
}

// execOne runs a guarded statement that must change exactly one row (a Version-guarded
// update, say): "no row changed" (or more than one) is ErrLeaseLost.
func (s *Store) execOne(ctx context.Context, tx *sql.Tx, name string, args ...any) error {
	n, err := s.execCount(ctx, tx, name, args...)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%s %s: %w", s.d.Name, name, store.ErrLeaseLost)
	}
	return nil
}

// --- SchedulerStore -----------------------------------------------------------------

// SchedulerEnsure implements store.SchedulerStore (ensure table: automation.DecideEnsure).
func (s *Store) SchedulerEnsure(ctx context.Context, p store.SchedulerEnsureParams) ([]store.EnsureResult, error) {
	if len(p.Candidates) == 0 {
		return nil, nil
	}
	if err := validateCandidates("SchedulerEnsure", p.Candidates); err != nil {
		return nil, err
	}
	// Lock rows in key order so concurrent batches cannot deadlock; answer in input order.
	order := make([]int, len(p.Candidates))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return p.Candidates[order[a]].SchedulerKey < p.Candidates[order[b]].SchedulerKey })
	// The first look is an optimisation: when its read fails the ensure transaction, which
	// reads every row again under its lock, decides as it did before the first look existed;
	// only a context already done fails at once.
	if out, err := s.ensureNoWrite(ctx, p.Candidates); err == nil && out != nil {
		return out, nil
	} else if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		ensureReadFailed(ctx, err)
	}
	out := make([]store.EnsureResult, len(p.Candidates))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, i := range order {
			r, err := s.ensureOne(ctx, tx, p.Now, p.Candidates[i])
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ensureNoWrite is SchedulerEnsure's first look: the candidates' rows in one read on the
// pool (SchedulerGetByKeys, one statement, so one committed state), outside any write
// transaction. When every candidate decides an ensure that writes nothing (Unchanged,
// AlreadyCompleted, InProgress: automation.DecideEnsure with the row read), it returns their
// results and SchedulerEnsure takes no writer: a reconciliation sweep over sources whose rows
// are all in place (behind the 09:00 herd, 1,000 of them held the one SQLite writer for
// 1.8 s) costs a read. The answer is the one the ensure transaction would have given at
// the instant of the read; nothing is written, so nothing can be lost to a later change.
// It returns nil (and no error) when a candidate needs a write or its key has no row: the
// caller then runs the ensure transaction, which reads every row again under its lock.
// Errors: the read's. SchedulerEnsure runs the ensure transaction after a failed read too
// (a dropped pooled connection, a read timeout: the read was only a shortcut), unless ctx
// is done; the failure is an event on the caller's span (ensureReadFailed).
func (s *Store) ensureNoWrite(ctx context.Context, cs []automation.Candidate) ([]store.EnsureResult, error) {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.SchedulerKey
	}
	keysJSON, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := s.queryRows(ctx, nil, "SchedulerGetByKeys", sql.Named("Keys", string(keysJSON)))
	if err != nil {
		return nil, err // named by queryAll: dialect and query
	}
	byKey := make(map[string]int, len(rows))
	for i, r := range rows {
		byKey[r.SchedulerKey] = i
	}
	out := make([]store.EnsureResult, len(cs))
	for i, c := range cs {
		j, ok := byKey[c.SchedulerKey]
		if !ok {
			return nil, nil
		}
		switch a := automation.DecideEnsure(&rows[j], c); a {
		case automation.EnsureUnchanged, automation.EnsureAlreadyCompleted, automation.EnsureInProgress:
			out[i] = store.EnsureResult{Action: a, Row: rows[j]}
		default:
			return nil, nil
		}
	}
	return out, nil
}

// ensureReadFailed notes on the span of ctx (when it records) that SchedulerEnsure's
// first look failed with err and the ensure transaction ran instead: event
// scheduler.ensure.read_failed with exception.message. Not a metric and not a log line: the
// store has neither, the ensure still answered right, and its cost (a writer turn, as every
// ensure took before the first look) shows in the writer's hold per kind (TxObserver); the
// event is where a read that fails every time (SchedulerGetByKeys refused by the server)
// shows its error. Telemetry off or unsampled: nothing is built.
func ensureReadFailed(ctx context.Context, err error) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("scheduler.ensure.read_failed", trace.WithAttributes(attribute.String("exception.message", err.Error())))
	}
}

// validateCandidates rejects a batch that is too large, has a candidate without key or
// InputHash or with a key longer than the column, or names one key twice.
func validateCandidates(op string, cs []automation.Candidate) error {
	if err := checkLimit(op, len(cs)); err != nil {
		return err
	}
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		if c.SchedulerKey == "" || c.InputHash == "" {
			return fmt.Errorf("%s: candidate without SchedulerKey or InputHash", op)
		}
		if len(c.SchedulerKey) > automation.MaxSchedulerKeyLength {
			return fmt.Errorf("%s: key longer than %d characters (use automation.ShortenKey)", op, automation.MaxSchedulerKeyLength)
		}
		if seen[c.SchedulerKey] {
			return fmt.Errorf("%s: key %q appears twice in one batch", op, c.SchedulerKey)
		}
		seen[c.SchedulerKey] = true
	}
	return nil
}

func (s *Store) ensureOne(ctx context.Context, tx *sql.Tx, now time.Time, c automation.Candidate) (store.EnsureResult, error) {
	existing, err := s.queryOne(ctx, tx, "SchedulerGetByKeyForUpdate", sql.Named("SchedulerKey", c.SchedulerKey))
	var cur *automation.SchedulerRow
	switch {
	case err == nil:
		cur = &existing
	case errors.Is(err, store.ErrNotFound):
	default:
		return store.EnsureResult{}, err
	}
	action := automation.DecideEnsure(cur, c)
	res := store.EnsureResult{Action: action}
	switch action {
	case automation.EnsureInserted, automation.EnsureRecordedMissed:
		status, reason := automation.StatusPending, automation.ReasonCode("")
		if action == automation.EnsureRecordedMissed {
			status, reason = automation.StatusDeactivated, c.MissedReason
		}
		res.Row, err = s.queryOne(ctx, tx, "SchedulerInsert",
			sql.Named("Guid", store.RowGuid(c.SchedulerKey)),
			sql.Named("AutomationType", string(c.AutomationType)),
			sql.Named("TriggerType", string(c.TriggerType)),
			sql.Named("SchedulerKey", c.SchedulerKey),
			sql.Named("SettingGuid", nstr(c.SettingGuid)),
			sql.Named("SourceEntityType", c.SourceEntityType),
			sql.Named("SourceEntityGuid", c.SourceEntityGuid),
			sql.Named("BusinessUnitId", c.BusinessUnitID),
			sql.Named("ScheduledOn", s.tm(c.ScheduledOn)),
			sql.Named("ScheduledLocalDate", c.ScheduledLocalDate),
			sql.Named("ScheduledLocalTime", c.ScheduledLocalTime),
			sql.Named("TimeZoneId", c.TimeZoneID),
			sql.Named("Status", string(status)),
			sql.Named("ReasonCode", nstr(string(reason))),
			sql.Named("InputHash", c.InputHash),
			sql.Named("Now", s.tm(now)),
			sql.Named("TraceParent", traceParent(ctx, store.OutboxMessage{})))
	case automation.EnsureUpdated, automation.EnsureReactivated:
		res.Row, err = s.queryOne(ctx, tx, "SchedulerReschedule",
			sql.Named("ScheduledOn", s.tm(c.ScheduledOn)),
			sql.Named("ScheduledLocalDate", c.ScheduledLocalDate),
			sql.Named("ScheduledLocalTime", c.ScheduledLocalTime),
			sql.Named("TimeZoneId", c.TimeZoneID),
			sql.Named("Now", s.tm(now)),
			sql.Named("Id", cur.ID), sql.Named("Version", cur.Version))
	case automation.EnsureConflict:
		res.Row, err = s.queryOne(ctx, tx, "SchedulerHoldConflict",
			sql.Named("ConflictInputHash", c.InputHash),
			sql.Named("Now", s.tm(now)),
			sql.Named("Id", cur.ID), sql.Named("Version", cur.Version))
	default: // Unchanged, AlreadyCompleted, InProgress
		res.Row = *cur
	}
	if err != nil {
		return res, fmt.Errorf("ensure %q (%s): %w", c.SchedulerKey, action, err)
	}
	return res, nil
}

// SchedulerGetByKey implements store.SchedulerStore.
func (s *Store) SchedulerGetByKey(ctx context.Context, key string) (automation.SchedulerRow, error) {
	return s.queryOne(ctx, nil, "SchedulerGetByKey", sql.Named("SchedulerKey", key))
}

// SchedulerListBySource implements store.SchedulerStore.
func (s *Store) SchedulerListBySource(ctx context.Context, p store.SchedulerListParams) ([]automation.SchedulerRow, error) {
	if err := checkLimit("SchedulerListBySource", p.Limit); err != nil {
		return nil, err
	}
	return s.queryRows(ctx, nil, "SchedulerListBySource",
		sql.Named("SourceEntityType", p.SourceEntityType),
		sql.Named("SourceEntityGuid", p.SourceEntityGuid),
		sql.Named("Limit", p.Limit))
}

// SchedulerClaimDue implements store.SchedulerStore.
func (s *Store) SchedulerClaimDue(ctx context.Context, p store.SchedulerClaimDueParams) ([]automation.SchedulerRow, error) {
	if err := checkClaim("SchedulerClaimDue", p.Limit, p.Lease); err != nil {
		return nil, err
	}
	var rows []automation.SchedulerRow
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// Statements of at most the dialect's MaxClaim rows (claimSize), until the limit is
		// reached or one comes back short: rows an earlier statement claimed are Processing
		// and not taken again.
		rows = nil
		for len(rows) < p.Limit {
			n := s.claimSize(p.Limit - len(rows))
			got, err := s.queryRows(ctx, tx, "SchedulerClaimDue",
				sql.Named("Now", s.tm(p.Now)),
				sql.Named("LeaseExpiresOn", s.tm(p.Now.Add(p.Lease))),
				sql.Named("Limit", n))
			if err != nil {
				return err
			}
			rows = append(rows, got...)
			if len(got) < n {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].ScheduledOn.Equal(rows[j].ScheduledOn) {
			return rows[i].ScheduledOn.Before(rows[j].ScheduledOn)
		}
		return rows[i].ID < rows[j].ID
	})
	return rows, nil
}

// SchedulerComplete implements store.SchedulerStore: complete + NotificationJob + outbox +
// follow-up ensures in one transaction (docs/architecture.md#hand-off).
func (s *Store) SchedulerComplete(ctx context.Context, p store.SchedulerCompleteParams) error {
	errs, err := s.SchedulerCompleteBatch(ctx, []store.SchedulerCompleteParams{p})
	if err != nil {
		return err
	}
	return errs[0]
}

// SchedulerCompleteBatch implements store.SchedulerStore. The Version-guarded UPDATE of
// the items runs first, set-based (completeFenced); only an item it completed has its
// delivery rows, outbox messages and follow-ups written, so a stale item leaves no trace.
func (s *Store) SchedulerCompleteBatch(ctx context.Context, items []store.SchedulerCompleteParams) ([]error, error) {
	if err := checkLimit("SchedulerCompleteBatch", len(items)); err != nil {
		return nil, err
	}
	for _, p := range items {
		if len(p.Deliveries) > store.MaxBatch || len(p.Outbox) > store.MaxBatch || len(p.FollowUps) > store.MaxBatch {
			return nil, fmt.Errorf("SchedulerComplete: more than %d deliveries, messages or follow-ups", store.MaxBatch)
		}
		if len(p.FollowUps) > 0 {
			if err := validateCandidates("SchedulerComplete follow-ups", p.FollowUps); err != nil {
				return nil, err
			}
		}
	}
	itemErrs := make([]error, len(items))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// Step 1: the items' Version-fenced UPDATE; only the items it completed go on.
		completed, err := s.completeFenced(ctx, tx, items)
		if err != nil {
			return err
		}
		done := make([]store.SchedulerCompleteParams, 0, len(items))
		for i, p := range items {
			itemErrs[i] = nil
			if !completed[i] {
				itemErrs[i] = fmt.Errorf("%s SchedulerComplete: %w", s.d.Name, store.ErrLeaseLost)
				continue
			}
			done = append(done, p)
		}
		// Step 2: the completed items' hand-off, in the same transaction.
		return s.handOff(ctx, tx, done)
	})
	if err != nil {
		return nil, err
	}
	return itemErrs, nil
}

// fenceKey names one Version-fenced write: the row's Id and the Version (token) the writer
// read. The row a fenced multi-row statement returns maps back by (Id, Version-1).
type fenceKey struct{ id, token int64 }

// completeFenced is the fenced step of SchedulerCompleteBatch, inside tx: completed[i]
// reports whether items[i] moved its row from Processing at Version items[i].Token to
// Completed (Version+1, its own DispatchResultJson, CompletedOn = its Now). One item runs
// SchedulerComplete; more run SchedulerCompleteMany, rowsPer rows per statement (fewer when
// the dialect's MaxParams requires), whose RETURNING/OUTPUT lists the completed rows by Id
// and new Version.
//
// The result is the one the items would get one after another, in order: of the items
// fencing one row, the first whose Token is the row's Version completes it, and every other
// one finds it stale (a wrong Version, or no longer Processing). So a repeated (ID, Token)
// is sent once, its first copy; its later copies are not completed. Items of one row with
// different tokens may share a statement: at most one of them matches the row's Version.
// Errors: the statement's, or a returned row that no item fenced (a store bug).
func (s *Store) completeFenced(ctx context.Context, tx *sql.Tx, items []store.SchedulerCompleteParams) ([]bool, error) {
	completed := make([]bool, len(items))
	if len(items) == 1 {
		p := items[0]
		err := s.execOne(ctx, tx, "SchedulerComplete",
			sql.Named("DispatchResultJson", nstr(p.DispatchResultJSON)),
			sql.Named("Now", s.tm(p.Now)),
			sql.Named("Id", p.ID), sql.Named("Token", p.Token))
		if errors.Is(err, store.ErrLeaseLost) {
			return completed, nil
		}
		completed[0] = err == nil
		return completed, err
	}
	first := make(map[fenceKey]int, len(items))
	rows := make([]map[string]any, 0, len(items))
	for i, p := range items {
		k := fenceKey{p.ID, p.Token}
		if _, dup := first[k]; dup {
			continue
		}
		first[k] = i
		rows = append(rows, map[string]any{"Id": p.ID, "Token": p.Token,
			"DispatchResultJson": nstr(p.DispatchResultJSON), "Now": s.tm(p.Now)})
	}
	err := s.queryMultiRows(ctx, tx, "SchedulerCompleteMany", rows, func(r rowScanner) error {
		var id, version int64
		if err := r.Scan(&id, &version); err != nil {
			return err
		}
		i, ok := first[fenceKey{id, version - 1}]
		if !ok || completed[i] {
			return fmt.Errorf("completed row %d at Version %d, which no item fenced", id, version)
		}
		completed[i] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return completed, nil
}

// handOff writes the hand-off of items inside tx: their delivery rows in one statement
// (NotificationInsertMany), their outbox messages in one (OutboxInsertMany), then their
// follow-ups, in item order.
func (s *Store) handOff(ctx context.Context, tx *sql.Tx, items []store.SchedulerCompleteParams) error {
	if err := s.insertDeliveries(ctx, tx, items); err != nil {
		return err
	}
	if err := s.insertOutbox(ctx, tx, items); err != nil {
		return err
	}
	for _, p := range items {
		for _, c := range p.FollowUps {
			if _, err := s.ensureOne(ctx, tx, p.Now, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// insertDeliveries writes the delivery rows of items with NotificationInsertMany (rowsPer
// rows per statement). A row whose DeliveryKey or (BusinessUnitId, EffectKey) appeared
// earlier in items is dropped first: inserted one by one, it would have been a no-op
// (NotificationInsert), and a set-based guard does not see the statement's own rows.
func (s *Store) insertDeliveries(ctx context.Context, tx *sql.Tx, items []store.SchedulerCompleteParams) error {
	var rows []map[string]any
	seenKey, seenEffect := map[string]bool{}, map[[2]string]bool{}
	for _, p := range items {
		now := s.tm(p.Now)
		for _, d := range p.Deliveries {
			effect, day := d.EffectKey, d.LocalDate
			if effect == "" {
				effect = d.DeliveryKey
			}
			if day == "" {
				day = p.Now.UTC().Format("2006-01-02")
			}
			if seenKey[d.DeliveryKey] || seenEffect[[2]string{d.BusinessUnitID, effect}] {
				continue
			}
			seenKey[d.DeliveryKey], seenEffect[[2]string{d.BusinessUnitID, effect}] = true, true
			rows = append(rows, map[string]any{"Ord": len(rows), "DeliveryKey": d.DeliveryKey, "EffectKey": effect,
				"SchedulerKey": d.SchedulerKey, "SchedulerId": p.ID, "BusinessUnitId": d.BusinessUnitID, "Channel": d.Channel, "Recipient": d.Recipient,
				"Template": d.Template, "PayloadJson": d.PayloadJSON, "LocalDate": day, "Now": now})
		}
	}
	return s.execRows(ctx, tx, "NotificationInsertMany", rows)
}

// insertOutbox writes the outbox messages of items with OutboxInsertMany. A MessageId that
// appeared earlier in items is dropped first (one by one, its insert was a no-op).
func (s *Store) insertOutbox(ctx context.Context, tx *sql.Tx, items []store.SchedulerCompleteParams) error {
	var rows []map[string]any
	seen := map[string]bool{}
	for _, p := range items {
		now := s.tm(p.Now)
		for _, m := range p.Outbox {
			if seen[m.MessageID] {
				continue
			}
			seen[m.MessageID] = true
			body := m.Body
			if body == nil {
				body = []byte{}
			}
			rows = append(rows, map[string]any{"Ord": len(rows), "MessageId": m.MessageID, "Destination": m.Destination,
				"SessionId": nstr(m.SessionID), "Body": body, "Envelope": boolInt(m.Envelope), "Now": now, "TraceParent": traceParent(ctx, m)})
		}
	}
	if err := s.execRows(ctx, tx, "OutboxInsertMany", rows); err != nil {
		return err
	}
	// A MessageId already taken inserts nothing; counting it is harmless (the publisher
	// then finds nothing more to claim), so the rows offered are counted.
	s.noteOutbox(tx, len(rows))
	return nil
}

// rowsPer bounds the rows of one multi-row statement (execRows): past about 100 rows a
// longer statement saves nothing measurable, and a dialect's parameter bound may be lower.
const rowsPer = 100

// multiRow is a multi-row query split once (splitRows): per is its most rows per
// statement, names[i] the parameter names of row i (@Name_i), and text[n] the statement
// expanded for n rows, for each n in prepared: per and every power of two below it, the
// sizes sizes splits a batch into. Each is prepared once (PrepareAll) under key(n): a batch
// of any length runs prepared statements and parses no SQL (parsing a 50-row statement
// cost more than running it: docs/performance.md, "Prepared statements for every batch").
// With the dialect's PositionalRows, occ lists the tuple's parameters in order of
// occurrence (a repeated one repeats) and the rows are bound by position instead.
//
// A rows parameter query (Dialect.EncodeRows) has one text for any number of rows: jsonRows
// is set, params are its row members ('$.Name' paths), and each statement binds @Rows.
type multiRow struct {
	name              string
	jsonRows          bool
	head, tuple, tail string
	params, occ       []string
	per               int
	names             [][]string
	prepared          []int // per, then the powers of two below it, largest first
	text              map[int]string
}

// key names the statement of n rows among the store's prepared statements.
func (m *multiRow) key(n int) string { return m.name + "#" + strconv.Itoa(n) }

// sizes splits n rows into statements of prepared sizes, in order: as many of per as fit,
// then the binary digits of the rest, largest first (99 rows of per 100: 64, 32, 2, 1).
// At most per rows go to one statement, and at most ⌊log2 per⌋+1 statements take the rest.
func (m *multiRow) sizes(n int) []int {
	var out []int
	for ; n >= m.per; n -= m.per {
		out = append(out, m.per)
	}
	for _, k := range m.prepared[1:] {
		if n >= k {
			out = append(out, k)
			n -= k
		}
	}
	return out
}

// expand returns the statement text for n rows: named (expandRows), or with each row's
// parameters as anonymous "?" when the rows bind by position.
func (m *multiRow) expand(n int) string {
	if m.occ == nil {
		return expandRows(m.head, m.tuple, m.tail, m.params, n)
	}
	return expandRows(m.head, rowParam.ReplaceAllLiteralString(m.tuple, "?"), m.tail, nil, n)
}

// multiRow returns the split form of the multi-row query name, building it on first use.
func (s *Store) multiRow(name string) (*multiRow, error) {
	s.mu.Lock()
	m, ok := s.multi[name]
	s.mu.Unlock()
	if ok {
		return m, nil
	}
	text := s.q.SQL(name)
	if !strings.Contains(text, "/*row*/") && s.d.EncodeRows != nil {
		params, err := rowsParamMembers(text)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
		m = &multiRow{name: name, jsonRows: true, params: params, per: rowsPer, prepared: []int{rowsPer}}
		s.rememberMulti(m)
		return m, nil
	}
	head, tuple, tail, params, err := splitRows(text)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	// Every parameter of a multi-row statement is a row's: rowArgs binds nothing else.
	if rowParam.MatchString(sqlLineComment.ReplaceAllString(head, "")) || rowParam.MatchString(sqlLineComment.ReplaceAllString(tail, "")) {
		return nil, fmt.Errorf("%s %s: a multi-row query needs every parameter inside the row tuple", s.d.Name, name)
	}
	per := rowsPer
	if limit := s.d.MaxParams; limit > 0 && len(params) > 0 {
		if len(params) > limit {
			return nil, fmt.Errorf("%s %s: one row needs %d parameters, over the dialect's %d", s.d.Name, name, len(params), limit)
		}
		per = max(1, min(per, limit/len(params)))
	}
	m = &multiRow{name: name, head: head, tuple: tuple, tail: tail, params: params, per: per}
	if s.d.PositionalRows {
		for _, o := range rowParam.FindAllStringSubmatch(tuple, -1) {
			m.occ = append(m.occ, o[1])
		}
	} else {
		m.names = make([][]string, per)
		for i := range m.names {
			m.names[i] = make([]string, len(params))
			for j, p := range params {
				m.names[i][j] = p + "_" + strconv.Itoa(i)
			}
		}
	}
	m.prepared, m.text = []int{per}, map[int]string{per: m.expand(per)}
	if per > 1 { // a statement of one row has no smaller sizes (and 1 << -1 would panic)
		for k := 1 << (bits.Len(uint(per-1)) - 1); k >= 1; k >>= 1 {
			m.prepared, m.text[k] = append(m.prepared, k), m.expand(k)
		}
	}
	s.rememberMulti(m)
	return m, nil
}

// rememberMulti keeps m, the parsed form of the multi-row query m.name, for the store's
// later calls (s.multi, under s.mu).
func (s *Store) rememberMulti(m *multiRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.multi == nil {
		s.multi = map[string]*multiRow{}
	}
	s.multi[m.name] = m
}

// execRows runs the multi-row query name for rows, in statements of at most rowsPer rows
// (fewer when the dialect's MaxParams requires), split by multiRow.sizes, each the query
// expanded by expandRows and prepared (PrepareAll; a store built without it prepares on
// tx). A row supplies every parameter its tuple names (a missing one is an error). A rows
// parameter query (Dialect.EncodeRows) runs instead as its one text per rowsPer rows, the
// rows encoded into @Rows (eachRowsParam).
func (s *Store) execRows(ctx context.Context, tx *sql.Tx, name string, rows []map[string]any) error {
	return s.eachStatement(ctx, tx, name, rows, func(st *sql.Stmt, args []any) error {
		_, err := st.ExecContext(ctx, args...)
		return err
	})
}

// eachStatement runs run for each statement of the multi-row query name that rows split
// into (multiRow.sizes), in order, with the statement prepared on tx and its rows' arguments;
// it stops at the first error.
func (s *Store) eachStatement(ctx context.Context, tx *sql.Tx, name string, rows []map[string]any, run func(st *sql.Stmt, args []any) error) error {
	if len(rows) == 0 {
		return nil
	}
	m, err := s.multiRow(name)
	if err != nil {
		return err
	}
	if m.jsonRows {
		return s.eachRowsParam(ctx, tx, m, rows, run)
	}
	start := 0
	for _, n := range m.sizes(len(rows)) {
		chunk := rows[start : start+n]
		args, err := s.rowArgs(name, m, start, chunk)
		if err != nil {
			return err
		}
		start += n
		st, err := s.stmtText(ctx, tx, m.key(n), m.text[n])
		if err == nil {
			err = run(st, args)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
	}
	return nil
}

// eachRowsParam is eachStatement for a rows parameter query: rows in statements of at most
// m.per rows, each the query's one prepared text with its rows encoded into @Rows
// (Dialect.EncodeRows). A row that lacks a member is an error, before anything runs.
func (s *Store) eachRowsParam(ctx context.Context, tx *sql.Tx, m *multiRow, rows []map[string]any, run func(st *sql.Stmt, args []any) error) error {
	for i, r := range rows {
		for _, p := range m.params {
			if _, ok := r[p]; !ok {
				return fmt.Errorf("%s %s: row %d has no @%s", s.d.Name, m.name, i, p)
			}
		}
	}
	for start := 0; start < len(rows); start += m.per {
		v, err := s.d.EncodeRows(rows[start:min(start+m.per, len(rows))])
		if err != nil {
			return fmt.Errorf("%s %s: rows from %d: %w", s.d.Name, m.name, start, err)
		}
		st, err := s.stmt(ctx, tx, m.name)
		if err == nil {
			err = run(st, []any{sql.Named("Rows", v)})
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", s.d.Name, m.name, err)
		}
	}
	return nil
}

// jsonPath finds the row members of a rows parameter query: '$.Name' JSON paths.
var jsonPath = regexp.MustCompile(`'\$\.([A-Za-z][A-Za-z0-9]*)'`)

// rowsParamMembers lists the distinct row members ('$.Name' paths) of a rows parameter
// query, in order of first use, outside comments. Errors: the query does not name @Rows, or
// names another parameter (each statement binds @Rows only), or lists no member.
func rowsParamMembers(text string) ([]string, error) {
	code := sqlLineComment.ReplaceAllString(text, "")
	for _, p := range rowParam.FindAllStringSubmatch(code, -1) {
		if p[1] != "Rows" {
			return nil, fmt.Errorf("a rows parameter query binds @Rows only, not @%s", p[1])
		}
	}
	if !strings.Contains(code, "@Rows") {
		return nil, errors.New("a multi-row query needs a /*row*/ … /*end*/ tuple or a @Rows parameter")
	}
	var params []string
	seen := map[string]bool{}
	for _, m := range jsonPath.FindAllStringSubmatch(code, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			params = append(params, m[1])
		}
	}
	if len(params) == 0 {
		return nil, errors.New("a rows parameter query lists its row members as '$.Name' paths")
	}
	return params, nil
}

// rowArgs binds one statement's rows (chunk, the rows from index start of the call) for the
// multi-row query name: by position in order of occurrence when the dialect binds rows so
// (m.occ), otherwise by the suffixed names (m.names). A row that lacks a parameter its
// tuple names is an error.
func (s *Store) rowArgs(name string, m *multiRow, start int, chunk []map[string]any) ([]any, error) {
	args := make([]any, 0, len(chunk)*max(len(m.params), len(m.occ)))
	for i, r := range chunk {
		for _, p := range m.params {
			if _, ok := r[p]; !ok {
				return nil, fmt.Errorf("%s %s: row %d has no @%s", s.d.Name, name, start+i, p)
			}
		}
		if m.occ != nil {
			for _, p := range m.occ {
				args = append(args, r[p])
			}
			continue
		}
		for j, p := range m.params {
			args = append(args, sql.Named(m.names[i][j], r[p]))
		}
	}
	return args, nil
}

// sqlLineComment matches a "--" comment to the end of its line (a query's leading notes).
var sqlLineComment = regexp.MustCompile(`--[^\n]*`)

// rowParam finds the @Name parameters of a row tuple.
var rowParam = regexp.MustCompile(`@([A-Za-z][A-Za-z0-9]*)`)

// StatementShape reports, for the multi-row query name, the most rows one statement carries
// and the parameters such a statement binds (every one is a row's; a rows parameter query,
// Dialect.EncodeRows, binds one), under the dialect's MaxParams: for dialect tests that
// check the bound holds for every query.
func (s *Store) StatementShape(name string) (rows, params int, err error) {
	m, err := s.multiRow(name)
	if err != nil {
		return 0, 0, err
	}
	if m.jsonRows {
		return m.per, 1, nil
	}
	return m.per, m.per * len(m.params), nil
}

// splitRows splits a multi-row query at its row markers, "/*row*/" and "/*end*/", and lists
// the tuple's distinct parameters in order of first use. Errors: missing or repeated markers.
func splitRows(text string) (head, tuple, tail string, params []string, err error) {
	h, rest, ok := strings.Cut(text, "/*row*/")
	t, tl, ok2 := strings.Cut(rest, "/*end*/")
	if !ok || !ok2 || strings.Contains(tl, "/*row*/") {
		return "", "", "", nil, errors.New("a multi-row query needs one /*row*/ … /*end*/ tuple")
	}
	seen := map[string]bool{}
	for _, m := range rowParam.FindAllStringSubmatch(t, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			params = append(params, m[1])
		}
	}
	return h, t, tl, params, nil
}

// expandRows returns head, n copies of tuple joined by commas, and tail; in copy i every
// @Name is renamed @Name_i.
func expandRows(head, tuple, tail string, params []string, n int) string {
	var b strings.Builder
	b.Grow(len(head) + len(tail) + n*(len(tuple)+len(params)*4))
	b.WriteString(head)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		suffix := "_" + strconv.Itoa(i)
		b.WriteString(rowParam.ReplaceAllString(tuple, "@${1}"+suffix))
	}
	b.WriteString(tail)
	return b.String()
}

// traceParent is the TraceParent column of outbox row m: its own, else the traceparent of
// the span in ctx (the transaction writing the row), else NULL.
func traceParent(ctx context.Context, m store.OutboxMessage) any {
	tp := m.TraceParent
	if tp == "" && telemetry.Enabled() {
		tp, _ = telemetry.Inject(ctx)
	}
	return nstr(tp)
}

// outboxInsertAll inserts msgs into the outbox in tx, in order, stopping at the first error.
func (s *Store) outboxInsertAll(ctx context.Context, tx *sql.Tx, now time.Time, msgs []store.OutboxMessage) error {
	for _, m := range msgs {
		if err := s.outboxInsert(ctx, tx, now, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) outboxInsert(ctx context.Context, tx *sql.Tx, now time.Time, m store.OutboxMessage) error {
	res, err := s.exec(ctx, tx, "OutboxInsert",
		sql.Named("MessageId", m.MessageID),
		sql.Named("Destination", m.Destination),
		sql.Named("SessionId", nstr(m.SessionID)),
		sql.Named("Body", m.Body),
		sql.Named("Envelope", boolInt(m.Envelope)),
		sql.Named("Now", s.tm(now)),
		sql.Named("TraceParent", traceParent(ctx, m)))
	if err != nil {
		return fmt.Errorf("%s OutboxInsert: %w", s.d.Name, err)
	}
	s.noteOutboxResult(tx, res)
	return nil
}

// SchedulerFail implements store.SchedulerStore.
func (s *Store) SchedulerFail(ctx context.Context, p store.SchedulerFailParams) error {
	if p.FailureReasonCode == "" {
		return errors.New("SchedulerFail: FailureReasonCode is required")
	}
	var next any
	if !p.Hold {
		if p.NextRetryOn.IsZero() {
			return errors.New("SchedulerFail: NextRetryOn is required unless Hold")
		}
		next = s.tm(p.NextRetryOn)
	}
	return s.execOne(ctx, nil, "SchedulerFail",
		sql.Named("Hold", boolInt(p.Hold)),
		sql.Named("NextRetryOn", next),
		sql.Named("FailureReasonCode", string(p.FailureReasonCode)),
		sql.Named("TraceBlobName", nstr(p.TraceBlobName)),
		sql.Named("Now", s.tm(p.Now)),
		sql.Named("Id", p.ID), sql.Named("Token", p.Token))
}

// SchedulerDeactivate implements store.SchedulerStore.
func (s *Store) SchedulerDeactivate(ctx context.Context, p store.SchedulerDeactivateParams) error {
	if p.Reason == "" {
		return errors.New("SchedulerDeactivate: Reason is required")
	}
	args := []any{sql.Named("ReasonCode", string(p.Reason)), sql.Named("Now", s.tm(p.Now)),
		sql.Named("Id", p.ID), sql.Named("Token", p.Token)}
	if len(p.FollowUps) == 0 {
		return s.execOne(ctx, nil, "SchedulerDeactivate", args...)
	}
	if err := validateCandidates("SchedulerDeactivate follow-ups", p.FollowUps); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, "SchedulerDeactivate", args...); err != nil {
			return err
		}
		for _, c := range p.FollowUps {
			if _, err := s.ensureOne(ctx, tx, p.Now, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// SchedulerListExpiredLeases implements store.SchedulerStore.
func (s *Store) SchedulerListExpiredLeases(ctx context.Context, p store.SchedulerListParams) ([]automation.SchedulerRow, error) {
	if err := checkLimit("SchedulerListExpiredLeases", p.Limit); err != nil {
		return nil, err
	}
	return s.queryRows(ctx, nil, "SchedulerListExpiredLeases",
		sql.Named("Now", s.tm(p.Now)), sql.Named("Limit", p.Limit))
}

// SchedulerNextWakeUp implements store.SchedulerStore.
func (s *Store) SchedulerNextWakeUp(ctx context.Context) (*time.Time, error) {
	return s.nextWakeUp(ctx, "SchedulerNextWakeUp")
}

// SchedulerCountByStatus implements store.SchedulerStore.
func (s *Store) SchedulerCountByStatus(ctx context.Context) (map[automation.Status]int, error) {
	rs, err := s.query(ctx, nil, "SchedulerCountByStatus")
	if err != nil {
		return nil, fmt.Errorf("%s SchedulerCountByStatus: %w", s.d.Name, err)
	}
	defer rs.Close()
	out := make(map[automation.Status]int, len(automation.AllStatuses))
	for _, st := range automation.AllStatuses {
		out[st] = 0
	}
	for rs.Next() {
		var st string
		var n int
		if err := rs.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[automation.Status(st)] = n
	}
	return out, rs.Err()
}

// noteOutboxResult counts the rows an outbox insert wrote (noteOutbox); a driver that
// cannot tell counts one.
func (s *Store) noteOutboxResult(tx *sql.Tx, res sql.Result) {
	if s.onOutbox == nil {
		return
	}
	n, err := res.RowsAffected()
	if err != nil {
		n = 1
	}
	s.noteOutbox(tx, int(n))
}
