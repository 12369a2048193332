package reminder

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
)

// staleRows stores n Pending reminder rows (09:00 Sydney on 2026-10-01..) whose ScheduledOn
// is an hour off their local intent, as if computed with older tzdata; it returns their keys
// and the instants they should have.
func staleRows(t *testing.T, f *maintFixture, n int) (keys []string, want []time.Time) {
	t.Helper()
	syd, err := localtime.LoadZone("Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	var cs []automation.Candidate
	for i := 1; i <= n; i++ {
		date := fmt.Sprintf("2026-10-%02d", i)
		d, _ := localtime.ParseDate(date)
		tod, _ := localtime.ParseTimeOfDay("09:00")
		at := localtime.Resolve(syd, d, tod)
		key := fmt.Sprintf("reminder:test:%d", i)
		cs = append(cs, automation.Candidate{AutomationType: automation.TypeReminder, TriggerType: automation.TriggerDateBased,
			SchedulerKey: key, InputHash: "h", SettingGuid: maintSettingGuid, SourceEntityType: "PoliceVetting", SourceEntityGuid: fmt.Sprintf("p-%d", i),
			BusinessUnitID: "bu-syd", ScheduledOn: at.Add(time.Hour), ScheduledLocalDate: date, ScheduledLocalTime: "09:00", TimeZoneID: "Australia/Sydney"})
		keys, want = append(keys, key), append(want, at)
	}
	if _, err := f.st.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: f.clock.Now(), Candidates: cs}); err != nil {
		t.Fatal(err)
	}
	return keys, want
}

func scheduledOn(t *testing.T, f *maintFixture, key string) time.Time {
	t.Helper()
	row, err := f.st.SchedulerGetByKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return row.ScheduledOn
}

// One pass re-times every stale row, counts them and records the tzdata version; the next
// pass has nothing to do.
func TestTZDataResyncerRunOnceCounts(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	keys, want := staleRows(t, f, 3)
	saved := 0
	r := &TZDataResyncer{Store: f.st, Clock: f.clock, Config: TZDataResyncConfig{BatchSize: 2},
		testSignals: testSignals{batchSaved: func(string) { saved++ }}}
	res, err := r.runOnce(ctx)
	if err != nil || res != (TZDataResyncResult{Batches: 2, Rescheduled: 3, Complete: true}) || saved != 2 {
		t.Fatalf("runOnce = %+v (%d saved), %v", res, saved, err)
	}
	for i, k := range keys {
		if got := scheduledOn(t, f, k); !got.Equal(want[i]) {
			t.Fatalf("%s at %v, want %v", k, got, want[i])
		}
	}
	if st := f.state(t, sweepTZData); st.Marker != localtime.TZDataVersion || st.Cursor != "" {
		t.Fatalf("state %+v", st)
	}
	if res, err := r.runOnce(ctx); err != nil || res != (TZDataResyncResult{Complete: true}) {
		t.Fatalf("second pass = %+v, %v", res, err)
	}
}

// A batch that fails keeps the cursor of the last saved batch and no marker; the next pass
// resumes after the rows already re-timed.
func TestTZDataResyncerFailingBatchKeepsPosition(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	keys, want := staleRows(t, f, 3)
	var afterFirst store.ReconcileState
	r := &TZDataResyncer{Store: f.st, Clock: f.clock, Config: TZDataResyncConfig{BatchSize: 1, MaxBatches: 10}}
	r.testSignals.batchSaved = f.failAfterFirstBatch(t, sweepTZData, "SchedulerListFuturePending", &afterFirst)
	res, err := r.runOnce(ctx)
	if !errors.Is(err, errInjected) || res.Rescheduled != 1 || res.Complete {
		t.Fatalf("failing pass = %+v, %v", res, err)
	}
	if st := f.state(t, sweepTZData); st.Cursor == "" || st.Cursor != afterFirst.Cursor || st.Version != afterFirst.Version || st.Marker != "" {
		t.Fatalf("position moved on a failed batch: %+v → %+v", afterFirst, st)
	}
	if got := scheduledOn(t, f, keys[1]); got.Equal(want[1]) {
		t.Fatal("a row after the failed batch was re-timed")
	}
	f.st.heal()
	r.testSignals = testSignals{}
	res, err = r.runOnce(ctx)
	if err != nil || res.Rescheduled != 2 || !res.Complete {
		t.Fatalf("resumed pass = %+v, %v", res, err)
	}
	if st := f.state(t, sweepTZData); st.Marker != localtime.TZDataVersion {
		t.Fatalf("state %+v", st)
	}
}
