package sqlstore

import (
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/qustavo/dotsql"
)

// Dialect describes one SQL dialect.
type Dialect struct {
	// Name is for messages only ("sqlite", "mssql").
	Name string
	// EncodeTime converts a UTC instant to the driver value stored in instant columns.
	EncodeTime func(time.Time) any
	// DecodeTime converts a scanned instant column value back to a UTC instant.
	DecodeTime func(src any) (time.Time, error)
	// IsRetryable, when set, reports errors after which a whole transaction may simply be
	// run again (a deadlock victim, a transient cloud error). Nil: never retry.
	IsRetryable func(error) bool
	// IsPermanent, when set, reports errors after which the same input can never be stored:
	// the database refused a value as too large for its schema (an index key past the
	// engine's limit, a string longer than its column). The store returns them as
	// store.ErrValueTooLarge marked automation.Permanent (Store.permanent), never retried.
	// Nil: no error is classified so.
	IsPermanent func(error) bool
	// MaxClaim bounds the rows one claiming statement may take and lock (SchedulerClaimDue's
	// UPDATE over an ordered TOP, OutboxClaim's batch read): a larger scheduler claim runs as
	// several statements of at most MaxClaim rows in its one transaction, and an outbox claim
	// returns at most MaxClaim messages. For SQL Server, which escalates a statement's row and
	// page locks on one index to a table lock once it holds 5,000 of them
	// (docs/conventions.md#claim-sizes). 0: no bound beyond store.MaxBatch.
	MaxClaim int
	// MaxParams is the most parameters one statement may carry (multi-row inserts are cut
	// to fit); 0: no bound beyond the store's own.
	MaxParams int
	// PositionalRows makes multi-row statements (execRows) bind by position: each row's
	// @Name becomes an anonymous "?" and the values are passed in order of occurrence. For a
	// driver that looks a named parameter up by a linear scan of the statement's names
	// (SQLite's sqlite3_bind_parameter_name), binding a 1,100-parameter statement by name
	// is quadratic in its parameters; by position it is linear. The query text keeps
	// @Name either way.
	PositionalRows bool
	// EncodeRows, when set, lets a multi-row query bind all of one statement's rows as one
	// parameter, @Rows, instead of one parameter per row member (a "rows parameter" query:
	// its text names @Rows and no row markers, and lists each row member as a JSON path
	// '$.Name', as SQL Server's OPENJSON(@Rows) WITH (… '$.Name' …) does). It receives the
	// statement's rows (each has every member, checked first) and returns the value bound to
	// @Rows. A dialect whose driver declares each parameter's type from its value (go-mssqldb:
	// nvarchar(<length>)) sends its multi-row statements so, so that the declaration, and with
	// it the cached plan, is the same whatever the rows hold (docs/sqlserver.md, "One plan per
	// multi-row statement"). Nil: every multi-row query uses row markers.
	EncodeRows func(rows []map[string]any) (any, error)
	// WriterQueue makes the store's transactions queue in the process before they begin
	// (Store.inTx): for a database that admits one writing transaction at a time and makes
	// the others poll for the lock with growing sleeps (SQLite's busy handler sleeps 1, 2,
	// 5, … 100 ms), so that a transaction starts as soon as the one before it ends instead of
	// at its next poll. A transaction that waited the queue's bound (WriterQueueWait) begins
	// anyway and falls back to the database's own wait; other processes on the same file
	// always do.
	WriterQueue bool
	// WriterQueueWait bounds the wait in the writer queue (default 10 s).
	WriterQueueWait time.Duration
}

// Queries holds a dialect's named queries, loaded from its queries/*.sql files.
type Queries struct {
	byName map[string]string
}

// LoadQueries reads every *.sql file in fsys's root, and every *.sql.tmpl file expanded by
// ExpandQueries (a query family written once as a template). Queries are blocks introduced
// by a "-- name: QueryName :kind" line (the :kind suffix documents the result shape and is
// not used). Errors on a duplicate name (also between a template and a plain file) and on a
// template that does not expand.
func LoadQueries(fsys fs.FS) (*Queries, error) {
	files, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	tmpls, err := fs.Glob(fsys, "*.sql.tmpl")
	if err != nil {
		return nil, err
	}
	q := &Queries{byName: map[string]string{}}
	for _, f := range append(files, tmpls...) {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(f, ".tmpl") {
			if b, err = ExpandQueries(f, b); err != nil {
				return nil, err
			}
		}
		dot, err := dotsql.LoadFromString(string(b))
		if err != nil {
			return nil, fmt.Errorf("queries %s: %w", f, err)
		}
		for name := range dot.QueryMap() {
			if _, dup := q.byName[name]; dup {
				return nil, fmt.Errorf("queries %s: query %s defined twice", f, name)
			}
			raw, err := dot.Raw(name)
			if err != nil {
				return nil, err
			}
			q.byName[name] = raw
		}
	}
	return q, nil
}

// Names lists the query names (for the dialect parity test).
func (q *Queries) Names() []string {
	out := make([]string, 0, len(q.byName))
	for n := range q.byName {
		out = append(out, n)
	}
	return out
}

// SQL returns the text of a named query; it panics on an unknown name, which the parity
// and conformance tests catch before any release.
func (q *Queries) SQL(name string) string {
	s, ok := q.byName[name]
	if !ok {
		panic("sqlstore: no query named " + name)
	}
	return strings.TrimSpace(s)
}
