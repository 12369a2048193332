package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
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

// TestExpandRows: the tuple between the row markers is repeated with each copy's parameters
// suffixed, parameters are listed once in order of first use, and a query without markers
// is refused.
func TestExpandRows(t *testing.T) {
	head, tuple, tail, params, err := splitRows("INSERT INTO T (A, B, C) VALUES /*row*/(@A, @Bee, @A)/*end*/ ON CONFLICT DO NOTHING;")
	if err != nil || strings.Join(params, ",") != "A,Bee" {
		t.Fatalf("params %q %v", params, err)
	}
	got := expandRows(head, tuple, tail, params, 2)
	want := "INSERT INTO T (A, B, C) VALUES (@A_0, @Bee_0, @A_0),\n(@A_1, @Bee_1, @A_1) ON CONFLICT DO NOTHING;"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	for _, bad := range []string{"INSERT INTO T VALUES (@A)", "VALUES /*row*/(@A)", "/*row*/(@A)/*end*/, /*row*/(@B)/*end*/"} {
		if _, _, _, _, err := splitRows(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
