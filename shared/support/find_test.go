package support_test

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/support"
)

// Canonical is what a page cursor is bound to: its text may not change, or the cursors
// handed out before stop working (each member under its query parameter's name, sorted,
// instants in UTC to the nanosecond, empty members left out). The support client sends a
// Query under the same names.
func TestCanonicalIsPinned(t *testing.T) {
	yes := false
	from := time.Date(2026, 11, 1, 9, 30, 0, 5, time.FixedZone("+07", 7*3600))
	to := from.Add(time.Hour)
	f := support.Filter{SchedulerKey: "reminder:k", SourceType: "PoliceVetting", SourceGuid: "g-1", BusinessUnitID: "bu-syd",
		Status: "Failed", OnHold: &yes, ScheduledFrom: &from, ScheduledTo: &to}
	want := "businessUnitId=bu-syd&onHold=false&scheduledFrom=2026-11-01T02%3A30%3A00.000000005Z&scheduledTo=2026-11-01T03%3A30%3A00.000000005Z" +
		"&schedulerKey=reminder%3Ak&sourceGuid=g-1&sourceType=PoliceVetting&status=Failed"
	if got := f.Canonical(); got != want {
		t.Errorf("Canonical() = %q\nwant          %q", got, want)
	}
	if got := (support.Filter{SourceType: "PoliceVetting", SourceGuid: "g-1"}).Canonical(); got != "sourceGuid=g-1&sourceType=PoliceVetting" {
		t.Errorf("sparse Canonical() = %q", got)
	}
	q := support.Query{SchedulerKey: "reminder:k", SourceType: "PoliceVetting", SourceGuid: "g-1", BusinessUnitID: "bu-syd", Status: "Failed",
		OnHold: "false", ScheduledFrom: "2026-11-01T02:30:00.000000005Z", ScheduledTo: "2026-11-01T03:30:00.000000005Z"}
	if got := q.Values().Encode(); got != want {
		t.Errorf("Query.Values() = %q, want Canonical's names and text", got)
	}
}
