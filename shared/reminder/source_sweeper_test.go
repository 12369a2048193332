package reminder

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// One pass sweeps the (bu-syd, PoliceVetting) pair page by page, counts what it did and
// sets the watermark to the latest change seen.
func TestSourceSweeperRunOnceCounts(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	last := f.snapshots(t, 3)
	var keys []string
	s := &SourceSweeper{Service: f.svc, Clock: f.clock, Config: SourceSweepConfig{BatchSize: 2},
		testSignals: testSignals{batchSaved: func(k string) { keys = append(keys, k) }}}
	res, err := s.runOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := SourceSweepResult{Sweeps: 1, Batches: 2, Sources: 3, Ensured: 9, Complete: true}
	if res != want || len(keys) != 2 || keys[0] != "source:bu-syd:PoliceVetting" {
		t.Fatalf("runOnce = %+v (saved %v), want %+v", res, keys, want)
	}
	st := f.state(t, "source:bu-syd:PoliceVetting")
	if st.WatermarkOn == nil || !st.WatermarkOn.Equal(last) || st.Cursor != "" || st.PassHighOn != nil {
		t.Fatalf("state after the pass: %+v", st)
	}
}

// failingLister fails every page from the n-th call on.
type failingLister struct {
	SourceLister
	mu     sync.Mutex
	calls  int
	failAt int // 0: never
}

func (l *failingLister) ListSources(ctx context.Context, q SourceQuery) (SourcePage, error) {
	l.mu.Lock()
	l.calls++
	fail := l.failAt > 0 && l.calls >= l.failAt
	l.mu.Unlock()
	if fail {
		return SourcePage{}, errInjected
	}
	return l.SourceLister.ListSources(ctx, q)
}

// A page that fails (the domain app is down) leaves watermark and cursor where the last
// successful page put them; the next pass resumes there and completes.
func TestSourceSweeperFailingBatchKeepsPosition(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	last := f.snapshots(t, 3)
	lister := &failingLister{SourceLister: SnapshotLister{Store: f.st}, failAt: 2}
	s := &SourceSweeper{Service: f.svc, Clock: f.clock,
		Config: SourceSweepConfig{BatchSize: 1, MaxBatches: 10, Listers: map[string]SourceLister{"PoliceVetting": lister}}}
	key := "source:bu-syd:PoliceVetting"
	res, err := s.runOnce(ctx)
	if !errors.Is(err, errInjected) || res.Sources != 1 || res.Complete {
		t.Fatalf("failing pass = %+v, %v", res, err)
	}
	st1 := f.state(t, key)
	if st1.Cursor == "" || st1.WatermarkOn != nil || st1.PassHighOn == nil || st1.PassHighOn.Equal(last) {
		t.Fatalf("position after the first page: %+v", st1)
	}
	// Failing again moves nothing.
	if _, err := s.runOnce(ctx); !errors.Is(err, errInjected) {
		t.Fatalf("second failing pass: %v", err)
	}
	if st := f.state(t, key); st.Cursor != st1.Cursor || st.Version != st1.Version {
		t.Fatalf("position moved on a failed page: %+v → %+v", st1, st)
	}
	lister.mu.Lock()
	lister.failAt = 0
	lister.mu.Unlock()
	res, err = s.runOnce(ctx)
	if err != nil || res.Sources != 2 || !res.Complete {
		t.Fatalf("resumed pass = %+v, %v", res, err)
	}
	if st := f.state(t, key); st.WatermarkOn == nil || !st.WatermarkOn.Equal(last) || st.Cursor != "" {
		t.Fatalf("state after the resumed pass: %+v", st)
	}
}
