// Package storetest is the one conformance suite every SQL dialect runs (docs/conventions.md#one-contract-one-suite: one
// contract, one suite, every implementation). sql/sqlite runs it always; sql/mssql runs it
// when AUTOMATION_SQLSERVER_DSN is set.
package storetest
