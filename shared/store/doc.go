// Package store declares what the pipeline's logic needs from SQL: the narrow interfaces
// each service consumes, their parameter structs and the sentinel errors. Every SQL dialect
// (sql/sqlite, sql/mssql) implements them and must pass the one conformance suite in
// store/storetest.
//
// Rules every implementation keeps (docs/architecture.md#claim, docs/conventions.md):
//   - "now" is always a parameter; SQL never reads the server clock.
//   - every write to a scheduler or notification row bumps Version and is guarded by the
//     Version the caller read (the claim token), so stale workers cannot overwrite newer state;
//   - all instants are stored and returned in UTC.
package store
