package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
)

// queryRows runs q with args on db and returns every row read by scan, in the query's
// order; an error of the query, a scan or the rows fails t.
func queryRows[T any](t *testing.T, db *sql.DB, q string, scan func(rows *sql.Rows) (T, error), args ...any) []T {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scanString reads a row of one text column.
func scanString(rows *sql.Rows) (string, error) {
	var s string
	err := rows.Scan(&s)
	return s, err
}
