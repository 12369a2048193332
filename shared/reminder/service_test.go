package reminder_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
)

type fixture struct {
	st    store.Store
	clock *automation.ManualClock
	svc   *reminder.Service
	h     *reminder.Handler
}

func newFixture(t *testing.T, settings ...string) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	storetest.Units(t, st, storetest.SydneyAndNewYork...)
	f := &fixture{st: st, clock: automation.NewManualClock(utc("2026-09-01T00:00:00Z"))}
	f.svc = &reminder.Service{Store: st, Clock: f.clock, Channels: map[string]bool{"log": true}}
	f.h = &reminder.Handler{Store: st}
	if len(settings) == 0 {
		settings = []string{settingJSON("bu-syd", "[30, 7, 0]", "09:00", false)}
	}
	for _, js := range settings {
		f.putSetting(t, js)
	}
	return f
}

// snapshot stores revision 1 of source PoliceVetting e-1 (bu-syd, staff alice@example.test,
// event evt-1) expiring on expiresOn (YYYY-MM-DD), as the event path would, without running
// the reminder pipeline on it.
func (f *fixture) snapshot(t *testing.T, expiresOn string) {
	t.Helper()
	if _, err := f.st.SourceSnapshotApply(context.Background(), store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: "e-1", BusinessUnitID: "bu-syd",
		Revision: 1, DataJSON: `{"expiresOn":"` + expiresOn + `","staffEmail":"alice@example.test"}`, LastEventID: "evt-1", UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) putSetting(t *testing.T, js string) {
	t.Helper()
	set := mustSetting(t, js)
	rec, err := reminder.SettingRecord(set, 1, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.ReminderSettingUpsert(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

func event(id string, rev int64, data map[string]any) []byte {
	e := map[string]any{"specversion": "1.0", "id": id, "source": "/hr", "type": "PoliceVetting.Upserted",
		"businessunitid": "bu-syd", "entitytype": "PoliceVetting", "entityguid": "e-1", "revision": rev, "data": data}
	if data == nil {
		e["type"] = "PoliceVetting.deleted"
		delete(e, "data")
	}
	b, _ := json.Marshal(e)
	return b
}

func (f *fixture) process(t *testing.T, raw []byte) (reminder.EventResult, error) {
	t.Helper()
	ev, err := events.Parse(raw)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f.svc.Process(context.Background(), ev)
}

func (f *fixture) mustProcess(t *testing.T, raw []byte) reminder.EventResult {
	t.Helper()
	r, err := f.process(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rows returns "localDate/status/reason" for every row of e-1, sorted.
// claimDue claims the rows due at the fixture's now (a minute's lease) and fails unless
// there are n.
func (f *fixture) claimDue(t *testing.T, n int) []automation.SchedulerRow {
	t.Helper()
	rows, err := f.st.SchedulerClaimDue(context.Background(), store.SchedulerClaimDueParams{Now: f.clock.Now(), Lease: time.Minute, Limit: 10})
	if err != nil || len(rows) != n {
		t.Fatalf("claimed %+v %v, want %d rows", rows, err, n)
	}
	return rows
}

// sendDue claims the one row due at the fixture's now, executes it, fails unless it queued
// deliveries deliveries, and completes it with them (as the poller does); it returns the row
// and its outcome.
func (f *fixture) sendDue(t *testing.T, deliveries int) (automation.SchedulerRow, scheduler.Outcome) {
	t.Helper()
	ctx := context.Background()
	row := f.claimDue(t, 1)[0]
	out, err := f.h.Execute(ctx, row, f.clock.Now())
	if err != nil || len(out.Deliveries) != deliveries {
		t.Fatalf("executed %+v %v, want %d deliveries", out, err, deliveries)
	}
	if err := f.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: row.ID, Token: row.Version, Now: f.clock.Now(), Deliveries: out.Deliveries, Outbox: out.Outbox}); err != nil {
		t.Fatal(err)
	}
	return row, out
}

// annualDue is a fixture with an annual [0] 09:00 setting and alice's vetting expiring on
// 2019-10-01, at 2026-09-30T23:00Z (2026-10-01 09:00 in Sydney), with this year's row claimed.
func annualDue(t *testing.T) (*fixture, []automation.SchedulerRow) {
	t.Helper()
	f := newFixture(t, settingJSON("bu-syd", "[0]", "09:00", true))
	f.mustProcess(t, event("evt-1", 1, with(alice, "expiresOn", "2019-10-01")))
	f.clock.Set(utc("2026-09-30T23:00:00Z"))
	return f, f.claimDue(t, 1)
}

func (f *fixture) rows(t *testing.T) []string {
	t.Helper()
	return sourceRows(t, f, "e-1")
}

func eq(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
}

var alice = map[string]any{"expiresOn": "2026-10-31", "staffEmail": "alice@example.test", "isActive": true}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

func TestEventCreatesOccurrences(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.mustProcess(t, event("evt-1", 1, alice))
	if r.Outcome != reminder.EventApplied || r.Ensured[automation.EnsureInserted] != 3 {
		t.Fatalf("%+v", r)
	}
	eq(t, f.rows(t), "2026-10-01/Pending/", "2026-10-24/Pending/", "2026-10-31/Pending/")
}

func TestDuplicateEventIsNoop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	before, _ := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: "e-1", Limit: 10})
	// The same id again, even with other content, changes nothing.
	r := f.mustProcess(t, event("evt-1", 1, with(alice, "expiresOn", "2027-01-01")))
	if r.Outcome != reminder.EventDuplicate {
		t.Fatalf("%+v", r)
	}
	after, _ := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: "e-1", Limit: 10})
	if len(before) != len(after) {
		t.Fatal("rows changed")
	}
	for i := range before {
		if before[i].Version != after[i].Version {
			t.Fatalf("row %s version changed", before[i].SchedulerKey)
		}
	}
}

func TestOutOfOrderRevisionIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-3", 3, with(alice, "expiresOn", "2026-12-15")))
	r := f.mustProcess(t, event("evt-2", 2, alice))
	if r.Outcome != reminder.EventStale {
		t.Fatalf("%+v", r)
	}
	eq(t, f.rows(t), "2026-11-15/Pending/", "2026-12-08/Pending/", "2026-12-15/Pending/")
	snap, _ := f.st.SourceSnapshotGet(context.Background(), "PoliceVetting", "e-1")
	if snap.Revision != 3 {
		t.Fatalf("snapshot revision %d", snap.Revision)
	}
}

func TestDateMoveSupersedesAndDeletionInvalidates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	f.clock.Set(utc("2026-09-20T00:00:00Z"))
	r := f.mustProcess(t, event("evt-2", 2, with(alice, "expiresOn", "2026-11-30")))
	if r.Deactivated != 3 || r.Ensured[automation.EnsureInserted] != 3 {
		t.Fatalf("%+v", r)
	}
	eq(t, f.rows(t),
		"2026-10-01/Deactivated/Superseded", "2026-10-24/Deactivated/Superseded", "2026-10-31/Deactivated/Superseded",
		"2026-10-31/Pending/", "2026-11-23/Pending/", "2026-11-30/Pending/")
	// Moving back reactivates the original rows (same key, same InputHash).
	r = f.mustProcess(t, event("evt-3", 3, alice))
	if r.Ensured[automation.EnsureReactivated] != 3 || r.Deactivated != 3 {
		t.Fatalf("%+v", r)
	}
	// Deletion deactivates every pending row with SourceNoLongerValid.
	r = f.mustProcess(t, event("evt-4", 4, nil))
	if r.Deactivated != 3 {
		t.Fatalf("%+v", r)
	}
	for _, row := range f.rows(t) {
		if strings.Contains(row, "Pending") {
			t.Fatalf("pending row after deletion: %v", f.rows(t))
		}
	}
	if !strings.Contains(strings.Join(f.rows(t), " "), "2026-10-01/Deactivated/SourceNoLongerValid") {
		t.Fatalf("%v", f.rows(t))
	}
}

func TestInactiveSourceAndSettingDeactivate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	f.mustProcess(t, event("evt-2", 2, with(alice, "isActive", false)))
	eq(t, f.rows(t), "2026-10-01/Deactivated/SourceNoLongerValid", "2026-10-24/Deactivated/SourceNoLongerValid", "2026-10-31/Deactivated/SourceNoLongerValid")
	f.mustProcess(t, event("evt-3", 3, alice))
	eq(t, f.rows(t), "2026-10-01/Pending/", "2026-10-24/Pending/", "2026-10-31/Pending/")
	f.putSetting(t, strings.Replace(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), `"isActive":true`, `"isActive":false`, 1))
	f.mustProcess(t, event("evt-4", 4, alice))
	eq(t, f.rows(t), "2026-10-01/Deactivated/ReminderSettingInactive", "2026-10-24/Deactivated/ReminderSettingInactive", "2026-10-31/Deactivated/ReminderSettingInactive")
}

func TestBadEventChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := map[string][]byte{
		"impossible date": event("evt-1", 1, with(alice, "expiresOn", "2026-02-30")),
		"date as number":  event("evt-2", 1, with(alice, "expiresOn", 20261031)),
		"unknown BU":      []byte(strings.Replace(string(event("evt-3", 1, alice)), `"bu-syd"`, `"bu-mel"`, 1)),
	}
	for name, raw := range cases {
		_, err := f.process(t, raw)
		if !automation.IsInvalid(err) {
			t.Errorf("%s: err = %v, want bad input", name, err)
		}
	}
	if _, err := f.st.SourceSnapshotGet(context.Background(), "PoliceVetting", "e-1"); err == nil {
		t.Fatal("a rejected event stored a snapshot")
	}
	if rows := f.rows(t); len(rows) != 0 {
		t.Fatalf("a rejected event stored rows: %v", rows)
	}
	for _, id := range []string{"evt-1", "evt-2", "evt-3"} {
		if done, _ := f.st.EventProcessed(context.Background(), "/hr", id); done {
			t.Fatalf("%s marked processed", id)
		}
	}
}

// A crash after the snapshot was stored but before the rows were ensured: the redelivered
// event finds its own revision (Reapplied) and finishes the work.
func TestCrashAfterSnapshotIsRepairedByRedelivery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	raw := event("evt-1", 1, alice)
	ev, _ := events.Parse(raw)
	if _, err := f.st.SourceSnapshotApply(context.Background(), store.SourceSnapshot{EntityType: ev.EntityType, EntityGuid: ev.EntityGuid,
		BusinessUnitID: "bu-syd", Revision: 1, DataJSON: ev.DataJSON, LastEventID: ev.ID, UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	r := f.mustProcess(t, raw)
	if r.Outcome != reminder.EventApplied || r.Ensured[automation.EnsureInserted] != 3 {
		t.Fatalf("%+v", r)
	}
}

func TestLateEventRecordsMissedWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.clock.Set(utc("2026-10-24T00:00:00Z")) // 11:00 AEDT on the offset-7 day
	f.mustProcess(t, event("evt-1", 1, alice))
	eq(t, f.rows(t), "2026-10-01/Deactivated/MissedWindow", "2026-10-24/Pending/", "2026-10-31/Pending/")
}

func TestTimeAwareDeactivationKeepsCompletedRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	f.clock.Set(utc("2026-10-01T00:00:00Z"))
	f.sendDue(t, 1)
	// Redelivering an equivalent event later never resends; a deletion keeps the completed row.
	r := f.mustProcess(t, event("evt-2", 2, alice))
	if r.Ensured[automation.EnsureAlreadyCompleted] != 1 {
		t.Fatalf("%+v", r)
	}
	f.mustProcess(t, event("evt-3", 3, nil))
	eq(t, f.rows(t), "2026-10-01/Completed/", "2026-10-24/Deactivated/SourceNoLongerValid", "2026-10-31/Deactivated/SourceNoLongerValid")
}

// An annual offset whose this-year occurrence already passed moves to next year instead of
// being recorded missed (the yearly chain must never end).
func TestAnnualMissedOffsetMovesToNextYear(t *testing.T) {
	t.Parallel()
	f := newFixture(t, settingJSON("bu-syd", "[364, 0]", "09:00", true))
	f.clock.Set(utc("2026-09-02T01:00:00Z")) // 2026-09-02 11:00 AEST
	f.mustProcess(t, event("evt-1", 1, with(alice, "expiresOn", "2020-09-03")))
	// offset 364 of the 2026-09-03 anniversary was 2025-09-04 (past): the chain targets
	// 2027-09-03, whose offset-364 date is 2026-09-04.
	eq(t, f.rows(t), "2026-09-03/Pending/", "2026-09-04/Pending/")
}

func TestAnnualTooLateStillEnsuresNextYear(t *testing.T) {
	t.Parallel()
	f, rows := annualDue(t)
	out, err := f.h.Execute(context.Background(), rows[0], utc("2026-10-05T00:00:00Z"))
	if err != nil || out.Deactivate != automation.ReasonTooLate || len(out.FollowUps) != 1 || out.FollowUps[0].ScheduledLocalDate != "2027-10-01" {
		t.Fatalf("%+v %v", out, err)
	}
}

func TestMoveToAnotherBusinessUnitSupersedesOldRows(t *testing.T) {
	t.Parallel()
	nyc := strings.Replace(strings.Replace(settingJSON("bu-nyc", "[0]", "09:00", false), settingGuid, "1f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", 1), "", "", 1)
	f := newFixture(t, settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), nyc)
	f.mustProcess(t, event("evt-1", 1, alice))
	moved := strings.Replace(string(event("evt-2", 2, alice)), `"bu-syd"`, `"bu-nyc"`, 1)
	r := f.mustProcess(t, []byte(moved))
	if r.Deactivated != 3 || r.Ensured[automation.EnsureInserted] != 1 {
		t.Fatalf("%+v", r)
	}
	rows, _ := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: "e-1", Limit: 10})
	for _, row := range rows {
		if row.BusinessUnitID == "bu-syd" && (row.Status != automation.StatusDeactivated || row.ReasonCode != automation.ReasonSuperseded) {
			t.Fatalf("old BU row %+v", row)
		}
		if row.BusinessUnitID == "bu-nyc" && row.Status != automation.StatusPending {
			t.Fatalf("new BU row %+v", row)
		}
	}
}

func TestIsActiveMustBeBoolean(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.process(t, event("evt-1", 1, with(alice, "isActive", "false")))
	if !automation.IsInvalid(err) || !strings.Contains(err.Error(), "data.isActive") {
		t.Fatalf("err = %v", err)
	}
}

// A deletion is applied even when its business unit is unknown (it only deactivates).
func TestDeletionWithUnknownBusinessUnitStillDeactivates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	del := strings.Replace(string(event("evt-2", 2, nil)), `"bu-syd"`, `"bu-gone"`, 1)
	r := f.mustProcess(t, []byte(del))
	if r.Deactivated != 3 {
		t.Fatalf("%+v", r)
	}
	eq(t, f.rows(t), "2026-10-01/Deactivated/SourceNoLongerValid", "2026-10-24/Deactivated/SourceNoLongerValid", "2026-10-31/Deactivated/SourceNoLongerValid")
}
