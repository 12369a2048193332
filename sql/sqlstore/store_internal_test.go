package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	_ "modernc.org/sqlite"
)

var errTransient = errors.New("transient")

func TestInTxRetriesOnlyRetryableFailures(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := New(db, &Queries{byName: map[string]string{}}, Dialect{Name: "test", IsRetryable: func(err error) bool { return errors.Is(err, errTransient) }}, nil)
	ctx := context.Background()
	cases := []struct {
		name     string
		failures int
		failWith error
		calls    int
		wantErr  bool
	}{
		{"succeeds after two transient failures", 2, errTransient, 3, false},
		{"gives up after three attempts", 5, errTransient, 3, true},
		{"does not retry a permanent error", 5, errors.New("constraint"), 1, true},
	}
	for _, tc := range cases {
		calls := 0
		err := s.inTx(ctx, func(*sql.Tx) error {
			calls++
			if calls <= tc.failures {
				return tc.failWith
			}
			return nil
		})
		if calls != tc.calls || (err != nil) != tc.wantErr {
			t.Errorf("%s: calls %d err %v", tc.name, calls, err)
		}
	}
}
