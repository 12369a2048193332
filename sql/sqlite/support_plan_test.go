package sqlite_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

var planParam = regexp.MustCompile(`(?:^|[^@\w])@([A-Za-z_][A-Za-z0-9_]*)`)

// TestSupportQueriesSeekIndexes proves the support API's queries never scan a large table:
// SQLite's query plan for each must seek an index (SEARCH), or scan an index that only
// holds the rows asked for (a partial index), and never sort more than a capped count;
// each query names the index it must use.
func TestSupportQueriesSeekIndexes(t *testing.T) {
	t.Parallel()
	s, q := planStore(t)
	// The index (or key) each query must seek; "-" for statements that read nothing.
	want := map[string]string{
		"SupportSchedulerFindByKey":                "sqlite_autoindex_AutomationScheduler_2 (SchedulerKey=?)",
		"SupportSchedulerFindBySource":             "IX_AutomationScheduler_Source (SourceEntityType=? AND SourceEntityGuid=? AND rowid<?)",
		"SupportSchedulerFindByBusinessUnitStatus": "IX_AutomationScheduler_StatusId (Status=? AND Id<?)", // the unit filtered (migration 0022)
		"SupportSchedulerFindByBusinessUnit":       "IX_AutomationScheduler_BusinessUnit (BusinessUnitId=? AND Id<?)",
		"SupportSchedulerFindByStatus":             "IX_AutomationScheduler_StatusId (Status=? AND Id<?)",
		"SupportSchedulerFindOnHold":               "IX_AutomationScheduler_Hold (Id<?)",
		"SupportSchedulerFindByScheduledOn":        "IX_AutomationScheduler_ScheduledOn (ScheduledOn>?)",
		"SupportSchedulerFindAll":                  "INTEGER PRIMARY KEY (rowid<?)", // no filter: the newest @Limit rows
		"SupportSchedulerGetById":                  "INTEGER PRIMARY KEY (rowid=?)",
		"SupportSchedulerGetByGuid":                "sqlite_autoindex_AutomationScheduler_1 (Guid=?)",
		"SupportSchedulerRelease":                  "INTEGER PRIMARY KEY (rowid=?)",
		"SupportSchedulerRetryNow":                 "INTEGER PRIMARY KEY (rowid=?)",
		"SupportSchedulerCancel":                   "INTEGER PRIMARY KEY (rowid=?)",
		"SupportSchedulerRunNow":                   "INTEGER PRIMARY KEY (rowid=?)",
		"SupportSchedulerTouch":                    "INTEGER PRIMARY KEY (rowid=?)",
		"SupportSchedulerListHeld":                 "IX_AutomationScheduler_Hold (Id>?)",
		"SupportReleasePaceGetForUpdate":           "sqlite_autoindex_SupportReleasePace_1 (Name=?)",
		"SupportReleasePaceSet":                    "-",
		"SupportAuditInsert":                       "-",
		"SupportAuditListByScheduler":              "IX_SupportAudit_Scheduler (SchedulerId=?)",
		"SupportNotificationListByKey":             "IX_NotificationJob_SchedulerId (SchedulerId=?)",
		"SourceStaleEventUpsert":                   "-",
		"SourceStaleEventGet":                      "sqlite_autoindex_SourceStaleEvent_1 (EntityType=? AND EntityGuid=?)",
		"SupportMetricsPendingDue":                 "IX_AutomationScheduler_Due (ScheduledOn<?)",
		"SupportMetricsOldestDue":                  "IX_AutomationScheduler_Due (ScheduledOn<?)",
		"SupportMetricsProcessing":                 "IX_AutomationScheduler_Lease",
		"SupportMetricsExpiredLeases":              "IX_AutomationScheduler_Lease (ProcessingLeaseExpiresOn<?)",
		"SupportMetricsFailed":                     "IX_AutomationScheduler_StatusId (Status=?)",
		"SupportMetricsHeldByReason":               "IX_AutomationScheduler_Hold",
		"SupportMetricsDeactivatedSince":           "IX_AutomationScheduler_Deactivated (UpdatedOn>?)",
		"SupportMetricsOutboxUnsent":               "IX_Outbox_Unpublished",
		"SupportMetricsOutboxOldest":               "IX_Outbox_Unpublished",
		"SupportMetricsUnknownDeliveries":          "IX_NotificationJob_UnknownAll",
		"SupportMetricsHeldReservations":           "IX_BudgetReservation_Campaign (BusinessUnitId=? AND CampaignId=? AND Status=?)",
		"SupportMetricsFeesWithStatus":             "IX_FeeTransfer_Status (Status=?)",
		"SupportThroughput":                        "COVERING INDEX IX_NotificationJob_Updated (UpdatedOn>? AND UpdatedOn<?)", // by channel too: no table read per delivery (0064)
		"SupportCommandThroughput":                 "IX_CampaignCommand_Updated (UpdatedOn>? AND UpdatedOn<?)",
	}
	// Partial indexes hold only the rows they are for, so scanning one is bounded by what
	// the query counts.
	partial := regexp.MustCompile(`^SCAN \w+ USING (COVERING )?INDEX (IX_AutomationScheduler_(Due|Lease|Hold|Deactivated)|IX_Outbox_Unpublished|IX_NotificationJob_UnknownAll)$`)
	var names []string
	for _, n := range q.Names() {
		if strings.HasPrefix(n, "Support") || strings.HasPrefix(n, "SourceStaleEvent") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) < 25 {
		t.Fatalf("found only %d support queries", len(names))
	}
	for _, name := range names {
		text := q.SQL(name)
		plan, err := explain(s.DB(), text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no expected plan in this test; add one", name)
			continue
		}
		found := w == "-" && len(plan) == 0
		for _, line := range plan {
			if w != "-" && strings.Contains(line, "USING") && strings.HasSuffix(strings.TrimPrefix(strings.TrimPrefix(line, "SEARCH "), "SCAN "), w) {
				found = true
			}
			if w != "-" && strings.Contains(line, w) {
				found = true
			}
			switch {
			case strings.Contains(line, "TEMP B-TREE FOR GROUP BY") && strings.HasPrefix(name, "SupportMetrics"):
				// grouping the capped subquery's rows (at most @Cap)
			case strings.Contains(line, "TEMP B-TREE FOR GROUP BY") && (name == "SupportThroughput" || name == "SupportCommandThroughput"):
				// grouping the covering index's range of one bounded window (store.MaxThroughputWindow)
			case strings.Contains(line, "TEMP B-TREE"):
				t.Errorf("%s sorts its rows: %q\nplan: %q", name, line, plan)
			case !strings.HasPrefix(line, "SCAN "):
			case strings.HasPrefix(line, "SCAN json_each"), line == "SCAN d", strings.HasPrefix(line, "SCAN CONSTANT ROW"):
			case partial.MatchString(line):
			case name == "SupportMetricsHeldReservations" && strings.HasPrefix(line, "SCAN b"):
				// one row per campaign with a budget (not per command), each seeking its HELD reservations
			default:
				t.Errorf("%s scans a table: %q\nplan: %q", name, line, plan)
			}
		}
		if !found {
			t.Errorf("%s does not use %s\nplan: %q", name, w, plan)
		}
		t.Logf("%s: %q", name, plan)
	}
}
