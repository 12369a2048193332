// Package sqlite is the embedded SQL dialect: SQLite through modernc.org/sqlite (pure Go,
// no cgo). It carries its forward-only migrations and named queries as embedded .sql files
// (same file and query names as sql/mssql) and opens a store.Store backed by
// sql/sqlstore.
//
// Connection settings: WAL journal, synchronous=NORMAL, a busy timeout so concurrent
// writers wait instead of failing, foreign keys on, temporary storage (statement
// journals) in memory, and BEGIN IMMEDIATE transactions so a
// read-then-write transaction never fails on lock upgrade. Instants are stored as INTEGER
// milliseconds since the Unix epoch (UTC).
//
// Memory: the page caches of every connection of the process are one cache (pcache1's
// unified group), and its pages come from one slab of page-sized slots that this package
// gives SQLite when it is initialised (PageSlab, SQLITE_CONFIG_PAGECACHE; resident from the
// first open). docs/performance.md, "The page cache in one slab".
package sqlite
