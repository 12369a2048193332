package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"github.com/gofrs/flock"
	"io/fs"
	"net/url"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/automation-platform/automation/sql/sqlstore"
)

//go:embed migrations/*.sql
var migrationsFS embed.FS

// The query files, and the query templates sqlstore.LoadQueries expands when the store
// starts (the support finders: queries/support_find.sql.tmpl, one template for all their
// permutations).
//
//go:embed queries/*.sql queries/*.sql.tmpl
var queriesFS embed.FS

// Migrations returns the embedded migrations (root = the migrations folder).
func Migrations() fs.FS { sub, _ := fs.Sub(migrationsFS, "migrations"); return sub }

// QueryFiles returns the embedded query files (root = the queries folder).
func QueryFiles() fs.FS { sub, _ := fs.Sub(queriesFS, "queries"); return sub }

// Dialect is the SQLite dialect description.
var Dialect = sqlstore.Dialect{
	Name:           "sqlite",
	PositionalRows: true,
	WriterQueue:    true,
	EncodeTime:     func(t time.Time) any { return t.UTC().UnixMilli() },
	DecodeTime: func(src any) (time.Time, error) {
		switch v := src.(type) {
		case int64:
			return time.UnixMilli(v).UTC(), nil
		default:
			return time.Time{}, fmt.Errorf("sqlite: instant column holds %T, want INTEGER milliseconds", src)
		}
	},
}

// Page cache and checkpoint defaults (docs/performance.md, "Page cache and checkpoints" and
// "What holds W6's memory"). SQLite's own are 2 MiB and 1000 pages.
//
// The page caches of every connection of the process are one cache: modernc's SQLite is
// built with SQLITE_ENABLE_MEMORY_MANAGEMENT, which puts all of them in pcache1's single
// group, bounded by the sum of the connections' cache_size. A connection past its own
// cache_size takes the least recently used page of any other, so under a steady write load
// the writer holds nearly the whole sum: a pooled reader's pages are dropped at each read
// transaction that finds the log moved (WAL), and the writer recycles them. With the
// defaults below that sum is DefaultWriterCacheKiB + 9 × DefaultCacheKiB = 10.25 MiB for the
// store, plus the local trace's (shared/trace/localtrace). The pages come from the process's
// page slab (PageSlab: slots of a page and its headers, 4,368 bytes for a 4 KiB page), which
// holds that sum; from malloc, modernc's allocator served each in an 8 KiB slot, about 9.4 KB
// of memory per 4 KiB page.
const (
	// DefaultCacheKiB is each pooled connection's (and the checkpointer's) share of the
	// process's page cache: 256 KiB. A reader's own pages rarely outlive its read
	// transaction under writes, so this share mostly sizes what the writer can hold; at
	// 4 MiB the nine shares let the writer's cache grow to 44 MiB (about 95 MB of memory)
	// over W6's five minutes (docs/performance.md, "What holds W6's memory").
	DefaultCacheKiB = 256
	// DefaultWriterCacheKiB is the writer connection's share: 8 MiB (docs/performance.md,
	// "One writer connection, checkpoints in the background").
	DefaultWriterCacheKiB = 8 << 10
	// DefaultAutoCheckpointPages is 20,000 pages (80 MB of WAL with 4 KiB pages), the
	// bound on the log between two checkpoints: the background checkpointer rests
	// DefaultCheckpointInterval between its runs, in which a burn-down at full speed
	// appends some 40 MB (docs/performance.md, "Checkpoints with a rest between them").
	DefaultAutoCheckpointPages = 20_000
	// DefaultCheckpointInterval is the background checkpointer's rest after each of its
	// checkpoints: 250 ms. W1 at 100,000 rows wrote 12 % fewer bytes and ran 15–25 % faster
	// with a rest of 200 ms than with a checkpoint after every commit.
	DefaultCheckpointInterval = 250 * time.Millisecond
	// DefaultGroupCommit is the most write transactions one physical commit on the writer
	// takes (sqlstore group commit; docs/performance.md, "Group commit on the writer"): 32.
	// W6 at 2,000/s measured 1.4 to 2.2 transactions per commit with it, so the bound is
	// rarely reached; it bounds how long the group's first member waits, with the 20 ms window.
	DefaultGroupCommit = 32
)

// Options tune Open. Nil means defaults.
type Options struct {
	// BusyTimeout is how long a writer waits for the write lock (default 10 s).
	BusyTimeout time.Duration
	// MaxOpenConns bounds the pool of connections reads and unqueued writes share (default
	// 8). The writer's and the background checkpointer's connections come on top of it.
	MaxOpenConns int
	// CacheKiB is each pooled connection's page cache in KiB (default DefaultCacheKiB), and
	// the background checkpointer's. The connections' caches are one cache bounded by the
	// sum of their sizes (see DefaultCacheKiB): PageCacheBoundKiB.
	CacheKiB int
	// WriterCacheKiB is the page cache, in KiB, of the one connection every write
	// transaction begins on (default DefaultWriterCacheKiB; sqlstore.Store.UseWriterConn).
	WriterCacheKiB int
	// AutoCheckpointPages is the WAL size, in pages, at which a commit checkpoints the log
	// into the database file (default DefaultAutoCheckpointPages).
	AutoCheckpointPages int
	// CheckpointInterval is how long the background checkpointer rests after each
	// checkpoint before it takes the next one (default DefaultCheckpointInterval; negative:
	// no rest, a checkpoint after every commit on the writer).
	CheckpointInterval time.Duration
	// GroupCommit is the most write transactions that queue for the writer and commit
	// together, each in its own savepoint (default DefaultGroupCommit; 1 or negative: each
	// transaction commits alone, as before group commit).
	GroupCommit int
	// SkipMigrations opens the store without applying migrations (the custom handler): Open
	// then checks that the database's schema version is the binary's (CheckSchema) and
	// fails with a *sqlstore.SchemaError when it is not. Default false: Open migrates (the
	// embedded default, replay, tests).
	SkipMigrations bool
}

// PageCacheBoundKiB is the sum of the page caches a store opened with opts gives the
// process's one page cache (see DefaultCacheKiB): (MaxOpenConns + 1) × CacheKiB +
// WriterCacheKiB, in KiB of SQLite's count (pages × page and header size; about 2.1 times
// that in memory). 10.25 MiB with the defaults.
func PageCacheBoundKiB(opts *Options) int {
	o := withDefaults(opts)
	return (o.MaxOpenConns+1)*o.CacheKiB + o.WriterCacheKiB
}

// VersionQueries read goose's version table without writing (CheckSchema).
var VersionQueries = sqlstore.VersionQueries{
	TableExists: `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'`,
	MaxVersion:  `SELECT MAX(version_id) FROM goose_db_version`,
}

// CheckSchema returns nil when db's goose version equals the highest embedded migration,
// a *sqlstore.SchemaError when it differs (errors.Is sqlstore.ErrSchemaMismatch), the read
// error otherwise. It never migrates.
func CheckSchema(ctx context.Context, db *sql.DB) error {
	return sqlstore.CheckSchema(ctx, db, Dialect.Name, VersionQueries, Migrations())
}

// Open opens (creating if needed) the SQLite database file at path, applies pending
// migrations (or, with opts.SkipMigrations, checks the schema version) and returns the
// store. Errors if the file cannot be opened, a migration fails or the schema version
// differs (*sqlstore.SchemaError).
func Open(ctx context.Context, path string, opts *Options) (*sqlstore.Store, error) {
	st, _, err := open(ctx, path, opts)
	return st, err
}

// open is Open, also returning the store's background checkpointer (tests watch it).
func open(ctx context.Context, path string, opts *Options) (*sqlstore.Store, *checkpointer, error) {
	if path == "" {
		return nil, nil, errors.New("sqlite: empty database path")
	}
	o := withDefaults(opts)
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// Statement journals (a multi-row statement inside a transaction keeps one to undo
	// itself alone) in memory, not in a temporary file: no file writes for them.
	q.Add("_pragma", "temp_store(MEMORY)")
	// A negative cache_size is in KiB.
	q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", o.CacheKiB))
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", o.AutoCheckpointPages))
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// Two more than the pool's bound: the writer's and the checkpointer's connections are
	// pinned for the store's lifetime (useWriterConn).
	db.SetMaxOpenConns(o.MaxOpenConns + pinnedConns)
	db.SetMaxIdleConns(o.MaxOpenConns + pinnedConns)
	if o.SkipMigrations {
		err = CheckSchema(ctx, db)
	} else {
		err = migrateLocked(ctx, db, path)
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	queries, err := loadQueries()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	d := Dialect
	d.WriterQueueWait = o.BusyTimeout
	var ckpt *checkpointer
	st := sqlstore.New(db, queries, d, func() error {
		if ckpt != nil {
			return ckpt.Close()
		}
		return nil
	})
	if err := st.PrepareAll(ctx); err != nil {
		st.Close()
		return nil, nil, err
	}
	if ckpt, err = useWriterConn(ctx, db, st, o.WriterCacheKiB, o.CheckpointInterval); err != nil {
		st.Close()
		return nil, nil, err
	}
	if err := st.SetGroupCommit(o.GroupCommit); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, ckpt, nil
}

// withDefaults is opts with every unset member at its default.
func withDefaults(opts *Options) Options {
	o := Options{BusyTimeout: 10 * time.Second, MaxOpenConns: 8, CacheKiB: DefaultCacheKiB, WriterCacheKiB: DefaultWriterCacheKiB, AutoCheckpointPages: DefaultAutoCheckpointPages,
		CheckpointInterval: DefaultCheckpointInterval, GroupCommit: DefaultGroupCommit}
	if opts != nil {
		if opts.GroupCommit != 0 {
			o.GroupCommit = opts.GroupCommit
		}
		if opts.CheckpointInterval != 0 {
			o.CheckpointInterval = max(opts.CheckpointInterval, 0)
		}
		if opts.WriterCacheKiB > 0 {
			o.WriterCacheKiB = opts.WriterCacheKiB
		}
		if opts.CacheKiB > 0 {
			o.CacheKiB = opts.CacheKiB
		}
		if opts.AutoCheckpointPages > 0 {
			o.AutoCheckpointPages = opts.AutoCheckpointPages
		}
		if opts.BusyTimeout > 0 {
			o.BusyTimeout = opts.BusyTimeout
		}
		if opts.MaxOpenConns > 0 {
			o.MaxOpenConns = opts.MaxOpenConns
		}
		o.SkipMigrations = opts.SkipMigrations
	}
	return o
}

// pinnedConns is the number of connections useWriterConn takes out of the pool for good.
const pinnedConns = 2

// useWriterConn pins two connections of the pool: the writer, on which every write
// transaction that holds the writer queue's slot begins, with a page cache of cacheKiB
// (docs/performance.md, "One writer connection, checkpoints in the background"), and the
// background checkpointer's, which each commit on the writer wakes. Errors: a connection
// could not be taken or configured.
func useWriterConn(ctx context.Context, db *sql.DB, st *sqlstore.Store, cacheKiB int, checkpointRest time.Duration) (*checkpointer, error) {
	w, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: writer connection: %w", err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", cacheKiB)); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: writer connection: %w", err)
	}
	cc, err := db.Conn(ctx)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: checkpoint connection: %w", err)
	}
	ckpt := startCheckpointer(cc, checkpointRest)
	if err := st.UseWriterConn(w, ckpt.Kick); err != nil {
		_ = w.Close()
		_ = ckpt.Close()
		return nil, err
	}
	return ckpt, nil
}

// loadQueries parses the embedded query files once per process: they cannot change, and
// parsing them cost a tenth of the CPU of a process start (the simulator restarts its
// process on every crash). The Queries are only read after loading.
var loadQueries = sync.OnceValues(func() (*sqlstore.Queries, error) { return sqlstore.LoadQueries(QueryFiles()) })

// migrateLocked runs Migrate holding an exclusive lock on the file path+".migrate.lock"
// (created beside the database and left there), so processes that open one database at
// once migrate it one after the other; it waits for the lock as long as ctx allows.
// Without it, goose in a process that listed the pending migrations before another process
// applied them runs them again: a migration that rebuilds a table (0026 rebuilds Outbox)
// then succeeds a second time and drops the columns later migrations added, while the
// version table says they are there. Errors: the lock file cannot be created or locked,
// ctx ends first, or Migrate's.
func migrateLocked(ctx context.Context, db *sql.DB, path string) error {
	l := flock.New(path + ".migrate.lock")
	locked, err := l.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return fmt.Errorf("sqlite: migration lock %s: %w", l.Path(), err)
	}
	if !locked {
		return fmt.Errorf("sqlite: migration lock %s: %w", l.Path(), ctx.Err())
	}
	defer func() { _ = l.Unlock() }()
	return Migrate(ctx, db)
}

// Migrate applies the embedded forward-only migrations with goose. Open serializes it
// across processes (migrateLocked); called directly, the caller must.
func Migrate(ctx context.Context, db *sql.DB) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, db, Migrations())
	if err != nil {
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	// A process of an older build, which takes no migration lock, may migrate the same file
	// at once: goose reads the version before each migration's own transaction, so a
	// migration the other process just committed fails here ("table … already exists") and
	// rolls back.
	// While the version keeps moving, the other migrator is making progress: read it again
	// and go on from there. A failure with the version standing still is a real one.
	// On a fresh file the version table may not exist yet when the version is read (the
	// other migrator creates it): that reads as before any migration.
	for {
		before, verr := p.GetDBVersion(ctx)
		if verr != nil {
			before = -1
		}
		_, err := p.Up(ctx)
		if err == nil {
			return nil
		}
		after, aerr := p.GetDBVersion(ctx)
		if aerr != nil || after <= before {
			return fmt.Errorf("sqlite: migrate: %w", err)
		}
	}
}
