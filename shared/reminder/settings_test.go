package reminder_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

func (f *fixture) admin() *reminder.Admin {
	return &reminder.Admin{Store: f.st, Clock: f.clock, Service: f.svc, Channels: map[string]bool{"log": true, "email": true}}
}

var all = automation.AllBusinessUnits()

// rowsByKey returns the rows of e-1 by "localDate localTime", with status and reason.
func (f *fixture) rowMap(t *testing.T) map[string]automation.SchedulerRow {
	t.Helper()
	rows, err := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: "e-1", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]automation.SchedulerRow{}
	for _, r := range rows {
		out[r.SchedulerKey] = r
	}
	return out
}

// settingsChangeSetup: alice's police check expires 2026-10-31; the 30-day reminder
// (2026-10-01 09:00 AEST) has been sent; the 7-day and 0-day ones are pending.
func settingsChangeSetup(t *testing.T, settings ...string) *fixture {
	t.Helper()
	f := newFixture(t, settings...)
	f.mustProcess(t, event("evt-1", 1, with(alice, "renewalDue", "2026-11-30")))
	f.clock.Set(utc("2026-09-30T23:00:00Z"))
	if n := completeDue(t, f); n != 1 {
		t.Fatalf("completed %d", n)
	}
	f.clock.Set(utc("2026-10-05T00:00:00Z"))
	eq(t, f.rows(t), "2026-10-01/Completed/", "2026-10-24/Pending/", "2026-10-31/Pending/")
	return f
}

func put(t *testing.T, f *fixture, js string, ifMatch int64) reminder.SettingResult {
	t.Helper()
	res, err := f.admin().UpdateSetting(context.Background(), all, settingGuid, []byte(js), ifMatch)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Every row of the settings-change table (docs/architecture.md#settings-changes).
func TestSettingsChangeRules(t *testing.T) {
	t.Parallel()
	base := settingJSON("bu-syd", "[30, 7, 0]", "09:00", false)

	t.Run("offset change: deactivate + recreate", func(t *testing.T) {
		t.Parallel()
		f := settingsChangeSetup(t)
		res := put(t, f, strings.Replace(base, "[30, 7, 0]", "[30, 14, 0]", 1), 1)
		if res.Version != 2 || strings.Join(res.Propagation.Change, ",") != "identity" || res.Propagation.Status != reminder.PropagationComplete ||
			res.Propagation.RowsDeactivated != 1 || res.Propagation.RowsEnsured != 1 {
			t.Fatalf("%+v %+v", res, res.Propagation)
		}
		eq(t, f.rows(t), "2026-10-01/Completed/", "2026-10-17/Pending/", "2026-10-24/Deactivated/Superseded", "2026-10-31/Pending/")
	})

	t.Run("date change: deactivate + recreate", func(t *testing.T) {
		t.Parallel()
		f := settingsChangeSetup(t)
		res := put(t, f, strings.Replace(base, `"triggerKey":"expiresOn"`, `"triggerKey":"renewalDue"`, 1), 1)
		if res.Propagation.RowsDeactivated != 2 || res.Propagation.RowsEnsured != 3 {
			t.Fatalf("%+v", res.Propagation)
		}
		eq(t, f.rows(t), "2026-10-01/Completed/", "2026-10-24/Deactivated/Superseded", "2026-10-31/Deactivated/Superseded",
			"2026-10-31/Pending/", "2026-11-23/Pending/", "2026-11-30/Pending/")
	})

	t.Run("send time change: same key, new ScheduledOn", func(t *testing.T) {
		t.Parallel()
		f := settingsChangeSetup(t)
		before := f.rowMap(t)
		res := put(t, f, strings.Replace(base, `"09:00"`, `"07:30"`, 1), 1)
		if strings.Join(res.Propagation.Change, ",") != "sendTime" || res.Propagation.RowsUpdatedInPlace != 2 || res.Propagation.RowsDeactivated != 0 {
			t.Fatalf("%+v", res.Propagation)
		}
		after := f.rowMap(t)
		if len(after) != len(before) {
			t.Fatalf("rows %d → %d: no row may be added or removed", len(before), len(after))
		}
		for k, b := range before {
			a := after[k]
			switch b.Status {
			case automation.StatusCompleted:
				if a.Version != b.Version {
					t.Errorf("completed row %s changed", k)
				}
			case automation.StatusPending:
				// 07:30 instead of 09:00 on the same local date (no DST change in between).
				if a.Status != automation.StatusPending || a.ScheduledLocalTime != "07:30" || a.ScheduledLocalDate != b.ScheduledLocalDate ||
					!a.ScheduledOn.Equal(b.ScheduledOn.Add(-90*time.Minute)) || a.Guid != b.Guid {
					t.Errorf("pending row %s: before %v %s, after %v %s %s", k, b.ScheduledOn, b.ScheduledLocalTime, a.ScheduledOn, a.ScheduledLocalTime, a.Status)
				}
			}
		}
	})

	t.Run("template, channels, recipients: pending rows untouched, execution reloads", func(t *testing.T) {
		t.Parallel()
		f := settingsChangeSetup(t)
		before := f.rowMap(t)
		changed := strings.NewReplacer(`"template":"tpl"`, `"template":"tpl-v2"`, `"channels":["log"]`, `"channels":["log","email"]`,
			`"recipients":{"field":"staffEmail"}`, `"recipients":{"field":"staffEmail","fixed":["hr@example.test"]}`).Replace(base)
		res := put(t, f, changed, 1)
		if strings.Join(res.Propagation.Change, ",") != "delivery" || res.Propagation.Status != reminder.PropagationNone {
			t.Fatalf("%+v", res.Propagation)
		}
		for k, a := range f.rowMap(t) {
			if a.Version != before[k].Version || !a.ScheduledOn.Equal(before[k].ScheduledOn) {
				t.Errorf("row %s changed", k)
			}
		}
		// At due time the new template, channels and recipients are used.
		f.clock.Set(utc("2026-10-23T22:00:00Z"))
		rows := f.claimDue(t, 1)
		out, err := f.h.Execute(context.Background(), rows[0], f.clock.Now())
		if err != nil || len(out.Deliveries) != 4 || out.Deliveries[0].Template != "tpl-v2" {
			t.Fatalf("%+v %v", out.Deliveries, err)
		}
	})

	t.Run("setting deactivated: pending rows deactivated, completed kept", func(t *testing.T) {
		t.Parallel()
		f := settingsChangeSetup(t)
		res, err := f.admin().DeactivateSetting(context.Background(), all, settingGuid, 1)
		if err != nil || res.Setting.Active() || res.Version != 2 || res.Propagation.RowsDeactivated != 2 {
			t.Fatalf("%+v %+v %v", res, res.Propagation, err)
		}
		eq(t, f.rows(t), "2026-10-01/Completed/", "2026-10-24/Deactivated/ReminderSettingInactive", "2026-10-31/Deactivated/ReminderSettingInactive")
		// Deactivating again changes nothing (idempotent), and an event changes nothing either.
		again, err := f.admin().DeactivateSetting(context.Background(), all, settingGuid, 2)
		if err != nil || again.Version != 2 {
			t.Fatalf("%+v %v", again, err)
		}
		f.mustProcess(t, event("evt-2", 2, alice))
		eq(t, f.rows(t), "2026-10-01/Completed/", "2026-10-24/Deactivated/ReminderSettingInactive", "2026-10-31/Deactivated/ReminderSettingInactive")
		// Reactivating brings the same rows back (same keys).
		back := put(t, f, base, 2)
		if strings.Join(back.Propagation.Change, ",") != "reactivated" || back.Propagation.RowsEnsured != 2 {
			t.Fatalf("%+v", back.Propagation)
		}
		eq(t, f.rows(t), "2026-10-01/Completed/", "2026-10-24/Pending/", "2026-10-31/Pending/")
	})

	t.Run("threshold level edit: deactivate + recreate", func(t *testing.T) {
		t.Parallel()
		f := classFixture(t, reminder.OncePerThreshold, "[80]")
		f.mustProcess(t, classEvent("e1", 1, 8, 10))
		eq(t, classRows(t, f), "80:OncePerThreshold:src/Pending/")
		f.clock.Set(utc("2026-10-01T00:00:20Z"))
		res, err := f.admin().UpdateSetting(context.Background(), all, classSetting, []byte(classSettingJSON(string(reminder.OncePerThreshold), "[75, 90]", "")), 1)
		if err != nil || strings.Join(res.Propagation.Change, ",") != "identity" {
			t.Fatalf("%+v %v", res, err)
		}
		eq(t, classRows(t, f), "75:OncePerThreshold:src/Pending/", "80:OncePerThreshold:src/Deactivated/Superseded")
	})
}

// Bad input and concurrency on the management service: nothing is stored.
func TestAdminRejectsAndChangesNothing(t *testing.T) {
	t.Parallel()
	f := settingsChangeSetup(t)
	ctx := context.Background()
	a := f.admin()
	base := settingJSON("bu-syd", "[30, 7, 0]", "09:00", false)
	before := f.rowMap(t)
	cases := []struct {
		name string
		do   func() error
		code automation.ErrorCode
	}{
		{"stale If-Match", func() error {
			_, err := a.UpdateSetting(ctx, all, settingGuid, []byte(strings.Replace(base, "[30, 7, 0]", "[1]", 1)), 7)
			return err
		}, automation.CodePreconditionFailed},
		{"business unit cannot change", func() error {
			_, err := a.UpdateSetting(ctx, all, settingGuid, []byte(strings.Replace(base, `"bu-syd"`, `"bu-nyc"`, 1)), 1)
			return err
		}, automation.CodeInvalidInput},
		{"offset over ten years after the date", func() error {
			_, err := a.UpdateSetting(ctx, all, settingGuid, []byte(strings.Replace(base, "[30, 7, 0]", "[30, -3651]", 1)), 1)
			return err
		}, automation.CodeInvalidInput},
		{"unknown field", func() error {
			_, err := a.UpdateSetting(ctx, all, settingGuid, []byte(strings.Replace(base, `"name"`, `"colour":"red","name"`, 1)), 1)
			return err
		}, automation.CodeMalformed},
		{"out of scope", func() error {
			_, err := a.UpdateSetting(ctx, automation.BusinessUnits("bu-nyc"), settingGuid, []byte(base), 1)
			return err
		}, automation.CodeNotFound},
		{"unknown setting", func() error {
			_, err := a.DeactivateSetting(ctx, all, "99999999-5d7a-4c41-9d0e-6b1c2a3d4e5f", 1)
			return err
		}, automation.CodeNotFound},
		{"create in unknown business unit", func() error {
			_, err := a.CreateSetting(ctx, all, []byte(strings.Replace(strings.Replace(base, settingGuid, "11111111-5d7a-4c41-9d0e-6b1c2a3d4e5f", 1), `"bu-syd"`, `"bu-mel"`, 1)))
			return err
		}, automation.CodeNotFound},
		{"create existing guid", func() error {
			_, err := a.CreateSetting(ctx, all, []byte(base))
			return err
		}, automation.CodeConflict},
		{"business unit with unknown zone", func() error {
			_, err := a.Units().Create(ctx, all, businessunit.Input{ID: "bu-mars", Name: "Mars", TimeZone: "Mars/Olympus"})
			return err
		}, automation.CodeInvalidInput},
	}
	for _, c := range cases {
		err := c.do()
		if automation.CodeOf(err) != c.code {
			t.Errorf("%s: err = %v (%s), want %s", c.name, err, automation.CodeOf(err), c.code)
		}
	}
	if got, _ := f.st.ReminderSettingGet(ctx, settingGuid); got.Version != 1 {
		t.Fatalf("setting changed: version %d", got.Version)
	}
	for k, r := range f.rowMap(t) {
		if r.Version != before[k].Version {
			t.Fatalf("row %s changed", k)
		}
	}
	if _, err := f.st.BusinessUnitGet(ctx, "bu-mars"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("an invalid business unit was stored")
	}
}

// A change touching more sources than the inline budget allows is finished by the
// Reconciliation sweep, in bounded batches.
func TestLargePropagationFinishesInReconciliation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		ev := strings.Replace(string(event(fmt.Sprintf("evt-%d", i), 1, alice)), `"e-1"`, fmt.Sprintf(`"e-%d"`, i+10), 1)
		f.mustProcess(t, []byte(ev))
	}
	a := f.admin()
	a.BatchSize, a.InlineBatches = 2, 1
	res, err := a.UpdateSetting(ctx, all, settingGuid, []byte(strings.Replace(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), `"09:00"`, `"08:00"`, 1)), 1)
	if err != nil || res.Propagation.Status != reminder.PropagationQueued || res.Propagation.SourcesProcessed != 2 {
		t.Fatalf("%+v %v", res.Propagation, err)
	}
	rec := &reminder.Reconciler{Service: f.svc, Config: reminder.ReconcileConfig{BatchSize: 2, MaxBatches: 1}}
	r1, err := rec.RunOnce(ctx)
	if err != nil || r1.SettingSweeps != 1 || r1.Batches != 1 || r1.Complete {
		t.Fatalf("run 1 %+v %v", r1, err)
	}
	rec.Config.MaxBatches = 10
	if r2, err := rec.RunOnce(ctx); err != nil || r2.SettingSweeps != 1 {
		t.Fatalf("run 2 %+v %v", r2, err)
	}
	// The other sweeps (first tzdata pass, source sweeps) finish in bounded runs too.
	for i := 0; ; i++ {
		r, err := rec.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Complete {
			break
		}
		if i == 10 {
			t.Fatalf("not complete after %d runs: %+v", i, r)
		}
	}
	for i := 0; i < 5; i++ {
		rows, _ := f.st.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: fmt.Sprintf("e-%d", i+10), Limit: 10})
		for _, r := range rows {
			if r.ScheduledLocalTime != "08:00" {
				t.Fatalf("source %d row %s still at %s", i, r.SchedulerKey, r.ScheduledLocalTime)
			}
		}
	}
	if st, _ := f.st.ReconcileStateGet(ctx, "setting:"+settingGuid); st.Generation != st.DoneGeneration {
		t.Fatalf("sweep state %+v", st)
	}
}

func TestClassifyChange(t *testing.T) {
	t.Parallel()
	base := mustSetting(t, settingJSON("bu", "[30, 7, 0]", "09:00", false))
	mod := func(f func(s *reminder.Setting)) reminder.Setting {
		var s reminder.Setting
		b, _ := json.Marshal(base)
		_ = json.Unmarshal(b, &s)
		f(&s)
		return s
	}
	cases := []struct {
		name string
		s    reminder.Setting
		want string
		prop bool
	}{
		{"nothing", base, "", false},
		{"offsets reordered only", mod(func(s *reminder.Setting) { s.OffsetsDays = []int{0, 7, 30} }), "", false},
		{"offset", mod(func(s *reminder.Setting) { s.OffsetsDays = []int{30, 0} }), "identity", true},
		{"annual", mod(func(s *reminder.Setting) { s.Annual = true }), "identity", true},
		{"send time", mod(func(s *reminder.Setting) { t := *s.SendLocalTime; t.Hour = 8; s.SendLocalTime = &t }), "sendTime", true},
		{"template", mod(func(s *reminder.Setting) { s.Template = "x" }), "delivery", false},
		{"lateness", mod(func(s *reminder.Setting) { h := 12; s.MaxLatenessHours = &h }), "delivery", false},
		{"deactivated", mod(func(s *reminder.Setting) { f := false; s.IsActive = &f }), "deactivated", true},
	}
	for _, c := range cases {
		ch := reminder.ClassifyChange(base, c.s)
		if strings.Join(ch.Names(), ",") != c.want || ch.NeedsPropagation() != c.prop {
			t.Errorf("%s: %v %v", c.name, ch.Names(), ch.NeedsPropagation())
		}
	}
}

func TestBusinessUnitZoneChangeRetimesPendingRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	a := f.admin()
	bu, err := a.Units().Get(ctx, all, "bu-syd")
	if err != nil {
		t.Fatal(err)
	}
	out, prop, err := a.UpdateBusinessUnit(ctx, all, "bu-syd", businessunit.Input{Name: "Sydney (Brisbane time)", TimeZone: "E. Australia Standard Time"}, bu.Version)
	if err != nil || out.TimeZoneID != "Australia/Brisbane" || out.TimeZoneIDGiven != "E. Australia Standard Time" || prop.RowsUpdatedInPlace != 3 {
		t.Fatalf("%+v %+v %v", out, prop, err)
	}
	for _, r := range f.rowMap(t) {
		// 09:00 in Brisbane (+10, no DST) on the same local dates.
		if r.TimeZoneID != "Australia/Brisbane" || r.ScheduledOn.Hour() != 23 || r.ScheduledLocalTime != "09:00" {
			t.Errorf("row %s: %v %s %s", r.SchedulerKey, r.ScheduledOn, r.TimeZoneID, r.ScheduledLocalTime)
		}
	}
	if _, _, err := a.UpdateBusinessUnit(ctx, all, "bu-syd", businessunit.Input{Name: "x", TimeZone: "UTC"}, bu.Version); automation.CodeOf(err) != automation.CodePreconditionFailed {
		t.Fatalf("stale update: %v", err)
	}
}

// A new active setting is applied at once to the sources the pipeline already knows.
func TestCreatedSettingSchedulesKnownSources(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mustProcess(t, event("evt-1", 1, alice))
	js := strings.NewReplacer(settingGuid, "4d4d4d4d-5d7a-4c41-9d0e-6b1c2a3d4e5f", "[30, 7, 0]", "[14]").Replace(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false))
	res, err := f.admin().CreateSetting(context.Background(), all, []byte(js))
	if err != nil || res.Propagation.Status != reminder.PropagationComplete || res.Propagation.RowsEnsured != 1 || res.Propagation.Change[0] != "created" {
		t.Fatalf("%+v %v", res.Propagation, err)
	}
	eq(t, f.rows(t), "2026-10-01/Pending/", "2026-10-17/Pending/", "2026-10-24/Pending/", "2026-10-31/Pending/")
}
