package reminder_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// After-offsets (negative offsetsDays: days after the target date) through every rule of
// the date-based path: the event flow's deactivate-and-recreate, the late rule, the
// lateness limit at execution, the DST rule, settings changes and reconciliation. The
// setting is UC-13's "dormant 90 days after the last qualifying transaction" on the
// fixture's Sydney business unit; expected instants come from the DST oracle
// (`tzoracle.py Australia/Sydney 2026-07-06 02:30 -90` → 2026-10-03T16:30:00Z) or are
// computed by hand in the comments.

// dormantSetting: 90 days after expiresOn (the fixture's date field, standing for the last
// transaction date), at the given local time.
// dormantSince is a fixture with the dormant setting at 09:00 and alice's last transaction on
// lastTx (YYYY-MM-DD) processed.
func dormantSince(t *testing.T, lastTx string) *fixture {
	t.Helper()
	f := newFixture(t, dormantSetting("09:00"))
	f.mustProcess(t, event("evt-1", 1, with(alice, "expiresOn", lastTx)))
	return f
}

func dormantSetting(at string) string {
	return settingJSON("bu-syd", "[-90]", at, false)
}

func TestAfterOffsetEventFlowMovesTheOccurrence(t *testing.T) {
	t.Parallel()
	// Last transaction 2026-07-06 → dormant on 2026-10-04 09:00 AEDT (the DST start day,
	// after the gap): 2026-10-03T22:00:00Z (oracle).
	f := dormantSince(t, "2026-07-06")
	eq(t, f.rows(t), "2026-10-04/Pending/")
	rows := f.rowMap(t)
	for k, r := range rows {
		if !strings.HasSuffix(k, ":2026-07-06:-90") || !r.ScheduledOn.Equal(utc("2026-10-03T22:00:00Z")) {
			t.Fatalf("%s %v", k, r.ScheduledOn)
		}
	}
	// A new transaction (revision 2) moves it: the old occurrence is Superseded, the new one
	// is 90 days after 2026-08-01 = 2026-10-30 09:00 AEDT = 2026-10-29T22:00:00Z.
	f.mustProcess(t, event("evt-2", 2, with(alice, "expiresOn", "2026-08-01")))
	eq(t, f.rows(t), "2026-10-04/Deactivated/Superseded", "2026-10-30/Pending/")
	// The older transaction redelivered, or arriving late, moves nothing back.
	f.mustProcess(t, event("evt-1", 1, with(alice, "expiresOn", "2026-07-06")))
	f.mustProcess(t, event("evt-1b", 1, with(alice, "expiresOn", "2026-07-06")))
	eq(t, f.rows(t), "2026-10-04/Deactivated/Superseded", "2026-10-30/Pending/")
	// Due: exactly one completion with one delivery; claiming again finds nothing.
	f.clock.Set(utc("2026-10-29T22:00:00Z"))
	if n := completeDue(t, f); n != 1 {
		t.Fatalf("completed %d", n)
	}
	if n := completeDue(t, f); n != 0 {
		t.Fatalf("completed again %d", n)
	}
	eq(t, f.rows(t), "2026-10-04/Deactivated/Superseded", "2026-10-30/Completed/")
}

// The late rule: a transaction date whose +90 day has passed is MissedWindow when the event
// arrives; one whose +90 day is today in Sydney is sent now; a row found due later than
// maxLatenessHours is TooLate at execution.
func TestAfterOffsetLateRule(t *testing.T) {
	t.Parallel()
	t.Run("missed", func(t *testing.T) {
		t.Parallel()
		// now 2026-09-01T00:00Z = 10:00 AEST on 2026-09-01; 2026-05-01 + 90 = 2026-07-30.
		f := dormantSince(t, "2026-05-01")
		eq(t, f.rows(t), "2026-07-30/Deactivated/MissedWindow")
	})
	t.Run("today", func(t *testing.T) {
		t.Parallel()
		// 2026-06-03 + 90 = 2026-09-01, 09:00 AEST = 2026-08-31T23:00Z: passed an hour ago, today → due now.
		f := dormantSince(t, "2026-06-03")
		eq(t, f.rows(t), "2026-09-01/Pending/")
		if n := completeDue(t, f); n != 1 {
			t.Fatalf("completed %d", n)
		}
	})
	t.Run("too late at execution", func(t *testing.T) {
		t.Parallel()
		f := dormantSince(t, "2026-07-06")
		// Due 2026-10-03T22:00Z; found 48 h and 1 s later.
		f.clock.Set(utc("2026-10-05T22:00:01Z"))
		rows := f.claimDue(t, 1)
		out, err := f.h.Execute(context.Background(), rows[0], f.clock.Now())
		if err != nil || out.Deactivate != automation.ReasonTooLate {
			t.Fatalf("%+v %v", out, err)
		}
	})
}

// The DST product rule on an after-offset: 02:30 on Sydney's DST start day does not exist
// and is sent at 03:30 AEDT (oracle: 2026-10-03T16:30:00Z); 02:00 on the fall-back day is
// ambiguous and takes the earlier instant (2026-01-05 + 90 = 2026-04-05 02:00 +11:00 =
// 2026-04-04T15:00:00Z).
func TestAfterOffsetDSTRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ at, last, wantLocal, wantUTC string }{
		{"02:30", "2026-07-06", "2026-10-04", "2026-10-03T16:30:00Z"},
		{"02:00", "2026-01-05", "2026-04-05", "2026-04-04T15:00:00Z"},
	} {
		f := newFixture(t, dormantSetting(tc.at))
		f.clock.Set(utc("2026-01-01T00:00:00Z"))
		f.mustProcess(t, event("evt-1", 1, with(alice, "expiresOn", tc.last)))
		for _, r := range f.rowMap(t) {
			if r.ScheduledLocalDate != tc.wantLocal || r.ScheduledLocalTime != tc.at || !r.ScheduledOn.Equal(utc(tc.wantUTC)) {
				t.Errorf("%s %s: %s %s %v, want %s %s", tc.last, tc.at, r.ScheduledLocalDate, r.ScheduledLocalTime, r.ScheduledOn, tc.wantLocal, tc.wantUTC)
			}
		}
	}
}

// Settings changes: an offset change (-90 → -60) supersedes and recreates the pending row;
// a send-time change re-times it in place (same key), through the DST gap.
func TestAfterOffsetSettingsChanges(t *testing.T) {
	t.Parallel()
	t.Run("offset", func(t *testing.T) {
		t.Parallel()
		f := dormantSince(t, "2026-07-06")
		res := put(t, f, strings.Replace(dormantSetting("09:00"), "[-90]", "[-60]", 1), 1)
		if strings.Join(res.Propagation.Change, ",") != "identity" || res.Propagation.RowsDeactivated != 1 || res.Propagation.RowsEnsured != 1 {
			t.Fatalf("%+v", res.Propagation)
		}
		eq(t, f.rows(t), "2026-09-04/Pending/", "2026-10-04/Deactivated/Superseded")
		// 2026-09-04 09:00 AEST (oracle: 2026-09-03T23:00:00Z).
		for k, r := range f.rowMap(t) {
			if strings.HasSuffix(k, ":-60") && !r.ScheduledOn.Equal(utc("2026-09-03T23:00:00Z")) {
				t.Fatalf("%s %v", k, r.ScheduledOn)
			}
		}
	})
	t.Run("send time", func(t *testing.T) {
		t.Parallel()
		f := dormantSince(t, "2026-07-06")
		before := f.rowMap(t)
		res := put(t, f, dormantSetting("02:30"), 1)
		if strings.Join(res.Propagation.Change, ",") != "sendTime" || res.Propagation.RowsUpdatedInPlace != 1 {
			t.Fatalf("%+v", res.Propagation)
		}
		after := f.rowMap(t)
		for k, b := range before {
			a := after[k]
			if a.Guid != b.Guid || a.ScheduledLocalTime != "02:30" || !a.ScheduledOn.Equal(utc("2026-10-03T16:30:00Z")) {
				t.Fatalf("%s: %+v", k, a)
			}
		}
	})
}

// Reconciliation: a stored snapshot whose event never produced rows (the rows were lost)
// gets its after-offset occurrence from the source sweep; the tzdata resync re-times a
// pending after-offset row from its local intent.
func TestAfterOffsetReconciliation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, dormantSetting("02:30"))
	f.snapshot(t, "2026-07-06")
	rec := &reminder.Reconciler{Service: f.svc}
	if _, err := rec.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, f.rows(t), "2026-10-04/Pending/")
	var row automation.SchedulerRow
	for _, r := range f.rowMap(t) {
		row = r
	}
	if !row.ScheduledOn.Equal(utc("2026-10-03T16:30:00Z")) {
		t.Fatalf("swept row at %v", row.ScheduledOn)
	}
	// A row stored under "older tzdata" (an hour off its local intent) is re-timed.
	tz, err := f.st.ReconcileStateGet(ctx, "tzdata")
	if err != nil {
		t.Fatal(err)
	}
	tz.Marker, tz.UpdatedOn = "2024a", f.clock.Now()
	if _, err := f.st.ReconcileStateSave(ctx, tz); err != nil {
		t.Fatal(err)
	}
	c := automation.Candidate{AutomationType: row.AutomationType, TriggerType: row.TriggerType, SchedulerKey: row.SchedulerKey, InputHash: row.InputHash,
		SettingGuid: row.SettingGuid, SourceEntityType: row.SourceEntityType, SourceEntityGuid: row.SourceEntityGuid, BusinessUnitID: row.BusinessUnitID,
		ScheduledOn: row.ScheduledOn.Add(time.Hour), ScheduledLocalDate: row.ScheduledLocalDate, ScheduledLocalTime: row.ScheduledLocalTime, TimeZoneID: row.TimeZoneID}
	if _, err := f.st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: f.clock.Now(), Candidates: []automation.Candidate{c}}); err != nil {
		t.Fatal(err)
	}
	r, err := rec.RunOnce(ctx)
	if err != nil || r.Rescheduled != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	got, _ := f.st.SchedulerGetByKey(ctx, row.SchedulerKey)
	if !got.ScheduledOn.Equal(utc("2026-10-03T16:30:00Z")) {
		t.Fatalf("resynced to %v", got.ScheduledOn)
	}
}
