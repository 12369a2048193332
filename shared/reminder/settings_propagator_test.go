package reminder

import (
	"context"
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/store"
)

// One pass applies an owed settings change to every source in batches and counts them;
// the next pass finds nothing owed.
func TestSettingsPropagatorRunOnceCounts(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	key := f.oweSettingChange(t, 3)
	saved := 0
	p := &SettingsPropagator{Service: f.svc, Clock: f.clock, Config: SettingsPropagatorConfig{BatchSize: 2},
		testSignals: testSignals{batchSaved: func(string) { saved++ }}}
	res, err := p.runOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := SettingsPropagationResult{Sweeps: 1, Batches: 2, Sources: 3, Ensured: 9, Complete: true}
	if res != want || saved != 2 {
		t.Fatalf("runOnce = %+v (%d batches saved), want %+v", res, saved, want)
	}
	if st := f.state(t, key); st.DoneGeneration != st.Generation || st.Cursor != "" {
		t.Fatalf("state after the pass: %+v", st)
	}
	if res, err := p.runOnce(ctx); err != nil || res != (SettingsPropagationResult{Complete: true}) {
		t.Fatalf("second pass = %+v, %v", res, err)
	}
}

// A batch that fails leaves the sweep at its last saved batch: the next pass resumes there
// (the first source is not synced again) and completes.
func TestSettingsPropagatorFailingBatchKeepsPosition(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	key := f.oweSettingChange(t, 3)
	var afterFirst store.ReconcileState
	p := &SettingsPropagator{Service: f.svc, Clock: f.clock, Config: SettingsPropagatorConfig{BatchSize: 1, MaxBatches: 10}}
	p.testSignals.batchSaved = f.failAfterFirstBatch(t, key, "SourceSnapshotList", &afterFirst)
	res, err := p.runOnce(ctx)
	if !errors.Is(err, errInjected) || res.Sources != 1 || res.Complete {
		t.Fatalf("failing pass = %+v, %v", res, err)
	}
	if st := f.state(t, key); st.Cursor == "" || st.Cursor != afterFirst.Cursor || st.Version != afterFirst.Version || st.DoneGeneration == st.Generation {
		t.Fatalf("position moved on a failed batch: %+v → %+v", afterFirst, st)
	}
	if f.rowCount(t, "p-1") != 3 || f.rowCount(t, "p-2") != 0 {
		t.Fatal("the first batch's rows are not the only ones")
	}
	f.st.heal()
	p.testSignals = testSignals{}
	res, err = p.runOnce(ctx)
	if err != nil || res.Sources != 2 || !res.Complete {
		t.Fatalf("resumed pass = %+v, %v", res, err)
	}
	if f.rowCount(t, "p-3") != 3 {
		t.Fatal("the resumed pass did not reach the last source")
	}
}
