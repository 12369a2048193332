package sqlite_test

import (
	"database/sql"
	"regexp"
	"slices"
	"testing"
)

// TestHotTablesIndexEntriesPerRow pins the indexes the burn-down writes per row
// (docs/performance.md#indexes-on-the-hot-table). A claim and a completion set Status, the lease,
// Version and UpdatedOn of AutomationScheduler (and NextRetryOn, CompletedOn,
// DispatchResultJson at completion); every index naming one of those columns, in its key or
// in its WHERE, costs entries on the hot path, so adding one must be a decision made here.
// A NotificationJob insert writes every index whose WHERE a Queued row meets. Before
// migration 0022 the claim and completion also rewrote IX_AutomationScheduler_Status and the
// unfiltered IX_AutomationScheduler_Activity (8 of their 16 entries per row), and an insert
// wrote IX_NotificationJob_Activity.
func TestHotTablesIndexEntriesPerRow(t *testing.T) {
	t.Parallel()
	s, _ := planStore(t)
	indexes := func(table string) map[string]string { return indexSQL(t, s.DB(), table) }
	written := regexp.MustCompile(`\b(Status|ProcessingLeaseExpiresOn|Version|UpdatedOn|NextRetryOn|CompletedOn|DispatchResultJson)\b`)
	// The index and the WHERE it must keep (empty: not partial).
	want := map[string]string{
		"IX_AutomationScheduler_Due":         "Status = 'Pending' AND IsOnSupportHold = 0", // the row leaves it at the claim
		"IX_AutomationScheduler_NextWakeUp":  "Status = 'Pending' AND IsOnSupportHold = 0", // the row leaves it at the claim
		"IX_AutomationScheduler_Lease":       "Status = 'Processing'",                      // in at the claim, out at the completion
		"IX_AutomationScheduler_StatusId":    "",                                           // out and in at both steps
		"IX_AutomationScheduler_Activity":    "Status = 'Failed' OR IsOnSupportHold = 1",   // never entered by a completed run
		"IX_AutomationScheduler_Deactivated": "Status = 'Deactivated'",                     // never entered by a completed run
	}
	where := regexp.MustCompile(`(?s)\bWHERE\s+(.*?)\s*;?\s*$`)
	var got []string
	for name, text := range indexes("AutomationScheduler") {
		if !written.MatchString(text) {
			continue
		}
		got = append(got, name)
		w, ok := want[name]
		if !ok {
			t.Errorf("%s is written by a claim or a completion and is not pinned here: %s", name, text)
			continue
		}
		var cond string
		if m := where.FindStringSubmatch(text); m != nil {
			cond = regexp.MustCompile(`\s+`).ReplaceAllString(m[1], " ")
		}
		if cond != w {
			t.Errorf("%s: WHERE %q, want %q", name, cond, w)
		}
	}
	if len(got) != len(want) {
		slices.Sort(got)
		t.Errorf("indexes written by a claim or a completion: %q, want the %d of this test", got, len(want))
	}

	// NotificationJob: every unfiltered index (named or a UNIQUE constraint's) takes an entry
	// per insert; since migration 0025 the only random-key one is the DeliveryKey's, the
	// effect's unique index holding only jobs whose effect is another key.
	full := queryRows(t, s.DB(), `SELECT l.name, group_concat(i.name, ', ')
		FROM pragma_index_list('NotificationJob') AS l, pragma_index_info(l.name) AS i
		WHERE l.partial = 0 GROUP BY l.name`, func(rows *sql.Rows) (string, error) {
		var name, cols string
		err := rows.Scan(&name, &cols)
		return name + " (" + cols + ")", err
	})
	slices.Sort(full)
	// IX_NotificationJob_Updated holds finished jobs only since migration 0029, and their
	// channel since 0064 (the overview's deliveries by channel, covering).
	wantFull := []string{"IX_NotificationJob_SchedulerId (SchedulerId)", "sqlite_autoindex_NotificationJob_1 (DeliveryKey)"}
	if !slices.Equal(full, wantFull) {
		t.Errorf("NotificationJob's unfiltered indexes: %q, want %q", full, wantFull)
	}
	if updated := indexes("NotificationJob")["IX_NotificationJob_Updated"]; !regexp.MustCompile(`(?s)\(UpdatedOn, Status, BusinessUnitId, Channel\)\s+WHERE Status IN \('Sent', 'Failed', 'Unknown'\)$`).MatchString(updated) {
		t.Errorf("IX_NotificationJob_Updated: %q", updated)
	}
	effect := indexes("NotificationJob")["UX_NotificationJob_Effect"]
	if !regexp.MustCompile(`(?s)^CREATE UNIQUE INDEX .*\(BusinessUnitId, EffectKey\)\s+WHERE EffectKey <> DeliveryKey$`).MatchString(effect) {
		t.Errorf("UX_NotificationJob_Effect: %q", effect)
	}
}

// TestReportActivitySeeksIndexes pins the activity report's two reads after migration 0022:
// the run counts seek the partial IX_AutomationScheduler_Activity (its WHERE is implied by the
// query's), and the delivery counts range-seek IX_NotificationJob_Updated on the period
// (not every job of the unit on the (BusinessUnitId, EffectKey) unique index). Neither scans
// a table; only the groups are sorted.
func TestReportActivitySeeksIndexes(t *testing.T) {
	t.Parallel()
	s, q := planStore(t)
	want := map[string][]string{
		"ReportActivityRuns": {"SEARCH AutomationScheduler USING INDEX IX_AutomationScheduler_Activity (BusinessUnitId=? AND UpdatedOn>? AND UpdatedOn<?)"},
		"ReportActivityDeliveries": {"SEARCH n USING INDEX IX_NotificationJob_Updated (UpdatedOn>? AND UpdatedOn<?)",
			"SEARCH s USING INDEX sqlite_autoindex_AutomationScheduler_2 (SchedulerKey=?)"},
	}
	for name, lines := range want {
		plan, err := explain(s.DB(), q.SQL(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, w := range lines {
			if !slices.Contains(plan, w) {
				t.Errorf("%s: no %q in %q", name, w, plan)
			}
		}
		for _, line := range plan {
			if regexp.MustCompile(`^SCAN|TEMP B-TREE FOR ORDER BY`).MatchString(line) {
				t.Errorf("%s scans or sorts rows: %q", name, plan)
			}
		}
	}
}

// indexSQL returns the indexes of table by name with their CREATE statement ("" for the
// automatic index of a UNIQUE or PRIMARY KEY constraint).
func indexSQL(t *testing.T, db *sql.DB, table string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, nt := range queryRows(t, db, `SELECT name, COALESCE(sql, '') FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?`, func(rows *sql.Rows) ([2]string, error) {
		var nt [2]string
		err := rows.Scan(&nt[0], &nt[1])
		return nt, err
	}, table) {
		m[nt[0]] = nt[1]
	}
	return m
}
