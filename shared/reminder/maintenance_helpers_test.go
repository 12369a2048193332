package reminder

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
)

// The maintenance services' own tests run inside the package (runOnce and testSignals are
// unexported, as in River's maintenance services) on SQLite, with a manual clock and a store
// that fails on request.

const maintSettingGuid = "7c1e4d2a-9b3f-4e5a-8c6d-0a1b2c3d4e5f"

var errInjected = errors.New("injected failure")

type maintFixture struct {
	st    *failingStore
	clock *automation.ManualClock
	svc   *Service
}

// newMaintFixture: business units bu-syd (Australia/Sydney) and bu-nyc, one active
// date-based setting of bu-syd on PoliceVetting (30, 7 and 0 days before expiresOn, 09:00),
// the clock at 2026-09-01T00:00Z.
func newMaintFixture(t *testing.T) *maintFixture {
	t.Helper()
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	storetest.Units(t, sq, storetest.SydneyAndNewYork...)
	clock := automation.NewManualClock(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
	fs := &failingStore{Store: sq, failFrom: map[string]int{}, calls: map[string]int{}}
	f := &maintFixture{st: fs, clock: clock, svc: &Service{Store: fs, Clock: clock, Channels: map[string]bool{"log": true}}}
	set, err := ParseSetting([]byte(`{"guid":"` + maintSettingGuid + `","businessUnitId":"bu-syd","name":"Expiry","sourceType":"PoliceVetting",
	  "triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[30, 7, 0],"sendLocalTime":"09:00",
	  "template":"tpl","channels":["log"],"recipients":{"field":"staffEmail"},"isActive":true}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := SettingRecord(set, 1, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := sq.ReminderSettingUpsert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	return f
}

// snapshots stores n PoliceVetting sources of bu-syd (p-1..p-n) expiring in December 2026,
// updated one minute apart from the clock's instant; it returns the last update instant.
func (f *maintFixture) snapshots(t *testing.T, n int) time.Time {
	t.Helper()
	var on time.Time
	for i := 1; i <= n; i++ {
		on = f.clock.Now().Add(time.Duration(i) * time.Minute)
		guid := "p-" + string(rune('0'+i))
		if _, err := f.st.SourceSnapshotApply(context.Background(), store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: guid, BusinessUnitID: "bu-syd",
			Revision: 1, DataJSON: `{"expiresOn":"2026-12-1` + string(rune('0'+i)) + `","staffEmail":"` + guid + `@example.test","isActive":true}`,
			LastEventID: "evt-" + guid, UpdatedOn: on}); err != nil {
			t.Fatal(err)
		}
	}
	return on
}

// state reads a sweep's saved state (the zero state when none is stored).
func (f *maintFixture) state(t *testing.T, key string) store.ReconcileState {
	t.Helper()
	st, err := f.st.ReconcileStateGet(context.Background(), key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return st
}

// failingStore fails a method with errInjected from its n-th call on (failFromCall).
// oweSettingChange stores n sources (snapshots) and requests the settings sweep of the
// fixture's setting; it returns the sweep key.
func (f *maintFixture) oweSettingChange(t *testing.T, n int) string {
	t.Helper()
	f.snapshots(t, n)
	key := settingSweepKey(maintSettingGuid)
	if err := f.st.ReconcileStateRequest(context.Background(), key, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	return key
}

// failAfterFirstBatch is a batchSaved signal that, after the first saved batch, records the
// sweep key's state in *afterFirst and makes the store's method fail from its next call
// (the next batch's read).
func (f *maintFixture) failAfterFirstBatch(t *testing.T, key, method string, afterFirst *store.ReconcileState) func(string) {
	return func(string) {
		if afterFirst.SweepKey == "" {
			*afterFirst = f.state(t, key)
			f.st.failFromCall(method, 1)
		}
	}
}

type failingStore struct {
	Store
	mu       sync.Mutex
	failFrom map[string]int
	calls    map[string]int
}

func (s *failingStore) failFromCall(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failFrom[method], s.calls[method] = n, 0
}

func (s *failingStore) heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.failFrom)
}

func (s *failingStore) check(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	if n, ok := s.failFrom[method]; ok && s.calls[method] >= n {
		return errInjected
	}
	return nil
}

func (s *failingStore) SourceSnapshotList(ctx context.Context, p store.SourceSnapshotListParams) ([]store.SourceSnapshot, error) {
	if err := s.check("SourceSnapshotList"); err != nil {
		return nil, err
	}
	return s.Store.SourceSnapshotList(ctx, p)
}

func (s *failingStore) SchedulerListFuturePending(ctx context.Context, p store.SchedulerListFuturePendingParams) ([]automation.SchedulerRow, error) {
	if err := s.check("SchedulerListFuturePending"); err != nil {
		return nil, err
	}
	return s.Store.SchedulerListFuturePending(ctx, p)
}

func (s *failingStore) IdempotencyPurge(ctx context.Context, before time.Time, limit int) (int, error) {
	if err := s.check("IdempotencyPurge"); err != nil {
		return 0, err
	}
	return s.Store.IdempotencyPurge(ctx, before, limit)
}

// rowCount counts the scheduler rows of a source.
func (f *maintFixture) rowCount(t *testing.T, guid string) int {
	t.Helper()
	rows, err := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: guid, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}
