package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// expandTuple repeats the row tuple of a multi-row query (between /*row*/ and /*end*/) n
// times, renaming @Name to @Name_i in copy i, as the store does for dialects that bind rows
// by name.
func expandTuple(t *testing.T, text string, n int) string {
	t.Helper()
	head, rest, ok := strings.Cut(text, "/*row*/")
	tuple, tail, ok2 := strings.Cut(rest, "/*end*/")
	if !ok || !ok2 {
		t.Fatal("no row markers")
	}
	param := regexp.MustCompile(`@([A-Za-z][A-Za-z0-9]*)`)
	copies := make([]string, n)
	for i := range copies {
		copies[i] = param.ReplaceAllString(tuple, fmt.Sprintf("@${1}_%d", i))
	}
	return head + strings.Join(copies, ",\n") + tail
}

// returnedIDs runs a multi-row update with rows (each row's named values) and returns the
// Id and Version of every row it returned, sorted.
func returnedIDs(t *testing.T, db *sql.DB, text string, rows []map[string]any) [][2]int64 {
	t.Helper()
	var args []any
	for i, r := range rows {
		for name, v := range r {
			args = append(args, sql.Named(fmt.Sprintf("%s_%d", name, i), v))
		}
	}
	rs, err := db.Query(expandTuple(t, text, len(rows)), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out [][2]int64
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]int64{vals[slices.Index(cols, "Id")].(int64), vals[slices.Index(cols, "Version")].(int64)})
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	return out
}

// TestClaimManyAndFinishManyFenceEachRow: the multi-row send claim and outcome statements
// guard each of their rows on its own, as the single-row statements do. A row whose Version
// moved since the read (another claimer won), or whose job is no longer Sending, updates
// nothing and is not returned; the other rows of the same statement are updated and
// returned. The store's batch calls cannot show this, as they read and update under one
// write lock.
func TestClaimManyAndFinishManyFenceEachRow(t *testing.T) {
	t.Parallel()
	s, q := planStore(t)
	db := s.DB()
	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		if _, err := db.ExecContext(ctx, q.SQL("NotificationInsert"),
			sql.Named("DeliveryKey", fmt.Sprintf("dk-%d", i)), sql.Named("EffectKey", fmt.Sprintf("dk-%d", i)),
			sql.Named("SchedulerKey", "sk"), sql.Named("SchedulerId", nil), sql.Named("BusinessUnitId", "bu-1"), sql.Named("Channel", "log"),
			sql.Named("Recipient", "a@example.test"), sql.Named("Template", "t"), sql.Named("PayloadJson", "{}"),
			sql.Named("LocalDate", "2026-10-01"), sql.Named("Now", int64(1000))); err != nil {
			t.Fatal(err)
		}
	}
	// Another claimer bumped job 2 after the batch read it at Version 1.
	if _, err := db.ExecContext(ctx, "UPDATE NotificationJob SET Version = 2 WHERE Id = 2"); err != nil {
		t.Fatal(err)
	}
	claim := func(id int64) map[string]any {
		return map[string]any{"Id": id, "Version": int64(1), "LeaseExpiresOn": int64(61000), "Revision": int64(2), "Now": int64(1000)}
	}
	got := returnedIDs(t, db, q.SQL("NotificationClaimMany"), []map[string]any{claim(1), claim(2), claim(3)})
	if want := [][2]int64{{1, 2}, {3, 2}}; !slices.Equal(got, want) {
		t.Fatalf("claim returned %v, want %v (job 2's Version moved)", got, want)
	}
	finish := func(id, token int64) map[string]any {
		return map[string]any{"Id": id, "Token": token, "Status": "Sent", "ProviderReference": nil, "LastError": nil,
			"NextAttemptOn": nil, "RetryIncrement": 0, "Hold": 0, "TemplateVersion": nil, "Now": int64(2000)}
	}
	// Job 1 at its claim's Version; job 2 at its Version but not Sending; job 3 stale; job 4
	// never claimed.
	got = returnedIDs(t, db, q.SQL("NotificationFinishMany"), []map[string]any{finish(1, 2), finish(2, 2), finish(3, 1), finish(4, 1)})
	if want := [][2]int64{{1, 3}}; !slices.Equal(got, want) {
		t.Fatalf("finish returned %v, want %v", got, want)
	}
	states := queryRows(t, db, "SELECT Id || ':' || Status || ':' || Version FROM NotificationJob ORDER BY Id", scanString)
	if want := "1:Sent:3 2:Queued:2 3:Sending:2 4:Queued:1"; strings.Join(states, " ") != want {
		t.Fatalf("rows %v, want %s", states, want)
	}
}

// TestClaimManyAndFinishManySeekAtFullSize: the plans of the multi-row guarded updates with
// the 100 rows of a full statement (TestHotPathQueriesSeekIndexes explains them with one):
// still one primary-key seek per VALUES row, no scan of NotificationJob, no sort.
func TestClaimManyAndFinishManySeekAtFullSize(t *testing.T) {
	t.Parallel()
	s, q := planStore(t)
	for _, name := range []string{"NotificationClaimMany", "NotificationFinishMany"} {
		plan, err := explain(s.DB(), expandTuple(t, q.SQL(name), 100))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seek := false
		for _, line := range plan {
			seek = seek || strings.Contains(line, "SEARCH NotificationJob USING INTEGER PRIMARY KEY (rowid=?)")
			if strings.Contains(line, "SCAN NotificationJob") || strings.Contains(line, "TEMP B-TREE") {
				t.Errorf("%s at 100 rows scans or sorts: %q", name, plan)
			}
		}
		if !seek {
			t.Errorf("%s at 100 rows does not seek the primary key: %q", name, plan)
		}
	}
}
