// Package sqlstore is the database/sql adapter that implements store.Store for every SQL
// dialect. A dialect (sql/sqlite, sql/mssql) supplies only its SQL files (named queries with
// identical names, @Name parameters) and how it encodes instants; the Go logic - the
// ensure table, snapshot ordering, transactions - is written once here, so dialects cannot
// drift in behaviour. Go never branches on the dialect name.
package sqlstore
