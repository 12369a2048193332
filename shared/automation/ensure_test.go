package automation_test

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// TestDecideEnsure walks every row of the ensure table (docs/architecture.md#ensure). The store
// conformance suite checks the same rows end to end on every SQL dialect.
func TestDecideEnsure(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	c := automation.Candidate{SchedulerKey: "k", InputHash: "h1", ScheduledOn: at, ScheduledLocalDate: "2026-10-01", ScheduledLocalTime: "09:00", TimeZoneID: "UTC"}
	row := func(st automation.Status) *automation.SchedulerRow {
		return &automation.SchedulerRow{SchedulerKey: "k", InputHash: "h1", Status: st, ScheduledOn: at, ScheduledLocalDate: "2026-10-01", ScheduledLocalTime: "09:00", TimeZoneID: "UTC"}
	}
	moved := c
	moved.ScheduledOn, moved.ScheduledLocalTime = at.Add(time.Hour), "10:00"
	other := c
	other.InputHash = "h2"
	missed := c
	missed.MissedReason = automation.ReasonMissedWindow
	supportCancelled := row(automation.StatusCancelled)
	supportCancelled.ReasonCode = automation.ReasonSupportCancelled
	held := row(automation.StatusPending)
	held.IsOnSupportHold, held.ConflictInputHash = true, "h2"
	cases := []struct {
		name string
		row  *automation.SchedulerRow
		c    automation.Candidate
		want automation.EnsureAction
	}{
		{"no row", nil, c, automation.EnsureInserted},
		{"no row, missed", nil, missed, automation.EnsureRecordedMissed},
		{"pending, same", row(automation.StatusPending), c, automation.EnsureUnchanged},
		{"pending, new schedule", row(automation.StatusPending), moved, automation.EnsureUpdated},
		{"pending, missed candidate", row(automation.StatusPending), missed, automation.EnsureUnchanged},
		{"failed, same hash", row(automation.StatusFailed), c, automation.EnsureReactivated},
		{"deactivated, same hash", row(automation.StatusDeactivated), c, automation.EnsureReactivated},
		{"cancelled, same hash", row(automation.StatusCancelled), c, automation.EnsureReactivated},
		{"cancelled by support, same hash: the cancel sticks", supportCancelled, c, automation.EnsureUnchanged},
		{"cancelled by support, new schedule: still cancelled", supportCancelled, moved, automation.EnsureUnchanged},
		{"cancelled by support, other hash: conflict", supportCancelled, other, automation.EnsureConflict},
		{"deactivated, missed", row(automation.StatusDeactivated), missed, automation.EnsureUnchanged},
		{"completed", row(automation.StatusCompleted), c, automation.EnsureAlreadyCompleted},
		{"completed, other hash", row(automation.StatusCompleted), other, automation.EnsureAlreadyCompleted},
		{"processing", row(automation.StatusProcessing), moved, automation.EnsureInProgress},
		{"pending, other hash", row(automation.StatusPending), other, automation.EnsureConflict},
		{"failed, other hash", row(automation.StatusFailed), other, automation.EnsureConflict},
		{"same conflict again", held, other, automation.EnsureUnchanged},
		{"a third hash on a held row", held, func() automation.Candidate { x := c; x.InputHash = "h3"; return x }(), automation.EnsureConflict},
	}
	for _, tc := range cases {
		if got := automation.DecideEnsure(tc.row, tc.c); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestManualClock(t *testing.T) {
	t.Parallel()
	syd := time.FixedZone("AEST", 10*3600)
	c := automation.NewManualClock(time.Date(2026, 1, 1, 10, 0, 0, 0, syd))
	if c.Now().Location() != time.UTC || c.Now().Hour() != 0 {
		t.Fatalf("clock must read UTC: %v", c.Now())
	}
	c.Advance(90 * time.Second)
	if c.Now().Minute() != 1 || c.Now().Second() != 30 {
		t.Fatalf("advance: %v", c.Now())
	}
	if (automation.SystemClock{}).Now().Location() != time.UTC {
		t.Fatal("system clock must read UTC")
	}
}
