package reminder_test

// Regression tests from the hostile review of the reminder lifecycle (issue 4). Each test
// failed before its fix.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// A source sweep that keeps failing (the domain app's list endpoint of one source type is
// down) must not starve the other sweeps: the (business unit, source type) pairs after it
// are still swept, the Idempotency-Key purge still runs, and the run reports the failure.
func TestReconciliationFailingSweepDoesNotStarveTheOthers(t *testing.T) {
	t.Parallel()
	aid := strings.NewReplacer(settingGuid, "3c3c3c3c-5d7a-4c41-9d0e-6b1c2a3d4e5f", `"PoliceVetting"`, `"FirstAid"`).Replace(settingJSON("bu-syd", "[0]", "09:00", false))
	f := newFixture(t, settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), aid)
	ctx := context.Background()
	// PoliceVetting (after FirstAid in the rotation) is swept from the pipeline's snapshots.
	f.snapshot(t, "2026-10-31")
	if _, err := f.st.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "s", Key: "old", RequestHash: "h",
		Now: f.clock.Now().AddDate(0, 0, -30), Lease: 60e9}); err != nil {
		t.Fatal(err)
	}
	app := &domainApp{entities: map[string]domainEntity{}, fail: true}
	srv := httptest.NewServer(app)
	defer srv.Close()
	rec := &reminder.Reconciler{Service: f.svc, Config: reminder.ReconcileConfig{
		Listers: map[string]reminder.SourceLister{"FirstAid": reminder.HTTPSourceLister{URL: srv.URL}}}}
	for i := 0; i < 2; i++ {
		r, err := rec.RunOnce(ctx)
		if err == nil || !strings.Contains(err.Error(), "FirstAid") {
			t.Fatalf("run %d: the failing sweep is not reported: %v", i, err)
		}
		if r.Complete {
			t.Fatalf("run %d: a run with a failed sweep says it is complete: %+v", i, r)
		}
		if i == 0 && r.Purged != 1 {
			t.Fatalf("run %d: the Idempotency-Key purge did not run: %+v", i, r)
		}
	}
	eq(t, f.rows(t), "2026-10-01/Pending/", "2026-10-24/Pending/", "2026-10-31/Pending/")
}

// A threshold row waiting for its send window (quiet hours) is re-timed in place when the
// window changes (docs/architecture.md#settings-changes: a send-time change updates pending rows, same key, new ScheduledOn)
// and when its business unit's time zone changes. A row already due keeps its schedule, so
// a stream of events still cannot push it back. Expectations from tzoracle.py.
func TestThresholdPendingRowFollowsSendWindowAndZoneChanges(t *testing.T) {
	t.Parallel()
	quiet := `{"start":"08:00","end":"20:00"}`
	pending := func(t *testing.T, f *fixture) (string, string) {
		t.Helper()
		rows, err := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "ClassSession", SourceEntityGuid: "class-1", Limit: 10})
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows %+v %v", rows, err)
		}
		r := rows[0]
		return r.ScheduledOn.UTC().Format(time.RFC3339), r.ScheduledLocalDate + " " + r.ScheduledLocalTime + " " + r.TimeZoneID + " " + string(r.Status)
	}
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, classSettingJSON(string(reminder.OncePerThreshold), "[80]", quiet))
		// 2026-10-01 21:00 AEST: outside the window, due at 08:00 AEST the next morning.
		f.clock.Set(utc("2026-10-01T11:00:00Z"))
		f.mustProcess(t, classEvent("e1", 1, 9, 10))
		if on, local := pending(t, f); on != "2026-10-01T22:00:00Z" || local != "2026-10-02 08:00 Australia/Sydney Pending" {
			t.Fatalf("before: %s %s", on, local)
		}
		f.clock.Set(utc("2026-10-01T12:00:00Z"))
		return f
	}
	t.Run("window opens earlier", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		res, err := f.admin().UpdateSetting(context.Background(), all, classSetting,
			[]byte(classSettingJSON(string(reminder.OncePerThreshold), "[80]", `{"start":"06:00","end":"20:00"}`)), 1)
		if err != nil || strings.Join(res.Propagation.Change, ",") != "sendTime" || res.Propagation.RowsUpdatedInPlace != 1 {
			t.Fatalf("%+v %v", res.Propagation, err)
		}
		// tzoracle.py Australia/Sydney 2026-10-02 06:00 → 2026-10-01T20:00:00Z
		if on, local := pending(t, f); on != "2026-10-01T20:00:00Z" || local != "2026-10-02 06:00 Australia/Sydney Pending" {
			t.Fatalf("after: %s %s", on, local)
		}
	})
	t.Run("business unit moves to Perth", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		a := f.admin()
		bu, err := a.Units().Get(context.Background(), all, "bu-syd")
		if err != nil {
			t.Fatal(err)
		}
		if _, prop, err := a.UpdateBusinessUnit(context.Background(), all, "bu-syd", businessunit.Input{Name: "Sydney", TimeZone: "Australia/Perth"}, bu.Version); err != nil || prop.RowsUpdatedInPlace != 1 {
			t.Fatalf("%+v %v", prop, err)
		}
		// tzoracle.py Australia/Perth 2026-10-02 08:00 → 2026-10-02T00:00:00Z
		if on, local := pending(t, f); on != "2026-10-02T00:00:00Z" || local != "2026-10-02 08:00 Australia/Perth Pending" {
			t.Fatalf("after: %s %s", on, local)
		}
	})
	t.Run("a due row keeps its schedule", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		// 08:30 AEST: due (not yet executed); an event arrives and the window is narrowed.
		f.clock.Set(utc("2026-10-01T22:30:00Z"))
		f.mustProcess(t, classEvent("e2", 2, 10, 10))
		if _, err := f.admin().UpdateSetting(context.Background(), all, classSetting,
			[]byte(classSettingJSON(string(reminder.OncePerThreshold), "[80]", `{"start":"09:00","end":"20:00"}`)), 1); err != nil {
			t.Fatal(err)
		}
		if on, _ := pending(t, f); on != "2026-10-01T22:00:00Z" {
			t.Fatalf("a due row was pushed back to %s", on)
		}
	})
}

// A threshold level is written into the SchedulerKey and the ThresholdLevel column
// (nvarchar(50)): a level whose decimal text is longer than MaxLevelChars is refused when
// the setting is saved (422 naming the level), not stored to make over-long keys.
func TestThresholdLevelTextIsBounded(t *testing.T) {
	t.Parallel()
	for _, lv := range []string{"1e-300", "0.00000000000000000000000000001", "123456789012345.123456789"} {
		_, err := reminder.DecodeSetting([]byte(classSettingJSON(string(reminder.FalseToTrue), "[80, "+lv+"]", "")), nil)
		if err == nil || !strings.Contains(err.Error(), "threshold.levels[1]") {
			t.Errorf("level %s: err = %v, want a field error on threshold.levels[1]", lv, err)
		}
	}
	for _, lv := range []string{"87.5", "0.001", "-5", "1000000"} {
		if _, err := reminder.DecodeSetting([]byte(classSettingJSON(string(reminder.FalseToTrue), "["+lv+"]", "")), nil); err != nil {
			t.Errorf("level %s refused: %v", lv, err)
		}
	}
}

// Names that make a threshold key longer than the SchedulerKey column (it is then shortened
// with a hash, docs/architecture.md#scheduler-keys) must still be sent: revalidation compares whole keys, not prefixes.
func TestThresholdRowWithShortenedKeyIsSent(t *testing.T) {
	t.Parallel()
	long := func(c byte) string { return strings.Repeat(string(c), 100) }
	for _, policy := range []reminder.FiringPolicy{reminder.OncePerThreshold, reminder.OncePerDay, reminder.FalseToTrue, reminder.OncePerSource} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			js := strings.NewReplacer(`"sourceType":"ClassSession"`, `"sourceType":"`+long('S')+`"`, `"triggerKey":"booking"`, `"triggerKey":"`+long('t')+`"`,
				`"key":"bookedPercent"`, `"key":"`+long('m')+`"`).Replace(classSettingJSON(string(policy), "[80]", ""))
			f := newFixture(t, js)
			f.clock.Set(utc("2026-10-01T00:00:00Z"))
			ev := strings.NewReplacer(`"ClassSession"`, `"`+long('S')+`"`, `"class-1"`, `"`+long('g')+`"`).Replace(string(classEvent("e1", 1, 9, 10)))
			f.mustProcess(t, []byte(ev))
			rows, err := f.st.SchedulerClaimDue(context.Background(), store.SchedulerClaimDueParams{Now: f.clock.Now(), Lease: time.Minute, Limit: 10})
			if err != nil || len(rows) != 1 || !strings.Contains(rows[0].SchedulerKey, "#sha256=") {
				t.Fatalf("want one row with a shortened key: %+v %v", rows, err)
			}
			out, err := f.h.Execute(context.Background(), rows[0], f.clock.Now())
			if err != nil || out.Deactivate != "" || len(out.Deliveries) != 2 {
				t.Fatalf("deactivate %q, %d deliveries, %v", out.Deactivate, len(out.Deliveries), err)
			}
		})
	}
}

// A recipient resolved at execution that cannot be a delivery's recipient (longer than the
// NotificationJob.Recipient column, 2000 characters) holds the row with an error naming its
// origin, like a control character does; on SQL Server it used to fail the whole
// transaction on every retry with a truncation error that named nothing.
func TestOverLongRecipientHoldsTheRow(t *testing.T) {
	t.Parallel()
	long := "https://hooks.example.test/" + strings.Repeat("a", 2000)
	for name, p := range map[string]reminder.RecipientPolicy{
		"data.staffEmail[0]": {Field: "staffEmail"},
		"roles.managers[0]":  {Role: "managers"},
	} {
		_, err := reminder.ResolveRecipients(p, map[string]any{"staffEmail": []any{long}}, map[string][]string{"managers": {long}})
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "2000") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// A long webhook URL that fits the column is the channel's to judge.
	url := "https://hooks.example.test/" + strings.Repeat("a", 1500)
	if got, err := reminder.ResolveRecipients(reminder.RecipientPolicy{Field: "hook"}, map[string]any{"hook": url}, nil); err != nil || len(got) != 1 {
		t.Errorf("a 1527-character URL: %v %v", got, err)
	}
}

// FalseToTrue counts rising edges from event revisions (docs/architecture.md#threshold-reminders). A settings change evaluated
// from the stored snapshot (no new revision) that finds a level met while its stored state
// says "not met" records no edge, so it must not make a row for an edge that was never
// counted ("e0"): the crossing fires once, as e1, when the next revision confirms it.
func TestFalseToTrueSettingsChangeMakesNoRowForAnUncountedEdge(t *testing.T) {
	t.Parallel()
	js := classSettingJSON(string(reminder.FalseToTrue), "[80]", ``)
	f := newFixture(t, js)
	f.clock.Set(utc("2026-10-01T01:00:00Z"))
	ev := func(id string, rev int64) []byte {
		return []byte(strings.Replace(string(classEvent(id, rev, 5, 10)), `"booked":5`, `"booked":5,"waitlisted":9`, 1))
	}
	f.mustProcess(t, ev("e1", 1)) // 5 of 10 booked: not met
	eq(t, classRows(t, f))
	// The metric now reads the waitlist: 9 of 10, met under the new field.
	if _, err := f.admin().UpdateSetting(context.Background(), all, classSetting, []byte(strings.Replace(js, `"field":"booked"`, `"field":"waitlisted"`, 1)), 1); err != nil {
		t.Fatal(err)
	}
	eq(t, classRows(t, f))
	f.clock.Set(utc("2026-10-01T01:10:00Z"))
	f.mustProcess(t, ev("e2", 2))
	completeDue(t, f)
	eq(t, classRows(t, f), "80:FalseToTrue:e1/Completed/")
}

// A business unit's time-zone change re-times the rows of every active setting of the
// unit, however many there are: settings past the first page are queued for Reconciliation
// too (the list used to stop at store.MaxBatch settings, leaving the rest in the old zone).
func TestZoneChangeReachesEverySettingOfTheUnit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	base := settingJSON("bu-syd", "[0]", "09:00", false)
	var last string
	for i := 0; i <= store.MaxBatch; i++ {
		last = fmt.Sprintf("%08x-5d7a-4c41-9d0e-6b1c2a3d4e5f", 0x10000000+i)
		f.putSetting(t, strings.NewReplacer(settingGuid, last, `"PoliceVetting"`, fmt.Sprintf(`"Type%d"`, i)).Replace(base))
	}
	a := f.admin()
	bu, err := a.Units().Get(ctx, all, "bu-syd")
	if err != nil {
		t.Fatal(err)
	}
	_, prop, err := a.UpdateBusinessUnit(ctx, all, "bu-syd", businessunit.Input{Name: "Sydney", TimeZone: "Australia/Perth"}, bu.Version)
	if err != nil || prop.Status != reminder.PropagationQueued {
		t.Fatalf("%+v %v", prop, err)
	}
	st, err := f.st.ReconcileStateGet(ctx, "setting:"+last)
	if err != nil || st.Generation <= st.DoneGeneration {
		t.Fatalf("the last setting's propagation is not owed: %+v %v", st, err)
	}
}

// The sweep's position is stored in ReconciliationState.CursorPosition (nvarchar(1000)): a
// domain app's nextCursor longer than that is refused by the lister with an error saying
// so, before any source of the page is applied (on SQL Server it failed the save after the
// page, so the sweep re-applied the same page on every run and never moved).
func TestHTTPListerRefusesOverLongCursor(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"items":[{"entityGuid":"e-1","revision":1,"changedOn":"2026-09-01T00:00:00Z","data":{"expiresOn":"2026-10-31"}}],"nextCursor":%q}`,
			strings.Repeat("c", 1001))
	}))
	defer srv.Close()
	_, err := reminder.HTTPSourceLister{URL: srv.URL}.ListSources(context.Background(), reminder.SourceQuery{BusinessUnitID: "bu-syd", SourceType: "PoliceVetting", Limit: 10})
	if err == nil || !strings.Contains(err.Error(), "nextCursor") {
		t.Fatalf("err = %v", err)
	}
}

// A source page is one JSON value: an answer with more after it is refused naming what it
// is, not read as its first page with the rest dropped.
func TestHTTPListerRefusesTrailingData(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"items":[{"entityGuid":"e-1","revision":1,"changedOn":"2026-09-01T00:00:00Z","data":{"expiresOn":"2026-10-31"}}],"nextCursor":""}`+
			`{"items":[{"entityGuid":"e-2","revision":1,"changedOn":"2026-09-01T00:00:00Z","data":{"expiresOn":"2026-10-31"}}],"nextCursor":""}`)
	}))
	defer srv.Close()
	_, err := reminder.HTTPSourceLister{URL: srv.URL}.ListSources(context.Background(), reminder.SourceQuery{BusinessUnitID: "bu-syd", SourceType: "PoliceVetting", Limit: 10})
	if err == nil || !strings.Contains(err.Error(), "not a source page: trailing data") {
		t.Fatalf("err = %v, want the answer refused as not a source page", err)
	}
}

// A metric is a count or an amount: a number outside ±1e15, nearer to zero than 1e-15 or
// written in more than 64 characters is bad input naming the field (nothing stored). A
// capacity of 1e-999999 made the percentage a million-digit number, copied as metricValue
// into every delivery's payload (1 MB per recipient).
func TestThresholdMetricNumbersAreBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ booked, capacity, field string }{
		{"9", "1e-999999", "data.capacity"},
		{"1e16", "10", "data.booked"},
		{"9", strings.Repeat("9", 65), "data.capacity"},
		{"-1e300", "10", "data.booked"},
	} {
		f := classFixture(t, reminder.OncePerThreshold, "[80]")
		raw := strings.Replace(string(classEvent("e1", 1, 9, 10)), `"booked":9,"capacity":10`, `"booked":`+tc.booked+`,"capacity":`+tc.capacity, 1)
		_, err := f.process(t, []byte(raw))
		if !automation.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("booked %.20s of %.20s: err = %.200v, want bad input naming %s", tc.booked, tc.capacity, err, tc.field)
		}
		if _, serr := f.st.SourceSnapshotGet(context.Background(), "ClassSession", "class-1"); serr == nil {
			t.Errorf("booked %.20s of %.20s: a rejected event stored a snapshot", tc.booked, tc.capacity)
		}
	}
	// In range: fine, and exact.
	f := classFixture(t, reminder.OncePerThreshold, "[80]")
	raw := strings.Replace(string(classEvent("e1", 1, 9, 10)), `"booked":9,"capacity":10`, `"booked":0.000000000000001,"capacity":0.0000000000000012`, 1)
	f.mustProcess(t, []byte(raw))
	eq(t, classRows(t, f), "80:OncePerThreshold:src/Pending/")
}

// A stored source whose data is bad input for a setting (its event would have been
// rejected had the setting existed then) is skipped by the setting's propagation and by the
// source sweep, like a bad listed source: it used to stop the sweep at that source on every
// run, so the sources after it never got their rows.
func TestSweepsSkipSourcesWithBadData(t *testing.T) {
	t.Parallel()
	f := newFixture(t, strings.Replace(settingJSON("bu-syd", "[0]", "09:00", false), `"triggerKey":"expiresOn"`, `"triggerKey":"renewalDue"`, 1))
	ctx := context.Background()
	for i, data := range []string{`{"expiresOn":"2026-10-31","renewalDue":"soon","staffEmail":"a@example.test"}`,
		`{"expiresOn":"2026-10-31","renewalDue":"2026-11-30","staffEmail":"b@example.test"}`} {
		if _, err := f.st.SourceSnapshotApply(ctx, store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: fmt.Sprintf("e-%d", i+1), BusinessUnitID: "bu-syd",
			Revision: 1, DataJSON: data, LastEventID: "x", UpdatedOn: f.clock.Now().Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	// A new setting on expiresOn propagates to both; the old one (renewalDue) is changed to
	// an offset that e-1's bad renewalDue cannot give.
	js := strings.NewReplacer(settingGuid, "4d4d4d4d-5d7a-4c41-9d0e-6b1c2a3d4e5f").Replace(settingJSON("bu-syd", "[0]", "09:00", false))
	res, err := f.admin().CreateSetting(ctx, all, []byte(js))
	if err != nil || res.Propagation.Status != reminder.PropagationComplete || res.Propagation.RowsEnsured != 2 {
		t.Fatalf("create: %+v %v", res.Propagation, err)
	}
	upd, err := f.admin().UpdateSetting(ctx, all, settingGuid, []byte(strings.Replace(settingJSON("bu-syd", "[1]", "09:00", false), `"triggerKey":"expiresOn"`, `"triggerKey":"renewalDue"`, 1)), 1)
	if err != nil || upd.Propagation.Status != reminder.PropagationComplete {
		t.Fatalf("update: %+v %v", upd.Propagation, err)
	}
	rows, _ := f.st.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: "e-2", Limit: 10})
	if len(rows) != 2 {
		t.Fatalf("e-2 has %d rows, want the expiresOn and the renewalDue ones", len(rows))
	}
	rec := &reminder.Reconciler{Service: f.svc}
	if r, err := rec.RunOnce(ctx); err != nil || !r.Complete {
		t.Fatalf("reconciliation: %+v %v", r, err)
	}
}

// editTo14And0 is a race hook: it edits the setting, at version, to offsets [14, 0] at 09:00
// (an error fails the test).
func (f *fixture) editTo14And0(t *testing.T, version int64) func() {
	return func() {
		if _, err := f.admin().UpdateSetting(context.Background(), all, settingGuid, []byte(settingJSON("bu-syd", "[14, 0]", "09:00", false)), version); err != nil {
			t.Error(err)
		}
	}
}

// raceHook is the hook a racing store runs once, at the read it races: what the test lands
// between that read and the write that follows it.
type raceHook struct{ hook func() }

// fire runs the hook, the first time only.
func (r *raceHook) fire() {
	if h := r.hook; h != nil {
		r.hook = nil
		h()
	}
}

// racingStore runs hook once, right after the first settings read of an event: a settings
// change (and its propagation) lands between the event's read of the settings and its sync.
type racingStore struct {
	reminder.Store
	raceHook
}

func (s *racingStore) ReminderSettingListBySource(ctx context.Context, bu, typ string) ([]store.ReminderSettingRecord, error) {
	recs, err := s.Store.ReminderSettingListBySource(ctx, bu, typ)
	s.fire()
	return recs, err
}

// An event applied with the settings it read while a settings change was being propagated
// to the same source must not leave the source in the old settings' state: the change's
// rows were superseded by the event's sync and the old rows reactivated, so the reminder was
// lost (the old rows are Superseded at due time). The event re-syncs with the settings as
// they are after its sync.
func TestEventRacingASettingsChangeEndsInTheNewState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	eq(t, f.rows(t), "2026-10-01/Pending/", "2026-10-24/Pending/", "2026-10-31/Pending/")
	rs := &racingStore{Store: f.st}
	svc := &reminder.Service{Store: rs, Clock: f.clock}
	// Offsets 30/7/0 → 14/0 while the event is between its settings read and its sync.
	rs.hook = f.editTo14And0(t, 1)
	ev, err := events.Parse(event("evt-2", 2, with(alice, "staffEmail", "alice.n@example.test")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Process(ctx, ev); err != nil {
		t.Fatal(err)
	}
	eq(t, f.rows(t), "2026-10-01/Deactivated/Superseded", "2026-10-17/Pending/", "2026-10-24/Deactivated/Superseded", "2026-10-31/Pending/")
}

// settingRaceStore runs hook once, when the n-th read of a setting returns.
type settingRaceStore struct {
	reminder.Store
	n int
	raceHook
}

func (s *settingRaceStore) ReminderSettingGet(ctx context.Context, guid string) (store.ReminderSettingRecord, error) {
	rec, err := s.Store.ReminderSettingGet(ctx, guid)
	if s.n--; s.n == 0 {
		s.fire()
	}
	return rec, err
}

// Two quick edits of one setting: the first one's propagation read version 2, then version 3
// was stored and fully propagated, then the first propagation synced the sources with
// version 2 — the setting said 14 days, the rows said 7. A propagation that finds a newer
// version after a batch syncs that batch again with it and leaves the rest to its pass.
func TestStalePropagationDoesNotUndoANewerOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	rs := &settingRaceStore{Store: f.st, n: 2}
	svc := &reminder.Service{Store: rs, Clock: f.clock}
	a := &reminder.Admin{Store: rs, Clock: f.clock, Service: svc, Channels: map[string]bool{"log": true}}
	// Read 1 is the update's own load; read 2 is its propagation's: version 3 lands now.
	rs.hook = f.editTo14And0(t, 2)
	if _, err := a.UpdateSetting(ctx, all, settingGuid, []byte(settingJSON("bu-syd", "[7, 0]", "09:00", false)), 1); err != nil {
		t.Fatal(err)
	}
	eq(t, f.rows(t), "2026-10-01/Deactivated/Superseded", "2026-10-17/Pending/", "2026-10-24/Deactivated/Superseded", "2026-10-31/Pending/")
}

// The same race in a source sweep: the sweep read the settings, a settings change was stored
// and propagated, then the sweep synced its batch with the settings it had read. The batch
// is synced again with the settings as they are after it.
func TestSourceSweepRacingASettingsChangeEndsInTheNewState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.snapshot(t, "2026-10-31")
	rs := &racingStore{Store: f.st}
	rs.hook = f.editTo14And0(t, 1)
	rec := &reminder.Reconciler{Service: &reminder.Service{Store: rs, Clock: f.clock}}
	if _, err := rec.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, f.rows(t), "2026-10-01/Deactivated/Superseded", "2026-10-17/Pending/", "2026-10-24/Deactivated/Superseded", "2026-10-31/Pending/")
}

// buRaceStore runs hook once, right after the first read of a business unit.
type buRaceStore struct {
	reminder.Store
	raceHook
}

func (s *buRaceStore) BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error) {
	bu, err := s.Store.BusinessUnitGet(ctx, id)
	s.fire()
	return bu, err
}

// The same race with a business unit's time-zone change: the event read the old zone, the
// change re-timed the source's rows, then the event wrote them back in the old zone.
func TestEventRacingAZoneChangeEndsInTheNewZone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	rs := &buRaceStore{Store: f.st}
	rs.hook = func() {
		a := f.admin()
		bu, err := a.Units().Get(ctx, all, "bu-syd")
		if err == nil {
			_, _, err = a.UpdateBusinessUnit(ctx, all, "bu-syd", businessunit.Input{Name: "Sydney", TimeZone: "Australia/Perth"}, bu.Version)
		}
		if err != nil {
			t.Error(err)
		}
	}
	ev, err := events.Parse(event("evt-2", 2, with(alice, "staffEmail", "alice.n@example.test")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&reminder.Service{Store: rs, Clock: f.clock}).Process(ctx, ev); err != nil {
		t.Fatal(err)
	}
	for k, r := range f.rowMap(t) {
		if r.TimeZoneID != "Australia/Perth" {
			t.Errorf("row %s left in %s", k, r.TimeZoneID)
		}
	}
}

// A tzdata resync interrupted by the deployment of yet another tzdata version starts over:
// it used to resume at its cursor, so the rows before it were only ever resynced with the
// intermediate version.
func TestTZDataResyncRestartsForANewerVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	rows, err := f.st.SchedulerListFuturePending(ctx, store.SchedulerListFuturePendingParams{Now: f.clock.Now(), Limit: 10})
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows %v", len(rows), err)
	}
	first := rows[0]
	// The first row is an hour off its local intent (as under other tzdata rules).
	c := automation.Candidate{AutomationType: first.AutomationType, TriggerType: first.TriggerType, SchedulerKey: first.SchedulerKey, InputHash: first.InputHash,
		SettingGuid: first.SettingGuid, SourceEntityType: first.SourceEntityType, SourceEntityGuid: first.SourceEntityGuid, BusinessUnitID: first.BusinessUnitID,
		ScheduledOn: first.ScheduledOn.Add(time.Hour), ScheduledLocalDate: first.ScheduledLocalDate, ScheduledLocalTime: first.ScheduledLocalTime, TimeZoneID: first.TimeZoneID}
	if _, err := f.st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: f.clock.Now(), Candidates: []automation.Candidate{c}}); err != nil {
		t.Fatal(err)
	}
	// A resync for an intermediate version stopped after the first row.
	if _, err := f.st.ReconcileStateSave(ctx, store.ReconcileState{SweepKey: "tzdata", Marker: "2024a",
		Cursor: fmt.Sprintf(`{"on":0,"g":"","id":%d,"tz":"2024b"}`, first.ID), UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	r, err := (&reminder.Reconciler{Service: f.svc}).RunOnce(ctx)
	if err != nil || r.Rescheduled != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	if got, _ := f.st.SchedulerGetByKey(ctx, first.SchedulerKey); !got.ScheduledOn.Equal(first.ScheduledOn) {
		t.Fatalf("row at %v, want %v", got.ScheduledOn, first.ScheduledOn)
	}
}

// requestFailingStore fails every request for a sweep pass.
type requestFailingStore struct{ reminder.Store }

func (requestFailingStore) ReconcileStateRequest(context.Context, string, time.Time) error {
	return fmt.Errorf("database unavailable")
}

// A change whose propagation cannot be requested is not stored: it used to be stored and
// answered "Queued" although nothing was queued, so Reconciliation never applied it (an
// offset change left the old rows, Superseded at due time, and no new ones). The request is
// made before the write, so a crash between the two cannot lose it either.
func TestChangeIsNotStoredWithoutItsPropagation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	st := requestFailingStore{f.st}
	a := &reminder.Admin{Store: st, Clock: f.clock, Service: &reminder.Service{Store: st, Clock: f.clock}, Channels: map[string]bool{"log": true}}
	if _, err := a.UpdateSetting(ctx, all, settingGuid, []byte(settingJSON("bu-syd", "[14, 0]", "09:00", false)), 1); err == nil {
		t.Fatal("the change was accepted without its propagation")
	}
	if rec, _ := f.st.ReminderSettingGet(ctx, settingGuid); rec.Version != 1 {
		t.Fatalf("stored version %d", rec.Version)
	}
	js := strings.NewReplacer(settingGuid, "4d4d4d4d-5d7a-4c41-9d0e-6b1c2a3d4e5f").Replace(settingJSON("bu-syd", "[14]", "09:00", false))
	if _, err := a.CreateSetting(ctx, all, []byte(js)); err == nil {
		t.Fatal("the setting was created without its propagation")
	}
	bu, _ := a.Units().Get(ctx, all, "bu-syd")
	if _, _, err := a.UpdateBusinessUnit(ctx, all, "bu-syd", businessunit.Input{Name: "Sydney", TimeZone: "Australia/Perth"}, bu.Version); err == nil {
		t.Fatal("the zone change was accepted without its propagation")
	}
	if got, _ := f.st.BusinessUnitGet(ctx, "bu-syd"); got.TimeZoneID != "Australia/Sydney" {
		t.Fatalf("zone %s stored", got.TimeZoneID)
	}
	// A change that needs no propagation (template only) goes through.
	if _, err := a.UpdateSetting(ctx, all, settingGuid, []byte(strings.Replace(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), `"template":"tpl"`, `"template":"tpl-2"`, 1)), 1); err != nil {
		t.Fatal(err)
	}
}
