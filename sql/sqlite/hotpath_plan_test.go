package sqlite_test

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"

	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// TestHotPathQueriesSeekIndexes pins the plans of the queries every poll, relay and sweep
// runs: each must seek its index (or walk a partial index that holds only the rows it is
// for) and never sort, so their cost follows the batch, not the table. Without statistics
// SQLite once chose an equality seek on Status for the claim and sorted every Pending row
// on each poll.
func TestHotPathQueriesSeekIndexes(t *testing.T) {
	t.Parallel()
	s, q := planStore(t)
	want := map[string]string{
		"SchedulerClaimDue":          "IX_AutomationScheduler_Due (ScheduledOn<?)",
		"SchedulerListExpiredLeases": "IX_AutomationScheduler_Lease (ProcessingLeaseExpiresOn<?)",
		"NotificationClaim":          "INTEGER PRIMARY KEY (rowid=?)",
		"NotificationFinish":         "INTEGER PRIMARY KEY (rowid=?)",
		// The batch send claim's and batch record's guarded updates: one primary-key seek
		// per row of the statement's VALUES.
		"NotificationClaimMany":  "NotificationJob USING INTEGER PRIMARY KEY (rowid=?)",
		"NotificationFinishMany": "NotificationJob USING INTEGER PRIMARY KEY (rowid=?)",
		// The batch send claim's read: one seek per key (docs/performance.md#sql-server).
		"NotificationGetManyForUpdate": "sqlite_autoindex_NotificationJob_1 (DeliveryKey=?)",
		"NotificationGetByKey":         "sqlite_autoindex_NotificationJob_1 (DeliveryKey=?)",
		// The ensure's first look: one seek of the SchedulerKey unique index per key.
		"SchedulerGetByKeys":           "sqlite_autoindex_AutomationScheduler_2 (SchedulerKey=?)",
		"NotificationListLeaseExpired": "IX_NotificationJob_Lease (ProcessingLeaseExpiresOn<?)",
		"NotificationListQueuedStale":  "SCAN NotificationJob USING INDEX IX_NotificationJob_Unsent",
		"NotificationListRetryDue":     "IX_NotificationJob_NextAttempt",
		"NotificationListUnsent":       "IX_NotificationJob_Unsent (Id>?)",
		"OutboxListUnpublished":        "SCAN Outbox USING INDEX IX_Outbox_Unpublished",
		// The relay's lease of a batch walks the unpublished rows only, in Id order, from
		// past the rows it has in flight (AfterId: a seek, not a walk from the first row).
		"OutboxClaim": "SEARCH Outbox USING INDEX IX_Outbox_Unpublished (Id>? AND Id<?)",
		// A held destination taken back walks its own rows only.
		"OutboxClaimDestination": "SEARCH Outbox USING INDEX IX_Outbox_UnpublishedByDestination (Destination=? AND Id>? AND Id<?)",
		"OutboxMarkPublished":    "Outbox USING INTEGER PRIMARY KEY (rowid=?)",
		// The relay's mark of a batch: one primary-key seek per id of the statement's rows.
		"OutboxMarkPublishedMany": "Outbox USING INTEGER PRIMARY KEY (rowid=?)",
		"IdempotencyPurge":        "IX_IdempotencyKey_CreatedOn (CreatedOn<?)",
		// The top-N ranking reads its index in order (docs/attributes.md#read-api).
		"AttributeTop":       "IX_AttributeValue_Rank (BusinessUnitId=? AND EntityType=? AND AttributeCode=?)",
		"AttributeDeltaSums": "IX_AttributeDelta_Entity (BusinessUnitId=? AND EntityType=? AND EntityId=?)",
		// The completion's fenced writes seek the row by Id (docs/performance.md#sql-server).
		"SchedulerComplete":   "AutomationScheduler USING INTEGER PRIMARY KEY (rowid=?)",
		"SchedulerFail":       "AutomationScheduler USING INTEGER PRIMARY KEY (rowid=?)",
		"SchedulerDeactivate": "AutomationScheduler USING INTEGER PRIMARY KEY (rowid=?)",
		// The batch completion: one primary-key seek per VALUES row, never a scan of the table.
		"SchedulerCompleteMany": "AutomationScheduler USING INTEGER PRIMARY KEY (rowid=?)",
	}
	for name, w := range want {
		text := q.SQL(name)
		if text == "" {
			t.Errorf("%s: no such query", name)
			continue
		}
		plan, err := explain(s.DB(), text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		found := false
		for _, line := range plan {
			found = found || strings.Contains(line, w)
			if strings.Contains(line, "TEMP B-TREE") {
				t.Errorf("%s sorts: %q", name, plan)
			}
			// "SCAN CONSTANT ROW" walks a statement's own VALUES rows, not a table, and so
			// does "SCAN v", the VALUES rows an UPDATE … FROM joins under the alias v, and
			// "SCAN json_each VIRTUAL TABLE", the elements of a JSON array parameter.
			if strings.HasPrefix(line, "SCAN ") && !strings.Contains(line, w) && line != "SCAN CONSTANT ROW" && line != "SCAN v" &&
				!strings.HasPrefix(line, "SCAN json_each VIRTUAL TABLE") {
				t.Errorf("%s scans: %q", name, plan)
			}
		}
		if !found {
			t.Errorf("%s does not use %q: %q", name, w, plan)
		}
	}
}

// TestNextWakeUpSeeks pins SchedulerNextWakeUp, which every replay input and tick and every
// serve step runs: it must read one entry of an index for the next due row and one for the
// next expiring lease, never walk the Pending rows (it once took the MIN of a CASE over
// every Pending row, so replay slowed down quadratically as work piled up). The plan must
// be two index searches without a scan or a sort.
func TestNextWakeUpSeeks(t *testing.T) {
	t.Parallel()
	plan := planOf(t, "SchedulerNextWakeUp")
	t.Logf("plan: %q", plan)
	var due, lease bool
	for _, line := range plan {
		due = due || strings.HasPrefix(line, "SEARCH AutomationScheduler USING INDEX IX_AutomationScheduler_NextWakeUp")
		lease = lease || strings.HasPrefix(line, "SEARCH AutomationScheduler USING COVERING INDEX IX_AutomationScheduler_Lease")
		if strings.HasPrefix(line, "SCAN AutomationScheduler") || strings.Contains(line, "TEMP B-TREE") {
			t.Errorf("SchedulerNextWakeUp walks or sorts rows: %q", plan)
		}
	}
	if !due || !lease {
		t.Errorf("SchedulerNextWakeUp must seek IX_AutomationScheduler_NextWakeUp and IX_AutomationScheduler_Lease: %q", plan)
	}
}

// explain returns SQLite's query plan lines for a named-parameter query (every parameter
// bound to NULL: plans do not depend on the values).
func explain(db *sql.DB, text string) ([]string, error) {
	var args []any
	seen := map[string]bool{}
	for _, m := range planParam.FindAllStringSubmatch(regexp.MustCompile(`--[^\n]*`).ReplaceAllString(text, ""), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			args = append(args, sql.Named(m[1], nil))
		}
	}
	rows, err := db.Query("EXPLAIN QUERY PLAN "+text, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}

// planStore opens an empty migrated database and the SQLite query files for plan tests.
func planStore(t *testing.T) (*sqlstore.Store, *sqlstore.Queries) {
	t.Helper()
	s := sqlitetest.Open(t)
	q, err := sqlstore.LoadQueries(sqlite.QueryFiles())
	if err != nil {
		t.Fatal(err)
	}
	return s, q
}

// planOf returns SQLite's query plan (explain) for the query named name on an empty migrated
// database (planStore), failing t when it cannot be explained.
func planOf(t *testing.T, name string) []string {
	t.Helper()
	s, q := planStore(t)
	plan, err := explain(s.DB(), q.SQL(name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return plan
}

// migratedDB opens a one-connection database/sql pool on dsn (driver: "sqlite", or a
// wrapping driver a test registered), migrates it and loads the SQLite query files: for
// tests that watch what the driver or the file sees below the store.
func migratedDB(t *testing.T, driver, dsn string) (*sql.DB, *sqlstore.Queries) {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if err := sqlite.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	q, err := sqlstore.LoadQueries(sqlite.QueryFiles())
	if err != nil {
		t.Fatal(err)
	}
	return db, q
}

// TestOutboxMessageIdSeeks pins the two statements that rely on UX_Outbox_MessageId, the
// partial unique index of every message but the delivery facts (migration 0026): the
// gateway's undo seeks it (its WHERE repeats the index's), never scanning the outbox.
func TestOutboxMessageIdSeeks(t *testing.T) {
	t.Parallel()
	plan := planOf(t, "GatewayOutboxDelete")
	if len(plan) != 1 || !strings.Contains(plan[0], "SEARCH Outbox USING INDEX UX_Outbox_MessageId (MessageId=?)") {
		t.Fatalf("GatewayOutboxDelete: %q", plan)
	}
}

// TestOutboxClaimSessionHoldSeeks pins the claim's check that no earlier row of a candidate's
// session waits for a retry (order per session, migration 0070): one seek of the partial
// IX_Outbox_RetryBySession, which holds only the rows waiting for a retry, never a walk of the
// session's or the destination's unpublished rows.
func TestOutboxClaimSessionHoldSeeks(t *testing.T) {
	t.Parallel()
	plan := planOf(t, "OutboxClaim")
	found := false
	for _, line := range plan {
		found = found || strings.Contains(line, "IX_Outbox_RetryBySession (Destination=? AND SessionId=? AND Id<?)")
	}
	if !found {
		t.Errorf("OutboxClaim does not seek IX_Outbox_RetryBySession by session: %q", plan)
	}
}
