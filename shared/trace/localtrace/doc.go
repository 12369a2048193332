// Package localtrace is the embedded implementation of trace.Store: trace rows in a small
// SQLite database (modernc.org/sqlite) and diagnostics blobs as files under a directory.
package localtrace
