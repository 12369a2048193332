package supportapi_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/replay"
	"github.com/automation-platform/automation/shared/store"
)

// TestSupportRetryOfAnEndedReportRun: a report run is registered by the report service (its
// ReportRun, its one-owner guard); a generic support-retry row under
// "{key}:support-retry:v{n}" is none of that and can only fail. Retrying an ended report run
// here is refused (409) with the report API's retry route to use instead, and nothing is
// created; the report API's retry (its own support-retry key) is the way to send it again.
func TestSupportRetryOfAnEndedReportRun(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../testdata/scenarios/reports.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := replay.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := replay.Run(context.Background(), sc, io.Discard, &replay.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(func(k string) string {
		if k == "AUTOMATION_DATA_DIR" {
			return dir
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	clock := automation.NewManualClock(sc.Until)
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	e := &env{rt: rt, clock: clock}
	ctx := context.Background()
	var done automation.SchedulerRow
	rows, err := rt.Store.SupportSchedulerFind(ctx, store.SupportFindParams{Status: automation.StatusCompleted, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.AutomationType == automation.TypeReportSubscription {
			done = r
		}
	}
	if done.ID == 0 {
		t.Fatal("the scenario has no completed report run")
	}
	r := e.call(t, "POST", fmt.Sprintf("/api/support/scheduler-rows/%d/retry", done.ID), `{"reason":"resend the report"}`, operator, ifMatch(done.Version))
	p := r.problem(t)
	if r.code != 409 || !strings.Contains(p.Detail, "/api/report-subscriptions/") || !strings.Contains(p.Detail, "/retry") {
		t.Fatalf("support retry of a completed report run: %d %+v", r.code, p)
	}
	if _, err := rt.Store.SchedulerGetByKey(ctx, automation.SupportRetryKey(done.SchedulerKey, done.Version)); err == nil {
		t.Fatal("a refused support retry created a row")
	}
	if got := e.row(t, done.ID); got.Version != done.Version {
		t.Fatalf("a refused support retry moved the run's version: %d → %d", done.Version, got.Version)
	}
}
