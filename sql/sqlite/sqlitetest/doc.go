// Package sqlitetest opens the real SQLite store (sql/sqlite) for tests: a migrated database
// file in the test's temporary directory, closed when the test ends, any error failing the
// test at once. It is the one copy of that set-up for every package whose tests run on the
// embedded store (the domains, the API adapters, the commands). AtMigration opens a file as an
// older binary left it (migrated up to a given version, as a plain database/sql pool), for the
// tests of an upgrade or of a schema mismatch. OpenTrace opens the local trace store beside
// it. It imports "testing", so only tests import it.
package sqlitetest
