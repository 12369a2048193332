package sqlite_test

import (
	"strings"
	"testing"
)

// TestDeliveryInsertChecksSeek pins the plans of the delivery inserts after migration 0025:
// each of their checks is one index seek per inserted row, never a walk of NotificationJob
// or AutomationScheduler (a scan there would make every completion cost the table). The
// effect check of a job whose effect is another key seeks the partial unique index
// UX_NotificationJob_Effect, the cross check the DeliveryKey's unique index, and the
// SchedulerId the scheduler row's primary key, then its SchedulerKey's unique index.
func TestDeliveryInsertChecksSeek(t *testing.T) {
	t.Parallel()
	s, q := planStore(t)
	want := []string{
		"SEARCH j USING INDEX UX_NotificationJob_Effect (BusinessUnitId=? AND EffectKey=?)",
		"SEARCH j USING INDEX sqlite_autoindex_NotificationJob_1 (DeliveryKey=?)",
		"SEARCH s USING INTEGER PRIMARY KEY (rowid=?)",
		"SEARCH s USING COVERING INDEX sqlite_autoindex_AutomationScheduler_2 (SchedulerKey=?)",
	}
	for _, name := range []string{"NotificationInsert", "NotificationInsertMany"} {
		plan, err := explain(s.DB(), q.SQL(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, w := range want {
			found := false
			for _, line := range plan {
				found = found || line == w
			}
			if !found {
				t.Errorf("%s: no %q in %q", name, w, plan)
			}
		}
		for _, line := range plan {
			if strings.HasPrefix(line, "SCAN ") && line != "SCAN CONSTANT ROW" && line != "SCAN v" {
				t.Errorf("%s scans: %q in %q", name, line, plan)
			}
		}
	}
}
