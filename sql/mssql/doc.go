// Package mssql is the SQL Server / Azure SQL dialect: go-mssqldb
// (github.com/microsoft/go-mssqldb), forward-only goose migrations and named queries as
// embedded .sql files (the same file and query names as sql/sqlite), behind the shared
// store.Store adapter in sql/sqlstore.
//
// Types: instants are datetime2(3) holding UTC (never datetimeoffset, never the server
// clock); the Dialect sends them as datetime2 parameters (civil.DateTime), not as
// time.Time, which go-mssqldb would send as datetimeoffset: datetimeoffset has a higher
// data type precedence than datetime2, so every comparison such as ScheduledOn <= @Now
// would convert the column instead of seeking the index. Flags are bit, ids bigint
// IDENTITY, JSON nvarchar(max), outbox bodies varbinary(max).
//
// Concurrency (see the comments in queries/*.sql): the due claim is one UPDATE over an
// ordered TOP with UPDLOCK, READPAST, ROWLOCK, so concurrent pollers take disjoint
// batches; read-then-write transactions (ensure, snapshot apply, fee transfer begin, …)
// read with UPDLOCK, HOLDLOCK so two writers of one key serialise; "insert unless present"
// statements guard the insert with an UPDLOCK, HOLDLOCK existence check, one per unique
// index. Every HOLDLOCK read also says FORCESEEK, so its key-range lock covers one key, never
// an index scanned whole; every READPAST is paired with UPDLOCK or READCOMMITTEDLOCK. A
// claiming statement takes at most MaxClaim rows, under lock escalation (claim.go). All of
// it holds under both READ COMMITTED locking (SQL Server's default) and
// READ_COMMITTED_SNAPSHOT (Azure SQL Database's default). Transactions run at the driver
// default, READ COMMITTED. The rules, the audit of every read-then-write path and the lints
// that keep them are in docs/sqlserver.md.
//
// Keys fit SQL Server's key limits, and a value too large for them is a permanent error
// (errors.go, schemalint_test.go).
//
// Identifiers compare exactly, as in Go and SQLite: every string column that an index keys
// or a query compares has a _BIN2 collation (Latin1_General_100_BIN2), whatever the
// database default (SQL_Latin1_General_CP1_CI_AS in infra/, case-insensitive), unless the
// lint's allow-list gives a reason (collation_lint_test.go;
// docs/conventions.md#sql-server-collation).
//
// Parameters: a statement binds at most MaxParams (2,098). A multi-row statement binds its
// rows as one JSON parameter, @Rows (EncodeRows), read with OPENJSON, so its declaration
// and cached plan do not change with the values (go-mssqldb declares a string as
// nvarchar(<its length>)); OPENJSON needs compatibility level 130 or later.
//
// Authentication: a DSN with a fedauth= parameter (Microsoft Entra ID, for example
// "sqlserver://myserver.database.windows.net?database=automation&fedauth=ActiveDirectoryManagedIdentity")
// is opened with the azuread connector; any other DSN with the "sqlserver" driver (SQL
// authentication, integrated authentication).
//
// Operational requirements: the session must report row counts (SET NOCOUNT OFF, the
// default) because every Version-guarded update checks that exactly one row changed; a
// server- or database-wide NOCOUNT ON would make each such write look like a lost lease.
// The claim must run at READ COMMITTED (READPAST is refused under SERIALIZABLE/SNAPSHOT).
package mssql
