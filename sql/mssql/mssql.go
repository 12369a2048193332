package mssql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/golang-sql/civil"
	mssqldb "github.com/microsoft/go-mssqldb" // also registers the "sqlserver" driver
	"github.com/microsoft/go-mssqldb/azuread"
	"github.com/pressly/goose/v3"

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

// DriverName is the database/sql driver used for DSNs without fedauth= (SQL or integrated
// authentication).
const DriverName = "sqlserver"

// MaxParams is the most parameters one statement of ours may bind: SQL Server accepts 2,100
// parameters in an RPC request, and go-mssqldb sends every parameterised statement as
// sp_executesql, whose first two parameters are the statement text and the declaration
// list (go-mssqldb mssql.go, sendQuery: "offset = 2"; Microsoft's SqlMaxBatchParameters
// note: "the SQL Server hard limit is 2100, ADO.NET uses 2 for the sp_executesql call").
const MaxParams = 2100 - 2

// Dialect is the SQL Server dialect description. EncodeTime turns an instant into a
// civil.DateTime holding its UTC wall clock truncated to milliseconds (sent as a datetime2
// parameter); DecodeTime accepts the time.Time go-mssqldb returns for a datetime2 column
// (or a civil.DateTime) and reads its wall clock as UTC.
var Dialect = sqlstore.Dialect{
	Name:        "mssql",
	EncodeTime:  EncodeTime,
	DecodeTime:  DecodeTime,
	IsRetryable: isRetryable,
	IsPermanent: isPermanent, // errors.go: 1946 (key too wide), 2628/8152 (truncation)
	MaxClaim:    MaxClaim,
	MaxParams:   MaxParams,
	EncodeRows:  EncodeRows,
}

// EncodeTime converts an instant to the parameter value stored in a datetime2(3) column:
// its UTC wall clock, truncated to whole milliseconds, as a civil.DateTime (which
// go-mssqldb sends as datetime2, matching the column type exactly).
func EncodeTime(t time.Time) any {
	return civil.DateTimeOf(t.UTC().Truncate(time.Millisecond))
}

// DecodeTime converts a scanned datetime2 value back to a UTC instant. go-mssqldb returns
// datetime2 as a time.Time whose wall clock is the stored value, in the session's location
// (UTC unless the DSN sets one); the stored wall clock is UTC by convention, so it is
// re-read in UTC. It also accepts civil.DateTime. Any other type is an error.
func DecodeTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case time.Time:
		return time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC), nil
	case civil.DateTime:
		return v.In(time.UTC), nil
	default:
		return time.Time{}, fmt.Errorf("mssql: instant column holds %T, want datetime2", src)
	}
}

// Options tune Open. Nil means defaults.
type Options struct {
	// MaxOpenConns bounds the connection pool (default 16).
	MaxOpenConns int
	// ConnMaxLifetime recycles pooled connections after this long (default 30 min), so
	// failovers and token refreshes take effect.
	ConnMaxLifetime time.Duration
	// SkipMigrations opens the store without applying migrations, for deployments where a
	// separate, more privileged step runs Migrate (the custom handler, whose identity holds
	// only db_datareader/db_datawriter): Open then checks that the database's schema version
	// is the binary's (CheckSchema) and fails with a *sqlstore.SchemaError when it is not.
	// Default false: Open migrates.
	SkipMigrations bool
}

// VersionQueries read goose's version table without writing (CheckSchema): they need only
// db_datareader.
var VersionQueries = sqlstore.VersionQueries{
	TableExists: `SELECT CASE WHEN OBJECT_ID(N'goose_db_version', N'U') IS NULL THEN 0 ELSE 1 END`,
	MaxVersion:  `SELECT MAX(version_id) FROM goose_db_version`,
}

// CheckSchema returns nil when db's goose version equals the highest embedded migration,
// a *sqlstore.SchemaError when it differs (errors.Is sqlstore.ErrSchemaMismatch), the read
// error otherwise. It never migrates and takes no lock.
func CheckSchema(ctx context.Context, db *sql.DB) error {
	return sqlstore.CheckSchema(ctx, db, Dialect.Name, VersionQueries, Migrations())
}

// Open connects to SQL Server / Azure SQL with dsn (see OpenDB for the driver choice),
// checks the connection, applies pending migrations (with opts.SkipMigrations: checks the
// schema version instead, *sqlstore.SchemaError on a mismatch) and returns the store. ctx bounds the connection check and the migrations. It returns an error for an
// empty or malformed DSN, an unreachable server or failed login, and a failed migration;
// the pool is closed on every error.
func Open(ctx context.Context, dsn string, opts *Options) (*sqlstore.Store, error) {
	o := Options{MaxOpenConns: 16, ConnMaxLifetime: 30 * time.Minute}
	if opts != nil {
		if opts.MaxOpenConns > 0 {
			o.MaxOpenConns = opts.MaxOpenConns
		}
		if opts.ConnMaxLifetime > 0 {
			o.ConnMaxLifetime = opts.ConnMaxLifetime
		}
		o.SkipMigrations = opts.SkipMigrations
	}
	queries, err := sqlstore.LoadQueries(QueryFiles())
	if err != nil {
		return nil, fmt.Errorf("mssql: queries: %w", err)
	}
	db, err := OpenDB(WithDefaultTimeouts(dsn))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(o.MaxOpenConns)
	db.SetMaxIdleConns(o.MaxOpenConns)
	db.SetConnMaxLifetime(o.ConnMaxLifetime)
	pingCtx, cancel := context.WithTimeout(ctx, DefaultConnectTimeout+5*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("mssql: connect (AUTOMATION_SQLSERVER_DSN): %w", err)
	}
	if o.SkipMigrations {
		if err := CheckSchema(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
	} else if err := Migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	st := sqlstore.New(db, queries, Dialect, nil)
	if err := st.PrepareAll(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// retryableNumbers are SQL Server / Azure SQL error numbers after which a transaction may be
// run again: 1205 deadlock victim; 40501 service busy; 40613 database unavailable; 40197
// service error processing the request; 10928/10929 resource limits; 49918-49920 cannot
// process request (Azure SQL transient-fault guidance).
var retryableNumbers = map[int32]bool{1205: true, 40501: true, 40613: true, 40197: true, 10928: true, 10929: true, 49918: true, 49919: true, 49920: true}

func isRetryable(err error) bool {
	var e mssqldb.Error
	return errors.As(err, &e) && retryableNumbers[e.Number]
}

// DefaultConnectTimeout bounds connecting (and the login handshake) when the DSN does not
// set "connection timeout" itself: a server that accepts the TCP connection but never
// answers must not hang startup or migrate.
const DefaultConnectTimeout = 30 * time.Second

// WithDefaultTimeouts adds "connection timeout" (DefaultConnectTimeout) and "dial timeout"
// (15 s) to dsn when it sets neither; URL (sqlserver://…) and key=value;… forms.
func WithDefaultTimeouts(dsn string) string {
	lower := strings.ToLower(dsn)
	if strings.Contains(lower, "connection timeout") || strings.Contains(lower, "connection+timeout") || strings.Contains(lower, "dial timeout") || strings.Contains(lower, "dial+timeout") {
		return dsn
	}
	secs := strconv.Itoa(int(DefaultConnectTimeout / time.Second))
	if strings.HasPrefix(lower, "sqlserver://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn // OpenDB reports the parse error
		}
		q := u.Query()
		q.Set("connection timeout", secs)
		q.Set("dial timeout", "15")
		u.RawQuery = q.Encode()
		return u.String()
	}
	sep := ";"
	if strings.HasSuffix(strings.TrimSpace(dsn), ";") {
		sep = ""
	}
	return dsn + sep + "connection timeout=" + secs + ";dial timeout=15"
}

// OpenDB returns a connection pool for dsn without connecting. A DSN containing fedauth=
// (case-insensitive; Microsoft Entra ID authentication such as
// fedauth=ActiveDirectoryManagedIdentity or ActiveDirectoryDefault) is opened with the
// azuread connector (the driver registered as azuread.DriverName; the connector is built
// once, so the DSN is parsed and validated here rather than on every new connection); any
// other DSN with the "sqlserver" driver. Both URL (sqlserver://...) and ADO
// (server=...;database=...) forms are accepted. It returns an error when the DSN is empty
// or cannot be parsed.
func OpenDB(dsn string) (*sql.DB, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("mssql: empty DSN")
	}
	if usesFedAuth(dsn) {
		c, err := azuread.NewConnector(dsn)
		if err != nil {
			return nil, fmt.Errorf("mssql: DSN (%s): %w", azuread.DriverName, err)
		}
		return sql.OpenDB(c), nil
	}
	db, err := sql.Open(DriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("mssql: DSN (%s): %w", DriverName, err)
	}
	return db, nil
}

// usesFedAuth reports whether dsn asks for Microsoft Entra ID (federated) authentication.
func usesFedAuth(dsn string) bool {
	return strings.Contains(strings.ToLower(dsn), "fedauth=")
}

// migrationLock is the sp_getapplock resource that serialises concurrent Migrate calls
// (several function instances starting at once) on one database.
const migrationLock = "automation:migrations"

// migrationLockTimeout bounds the wait for another instance's migration, in milliseconds.
const migrationLockTimeout = 5 * 60 * 1000

// Migrate applies the embedded forward-only migrations with goose (dialect mssql, version
// table goose_db_version); already applied ones are skipped, each runs in its own
// transaction. Concurrent callers on one database are serialised with a session-owned
// application lock (sp_getapplock, waited for up to 5 minutes), held on a connection of its
// own while goose runs on the others; a pool limited to one connection migrates without
// the lock. It returns an error when the lock cannot be taken, the migrations cannot be
// read, or one fails.
func Migrate(ctx context.Context, db *sql.DB) (err error) {
	p, err := goose.NewProvider(goose.DialectMSSQL, db, Migrations())
	if err != nil {
		return fmt.Errorf("mssql: migrations: %w", err)
	}
	if db.Stats().MaxOpenConnections != 1 {
		unlock, err := lockMigrations(ctx, db)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, unlock()) }()
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("mssql: migrate: %w", err)
	}
	return nil
}

// lockMigrations takes the migration application lock on a dedicated connection and
// returns the function that releases it and returns the connection to the pool.
func lockMigrations(ctx context.Context, db *sql.DB) (func() error, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mssql: migration lock: %w", err)
	}
	var rc int
	err = conn.QueryRowContext(ctx, `DECLARE @rc int;
EXEC @rc = sys.sp_getapplock @Resource = @Resource, @LockMode = N'Exclusive', @LockOwner = N'Session', @LockTimeout = @Timeout;
SELECT @rc;`, sql.Named("Resource", migrationLock), sql.Named("Timeout", migrationLockTimeout)).Scan(&rc)
	if err == nil && rc < 0 { // -1 timeout, -2 cancelled, -3 deadlock victim, -999 error
		err = fmt.Errorf("sp_getapplock returned %d", rc)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("mssql: migration lock: %w", err)
	}
	return func() error {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, err := conn.ExecContext(rctx, `EXEC sys.sp_releaseapplock @Resource = @Resource, @LockOwner = N'Session';`,
			sql.Named("Resource", migrationLock))
		if err != nil {
			// Do not hand a session that may still hold the lock back to the pool: the
			// lock ends with the session, and ErrBadConn from Raw discards it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			return fmt.Errorf("mssql: migration unlock: %w", err)
		}
		return conn.Close()
	}, nil
}
