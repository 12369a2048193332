package reminder_test

// Regression tests from the hostile review of the reminder lifecycle (issue 4). Each test
// failed before its fix.

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

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
	if _, err := f.st.SourceSnapshotApply(ctx, store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: "e-1", BusinessUnitID: "bu-syd",
		Revision: 1, DataJSON: `{"expiresOn":"2026-10-31","staffEmail":"alice@example.test"}`, LastEventID: "evt-1", UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
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
