package sqlite_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
)

// TestAttributeUpdateKeepOrderLeavesTheRankIndex: the attribute engine's update of a row
// whose OrderKey does not change (AttributeUpdateKeepOrder: a flag set again, a streak in the
// same period, every repeat login's first_login and login_streak) must not open the ranking
// index IX_AttributeValue_Rank for writing, while AttributeUpdate does (an UPDATE rewrites
// every index holding a column of its SET list, whether or not the value changes): the
// index's delete and insert were most of a repeat login's attribute writes
// (docs/performance.md, "What tipped W6").
func TestAttributeUpdateKeepOrderLeavesTheRankIndex(t *testing.T) {
	t.Parallel()
	db, q := migratedDB(t, "sqlite", "file:"+filepath.Join(t.TempDir(), "rank.db"))
	ctx := context.Background()
	var root int64
	if err := db.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_master WHERE name = 'IX_AttributeValue_Rank'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	writesRank := func(name string) bool {
		t.Helper()
		text := q.SQL(name)
		if text == "" {
			t.Fatalf("%s: no such query", name)
		}
		// The parameters as NULL literals: which indexes an UPDATE writes follows its SET
		// list, not the values.
		rows, err := db.QueryContext(ctx, "EXPLAIN "+regexp.MustCompile(`@\w+`).ReplaceAllString(text, "NULL"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer rows.Close()
		found := false
		for rows.Next() {
			var addr, p1, p2, p3 int64
			var op string
			var p4, p5, comment any
			if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
				t.Fatal(err)
			}
			if op == "OpenWrite" && p2 == root {
				found = true
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return found
	}
	if !writesRank("AttributeUpdate") {
		t.Fatal("AttributeUpdate does not open IX_AttributeValue_Rank for writing: the check cannot tell")
	}
	if writesRank("AttributeUpdateKeepOrder") {
		t.Error("AttributeUpdateKeepOrder opens IX_AttributeValue_Rank for writing; want the index left alone")
	}
}
