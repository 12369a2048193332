// Package sql holds the SQL of each dialect side by side: sql/sqlite and sql/mssql have the
// same migration numbers and the same query names, and sql/sqlstore runs either through
// one Go implementation of the store. Its tests check that parity and pin what the query
// templates expand to (parity_test.go, queries_test.go). It has no code of its own.
package sql
