package supportapi_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
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
	e, _ := reportsEnv(t)
	rt := e.rt
	ctx := context.Background()
	var done automation.SchedulerRow
	rows, err := rt.Store.SupportSchedulerFind(ctx, store.SupportFindParams{Scope: automation.AllBusinessUnits(), Status: automation.StatusCompleted, Limit: 100})
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
	if r.Code != 409 || !strings.Contains(p.Detail, "/api/report-subscriptions/") || !strings.Contains(p.Detail, "/retry") {
		t.Fatalf("support retry of a completed report run: %d %+v", r.Code, p)
	}
	if _, err := rt.Store.SchedulerGetByKey(ctx, automation.SupportRetryKey(done.SchedulerKey, done.Version)); err == nil {
		t.Fatal("a refused support retry created a row")
	}
	if got := e.Row(t, done.ID); got.Version != done.Version {
		t.Fatalf("a refused support retry moved the run's version: %d → %d", done.Version, got.Version)
	}
}

// TestCancelOfTheNextScheduledReportRun: a report subscription keeps only its next scheduled
// run; the run, when it executes, schedules the one after (docs/architecture.md#report-subscriptions). Cancelling that pending run
// here would end the subscription's schedule without a word (and a cancelled key stays
// cancelled through ensure), so it is refused with the way to stop a subscription; a run-now
// or a run that already failed (its successor exists) can be cancelled.
func TestCancelOfTheNextScheduledReportRun(t *testing.T) {
	t.Parallel()
	e, sc := reportsEnv(t)
	ctx := context.Background()
	rows, err := e.rt.Store.SupportSchedulerFind(ctx, store.SupportFindParams{Scope: automation.AllBusinessUnits(), Status: automation.StatusPending, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var next automation.SchedulerRow
	for _, r := range rows {
		if r.AutomationType == automation.TypeReportSubscription && r.TriggerType == automation.TriggerScheduledRun {
			next = r
		}
	}
	if next.ID == 0 {
		t.Fatal("the scenario has no pending scheduled report run")
	}
	r := e.call(t, "POST", fmt.Sprintf("/api/support/scheduler-rows/%d/cancel", next.ID), `{"reason":"skip this week"}`, operator, ifMatch(next.Version))
	p := r.problem(t)
	if r.Code != 409 || !strings.Contains(p.Detail, "Paused") {
		t.Fatalf("cancel of the next scheduled report run: %d %+v", r.Code, p)
	}
	if got := e.Row(t, next.ID); got.Status != automation.StatusPending || got.Version != next.Version {
		t.Fatalf("a refused cancel changed the run: %s v%d", got.Status, got.Version)
	}
	// The schedule goes on: the run executes and its successor exists.
	e.poll(t, next.ScheduledOn)
	after, err := e.rt.Store.SupportSchedulerFind(ctx, store.SupportFindParams{Scope: automation.AllBusinessUnits(), SourceEntityType: next.SourceEntityType, SourceEntityGuid: next.SourceEntityGuid,
		Status: automation.StatusPending, Limit: 100})
	if err != nil || len(after) == 0 || !after[0].ScheduledOn.After(next.ScheduledOn) {
		t.Fatalf("no run scheduled after %s (until %s): %v %v", next.ScheduledOn, sc.Until, after, err)
	}
}

// reportsEnv replays testdata/scenarios/reports.json and reopens its data at the run's end.
func reportsEnv(t *testing.T) (*env, *replay.Scenario) {
	t.Helper()
	return scenarioEnv(t, "reports.json")
}

// scenarioEnv replays testdata/scenarios/<file> on the embedded runtime and reopens its data
// with the Functions router (app.Open) on a clock at the scenario's end.
func scenarioEnv(t *testing.T, file string) (*env, *replay.Scenario) {
	t.Helper()
	sc, err := replay.ParseFile("../../../testdata/scenarios/" + file)
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
	t.Cleanup(func() { rt.Close() })
	return &env{rt: rt, clock: clock, Sources: apptest.Sources{RT: rt, EntityType: "PoliceVetting"}}, sc
}
