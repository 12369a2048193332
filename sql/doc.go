// Package sql holds the SQL of each dialect side by side: sql/sqlite and sql/mssql have the
// same migration numbers and the same query names, and sql/sqlstore runs either through
// one Go implementation of the store. Its tests check that parity and that the generated
// query files are current (parity_test.go, generated_test.go). It has no code of its own.
package sql
