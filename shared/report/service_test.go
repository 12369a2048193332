package report_test

import (
	"context"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/report"
	"github.com/automation-platform/automation/shared/store"
)

var ctx = context.Background()

// The weekly Monday 08:00 report in Sydney across the April DST change: only the next run
// exists at any time, each run delivers once per recipient with a link to its file in Blob,
// and the second week's CSV counts the first week's deliveries.
func TestScheduledRunsAcrossDSTOneNextRunAtATime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	v := e.create(t, subGuid, weekly())
	if v.NextRun == nil || v.NextRun.ScheduledOn != utc("2027-03-21T21:00:00Z") || v.NextRun.LocalTime != "2027-03-22T08:00:00+11:00" ||
		v.Rollout.Mode != report.ModeShadow || v.Rollout.Source != report.SourceDefault {
		t.Fatalf("view = %+v", v)
	}
	e.setMode(t, subGuid, report.ModeCutover)
	if open := e.open(t, subGuid); len(open) != 1 || open[0].SchedulerKey != v.NextRun.SchedulerKey {
		t.Fatalf("open rows after create = %v", open)
	}
	var at []string
	for _, end := range []string{"2027-03-22T00:00:00Z", "2027-03-29T00:00:00Z", "2027-04-05T00:00:00Z"} {
		e.runUntil(t, utc(end))
		if open := e.open(t, subGuid); len(open) != 1 {
			t.Fatalf("after %s: %d open rows, want only the next run", end, len(open))
		}
	}
	sent := e.sentMessages()
	for i := 0; i < len(sent); i += 2 {
		at = append(at, payloadOf(t, sent[i]).LocalTime)
	}
	want := []string{"2027-03-22T08:00:00+11:00", "2027-03-29T08:00:00+11:00", "2027-04-05T08:00:00+10:00"}
	if len(sent) != 6 || strings.Join(at, ",") != strings.Join(want, ",") {
		t.Fatalf("sent %d, local times %v, want 2 per run at %v", len(sent), at, want)
	}
	last := payloadOf(t, sent[5])
	if last.ScheduledOn != "2027-04-04T22:00:00Z" || last.PeriodStartUTC != "2027-03-28T21:00:00Z" || last.Link != "/api/report-runs/"+last.RunKeyHash+"/file" {
		t.Fatalf("payload = %+v", last)
	}
	att, data, err := e.svc.File(ctx, automation.AllBusinessUnits(), last.RunKeyHash)
	if err != nil || att.BlobName != "reports/"+last.RunKeyHash+"/"+att.SHA256[:16]+"/automation-activity-2027-04-05.csv" {
		t.Fatalf("file %+v %v", att, err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil || len(recs) != 2 || strings.Join(recs[0], ",") != strings.Join(report.ActivityHeader, ",") {
		t.Fatalf("csv %q %v", data, err)
	}
	// The previous week's run of this very subscription: two deliveries sent.
	if r := recs[1]; r[3] != "ReportSubscription" || r[4] != subGuid || r[5] != "Weekly activity" || r[6] != "2" {
		t.Fatalf("csv row %v", r)
	}
	d, err := e.svc.RunDetail(ctx, automation.AllBusinessUnits(), subGuid, last.RunKeyHash)
	if err != nil || d.Ownership == nil || d.Ownership.Status != store.OwnershipDeliveryCreated || d.Coordinates == nil ||
		len(d.Coordinates.DeliveryKeys) != 2 || d.Status != automation.StatusCompleted || d.Rollout.Mode != report.ModeCutover || len(d.Trace) != 1 {
		t.Fatalf("detail = %+v %v", d, err)
	}
	runs, _, err := e.svc.Runs(ctx, automation.AllBusinessUnits(), subGuid, 0, 10)
	if err != nil || len(runs) != 4 || runs[0].Status != automation.StatusPending || runs[1].RunKeyHash != last.RunKeyHash {
		t.Fatalf("recent runs = %+v %v", runs, err)
	}
}

// In shadow mode (the default) rows are created and never executed: no ownership is
// acquired, nothing is delivered, the chain continues, and the keys are compared with the
// runs the old scheduler reports.
func TestShadowRowsNeverAcquireAndAreCompared(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	e.create(t, subGuid, weekly())
	first := "report-subscription:" + subGuid + ":scheduled:2027-03-21T21:00:00Z"
	stray := "report-subscription:" + subGuid + ":scheduled:2027-03-23T21:00:00Z"
	for _, k := range []string{first, stray} {
		if a, err := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), k, "ops"); err != nil || !a.Acquired {
			t.Fatalf("old scheduler acquire %s: %+v %v", k, a, err)
		}
	}
	e.runUntil(t, utc("2027-03-30T00:00:00Z"))
	if n := len(e.sentMessages()); n != 0 || e.render.n.Load() != 0 {
		t.Fatalf("shadow mode sent %d and rendered %d", n, e.render.n.Load())
	}
	row, _ := e.st.SchedulerGetByKey(ctx, first)
	if row.Status != automation.StatusDeactivated || row.ReasonCode != report.ReasonShadowOnly {
		t.Fatalf("shadow row %+v", row)
	}
	if own, _ := e.st.ReportOwnershipGet(ctx, first); own.OwnerType != store.OwnerOldScheduler {
		t.Fatalf("a shadow row acquired ownership: %+v", own)
	}
	cmp, err := e.svc.Shadow(ctx, automation.AllBusinessUnits(), subGuid, 10)
	if !cmp.FreshTo.Equal(e.clock.Now()) || cmp.FreshTo.Location() != time.UTC {
		t.Fatalf("comparison freshTo = %v, want the read instant %v in UTC", cmp.FreshTo, e.clock.Now())
	}
	if err != nil || cmp.Matched != 1 || cmp.Missing != 1 || len(cmp.Expected) != 3 || len(cmp.Unexpected) != 1 || cmp.Unexpected[0] != stray {
		t.Fatalf("comparison = %+v %v", cmp, err)
	}
	if _, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "11111111-2222-4333-8444-555555555555", report.RunNowInput{}, "ops"); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("run-now in shadow mode: %v", err)
	}
}

func TestRunNowIsIdempotentAndRejectsBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-24T03:00:00Z"))
	e.create(t, subGuid, weekly())
	e.setMode(t, subGuid, report.ModeRunNowAllowlist)
	const mg = "8b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c2d"
	a, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, mg, report.RunNowInput{Reason: "board meeting"}, "ops@example.test")
	if err != nil || a.ManualRunGuid != mg || a.Status != automation.StatusPending || a.PeriodStartUTC != utc("2027-03-21T21:00:00Z") ||
		a.PeriodEndUTC != utc("2027-03-24T03:00:00Z") || a.RequestedBy != "ops@example.test" {
		t.Fatalf("run-now = %+v %v", a, err)
	}
	e.clock.Advance(time.Second)
	b, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, mg, report.RunNowInput{Reason: "board meeting"}, "ops@example.test")
	if err != nil || b.SchedulerKey != a.SchedulerKey || b.PeriodEndUTC != a.PeriodEndUTC {
		t.Fatalf("retry = %+v %v", b, err)
	}
	e.tick(t)
	if n := len(e.sentMessages()); n != 2 {
		t.Fatalf("manual run sent %d, want 2", n)
	}
	e.clock.Advance(time.Minute)
	if c, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, mg, report.RunNowInput{Reason: "board meeting"}, "ops"); err != nil || c.Status != automation.StatusCompleted {
		t.Fatalf("retry after completion = %+v %v", c, err)
	}
	e.tick(t)
	if n := len(e.sentMessages()); n != 2 {
		t.Fatalf("a retried run-now sent again: %d", n)
	}
	before := countRows(t, e.st)
	runsBefore, _, _ := e.svc.Runs(ctx, automation.AllBusinessUnits(), subGuid, 0, 100)
	bad := map[string]struct {
		in   report.RunNowInput
		code automation.ErrorCode
	}{
		"future end":     {report.RunNowInput{PeriodEndUTC: ptr(utc("2027-03-25T00:00:00Z"))}, automation.CodeInvalidInput},
		"start after":    {report.RunNowInput{PeriodStartUTC: ptr(utc("2027-03-24T00:00:00Z")), PeriodEndUTC: ptr(utc("2027-03-23T00:00:00Z"))}, automation.CodeInvalidInput},
		"too long":       {report.RunNowInput{PeriodStartUTC: ptr(utc("2025-01-01T00:00:00Z"))}, automation.CodeInvalidInput},
		"reason too big": {report.RunNowInput{Reason: strings.Repeat("x", 501)}, automation.CodeInvalidInput},
	}
	for name, tc := range bad {
		if _, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "9b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c2d", tc.in, "ops"); automation.CodeOf(err) != tc.code {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "not-a-guid", report.RunNowInput{}, "ops"); !automation.IsInvalid(err) {
		t.Errorf("bad manual run guid: %v", err)
	}
	if _, err := e.svc.RunNow(ctx, automation.BusinessUnits("bu-nyc"), subGuid, "9b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c2d", report.RunNowInput{}, "ops"); automation.CodeOf(err) != automation.CodeNotFound {
		t.Errorf("out of scope: %v", err)
	}
	// Paused: 409.
	v, _ := e.svc.Get(ctx, automation.AllBusinessUnits(), subGuid)
	in := v.Input
	in.Status = store.ReportSubscriptionPaused
	if _, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, &v.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "9b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c2d", report.RunNowInput{}, "ops"); automation.CodeOf(err) != automation.CodeConflict {
		t.Errorf("paused: %v", err)
	}
	// An unknown report type (removed from this deployment): 422.
	other, _ := report.New(report.Config{Store: e.st, Blobs: e.tr, Renderers: report.NewRegistry(), Clock: e.clock})
	if _, err := other.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "9b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c2d", report.RunNowInput{}, "ops"); automation.CodeOf(err) != automation.CodeConflict && !automation.IsInvalid(err) {
		t.Errorf("unknown type: %v", err)
	}
	after := countRows(t, e.st)
	runsAfter, _, _ := e.svc.Runs(ctx, automation.AllBusinessUnits(), subGuid, 0, 100)
	if total(after) != total(before) || len(runsAfter) != len(runsBefore) {
		t.Fatalf("rejected run-now requests stored something: rows %v → %v, runs %d → %d", before, after, len(runsBefore), len(runsAfter))
	}
}

func TestRunNowUnknownReportTypeIs422(t *testing.T) {
	t.Parallel()
	e := cutoverEnv(t, utc("2027-03-24T03:00:00Z"))
	other, _ := report.New(report.Config{Store: e.st, Blobs: e.tr, Renderers: report.NewRegistry(), Clock: e.clock})
	_, err := other.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "9b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c2d", report.RunNowInput{}, "ops")
	var ae *automation.Error
	if !asErr(err, &ae) || ae.Code != automation.CodeInvalidInput || ae.Field != "reportType" {
		t.Fatalf("err = %v", err)
	}
	if runs, _, _ := e.svc.Runs(ctx, automation.AllBusinessUnits(), subGuid, 0, 10); len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
}

func total(m map[automation.Status]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func ptr[T any](v T) *T { return &v }

func TestCreateRejectsBadSubscriptionsAndStoresNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	cases := map[string]struct {
		mut   func(*report.Input)
		field string
	}{
		"never occurs":        {func(in *report.Input) { in.Recurrence.RRule = "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30" }, "recurrence"},
		"ended":               {func(in *report.Input) { in.Recurrence.RRule = "FREQ=WEEKLY;COUNT=1" }, "recurrence"},
		"too frequent":        {func(in *report.Input) { in.Recurrence.RRule = "FREQ=MINUTELY;INTERVAL=10" }, "recurrence.rrule"},
		"unknown type":        {func(in *report.Input) { in.ReportType = "attendance" }, "reportType"},
		"wrong format":        {func(in *report.Input) { in.Format = "pdf" }, "format"},
		"unknown BU":          {func(in *report.Input) { in.BusinessUnitID = "bu-mel" }, "businessUnitId"},
		"no recipients":       {func(in *report.Input) { in.Recipients = nil }, "recipients"},
		"duplicate":           {func(in *report.Input) { in.Recipients = []string{"a@x.test", "A@x.test"} }, "recipients[1]"},
		"control chars":       {func(in *report.Input) { in.Recipients = []string{"a@x.test\r\nBcc: b"} }, "recipients[0]"},
		"unknown channel":     {func(in *report.Input) { in.Channels = []string{"fax"} }, "channels[0]"},
		"bad delivery":        {func(in *report.Input) { in.Delivery = "pigeon" }, "delivery"},
		"bad status":          {func(in *report.Input) { in.Status = store.ReportSubscriptionDeleted }, "status"},
		"parameters array":    {func(in *report.Input) { in.Parameters = []byte(`[1]`) }, "parameters"},
		"no template":         {func(in *report.Input) { in.Template = "" }, "template"},
		"dtStart with offset": {func(in *report.Input) { in.Recurrence.DTStart = "2027-03-01T08:00Z" }, "recurrence.dtStart"},
	}
	for name, tc := range cases {
		in := weekly()
		tc.mut(&in)
		_, err := e.svc.Create(ctx, automation.AllBusinessUnits(), subGuid, in)
		var ae *automation.Error
		if !asErr(err, &ae) || ae.Code != automation.CodeInvalidInput || !automationtest.NamesField(ae, tc.field) {
			t.Errorf("%s: err = %v, want invalid %s", name, err, tc.field)
		}
	}
	if _, err := e.svc.Create(ctx, automation.BusinessUnits("bu-nyc"), subGuid, weekly()); !automation.IsInvalid(err) {
		t.Errorf("a business unit outside the caller's scope must look unknown: %v", err)
	}
	subs, _, _ := e.svc.List(ctx, automation.AllBusinessUnits(), "", "", 10)
	if len(subs) != 0 || countRows(t, e.st)[automation.StatusPending] != 0 {
		t.Fatalf("bad input stored something: %d subscriptions, rows %v", len(subs), countRows(t, e.st))
	}
}

// Pause deactivates pending runs (completed runs stay), resume ensures the next run, an
// update of the schedule supersedes the pending run, and delete tombstones the subscription.
func TestLifecyclePauseResumeUpdateDelete(t *testing.T) {
	t.Parallel()
	e := cutoverEnv(t, utc("2027-03-20T00:00:00Z"))
	e.runUntil(t, utc("2027-03-23T00:00:00Z")) // first run completed, next pending
	v, _ := e.svc.Get(ctx, automation.AllBusinessUnits(), subGuid)
	next := v.NextRun.SchedulerKey
	in := v.Input
	in.Status = store.ReportSubscriptionPaused
	if _, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, nil); automation.CodeOf(err) != automation.CodePreconditionRequired {
		t.Fatalf("update without If-Match: %v", err)
	}
	stale := v.Version - 1
	if _, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, &stale); automation.CodeOf(err) != automation.CodePreconditionFailed {
		t.Fatalf("stale If-Match: %v", err)
	}
	p, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, &v.Version)
	if err != nil || p.Status != store.ReportSubscriptionPaused || p.NextRun != nil || p.Version != v.Version+1 {
		t.Fatalf("pause = %+v %v", p, err)
	}
	row, _ := e.st.SchedulerGetByKey(ctx, next)
	if row.Status != automation.StatusDeactivated || row.ReasonCode != report.ReasonSubscriptionPaused {
		t.Fatalf("pending run after pause: %+v", row)
	}
	if first, _ := e.st.SchedulerGetByKey(ctx, "report-subscription:"+subGuid+":scheduled:2027-03-21T21:00:00Z"); first.Status != automation.StatusCompleted {
		t.Fatalf("completed run changed by pause: %s", first.Status)
	}
	e.runUntil(t, utc("2027-04-06T00:00:00Z")) // two Mondays pass paused
	if n := len(e.sentMessages()); n != 2 {
		t.Fatalf("sent while paused: %d", n)
	}
	in.Status = store.ReportSubscriptionActive
	in.Template = "report-ready-v2"
	r, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, &p.Version)
	if err != nil || r.NextRun == nil || r.NextRun.ScheduledOn != utc("2027-04-11T22:00:00Z") {
		t.Fatalf("resume = %+v %v", r, err)
	}
	// Change the schedule: Tuesday instead of Monday supersedes the pending Monday run.
	in.Recurrence.RRule = "FREQ=WEEKLY;BYDAY=TU"
	u, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, &r.Version)
	if err != nil || u.NextRun.ScheduledOn != utc("2027-04-12T22:00:00Z") {
		t.Fatalf("update = %+v %v", u, err)
	}
	if old, _ := e.st.SchedulerGetByKey(ctx, r.NextRun.SchedulerKey); old.Status != automation.StatusDeactivated || old.ReasonCode != automation.ReasonSuperseded {
		t.Fatalf("superseded run: %+v", old)
	}
	if open := e.open(t, subGuid); len(open) != 1 || open[0].SchedulerKey != u.NextRun.SchedulerKey {
		t.Fatalf("open after update: %v", open)
	}
	e.runUntil(t, utc("2027-04-13T00:00:00Z"))
	sent := e.sentMessages()
	if len(sent) != 4 || sent[3].Template != "report-ready-v2" || payloadOf(t, sent[3]).LocalTime != "2027-04-13T08:00:00+10:00" {
		t.Fatalf("after resume: %d sent, last %+v", len(sent), sent[len(sent)-1])
	}
	in.BusinessUnitID = "bu-nyc"
	if _, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, &u.Version); !automation.IsInvalid(err) {
		t.Fatalf("moving business unit: %v", err)
	}
	if err := e.svc.Delete(ctx, automation.AllBusinessUnits(), subGuid, &u.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Get(ctx, automation.AllBusinessUnits(), subGuid); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("get after delete: %v", err)
	}
	if open := e.open(t, subGuid); len(open) != 0 {
		t.Fatalf("pending runs after delete: %v", open)
	}
	if runs, _, err := e.svc.Runs(ctx, automation.AllBusinessUnits(), subGuid, 0, 10); err != nil || len(runs) == 0 {
		t.Fatalf("history after delete: %v %v", runs, err)
	}
	if _, _, err := e.svc.Put(ctx, automation.AllBusinessUnits(), subGuid, in, nil); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("put on a deleted subscription: %v", err)
	}
}

// In the scheduled allowlist the old scheduler may still win a key: our row goes on support
// hold without any delivery, the next run is still ensured, and a support retry is refused
// until the old scheduler releases the key; then it delivers once.
func TestOwnershipConflictHoldsAndSupportRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	v := e.create(t, subGuid, weekly())
	e.setMode(t, subGuid, report.ModeScheduledAllowlist)
	a, err := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), v.NextRun.SchedulerKey, "ops")
	if err != nil || !a.Acquired || a.Ownership.OwnerVersion != 1 {
		t.Fatalf("old acquire: %+v %v", a, err)
	}
	e.runUntil(t, utc("2027-03-22T00:00:00Z"))
	row, _ := e.st.SchedulerGetByKey(ctx, v.NextRun.SchedulerKey)
	if row.Status != automation.StatusFailed || !row.IsOnSupportHold || row.FailureReasonCode != report.ReasonOwnershipConflict ||
		len(e.sentMessages()) != 0 || e.render.n.Load() != 0 {
		t.Fatalf("conflict: row %s hold=%v reason %s, sent %d, rendered %d", row.Status, row.IsOnSupportHold, row.FailureReasonCode, len(e.sentMessages()), e.render.n.Load())
	}
	if got := e.runs.DrainCounts(e.clock.Now()); len(got) != 1 || got[0].Outcome != metricscount.OutcomeFailed || got[0].N != 1 {
		t.Fatalf("the held run counted for the overview: %+v, want one failed", got)
	}
	if open := e.open(t, subGuid); len(open) != 2 { // the held run and the next one
		t.Fatalf("open = %v", open)
	}
	failed, _, err := e.svc.FailedRuns(ctx, automation.AllBusinessUnits(), "", 0, 10)
	if err != nil || len(failed) != 1 || failed[0].RunKeyHash != v.NextRun.RunKeyHash || failed[0].Kind != store.ReportRunScheduled {
		t.Fatalf("failed queue = %+v %v", failed, err)
	}
	if f, _, _ := e.svc.FailedRuns(ctx, automation.BusinessUnits("bu-nyc"), "", 0, 10); len(f) != 0 {
		t.Fatalf("failed queue out of scope = %+v", f)
	}
	const rg = "0c1d2e3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5"
	if _, err := e.svc.SupportRetry(ctx, automation.AllBusinessUnits(), subGuid, v.NextRun.RunKeyHash, rg, "customer asked", "ops"); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("retry while the old scheduler owns the run: %v", err)
	}
	if _, err := e.svc.OldSchedulerRelease(ctx, automation.AllBusinessUnits(), report.OldSchedulerFence{SchedulerKey: v.NextRun.SchedulerKey, OwnerVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SupportRetry(ctx, automation.AllBusinessUnits(), subGuid, v.NextRun.RunKeyHash, rg, "", "ops"); !automation.IsInvalid(err) {
		t.Fatalf("retry without a reason: %v", err)
	}
	r, err := e.svc.SupportRetry(ctx, automation.AllBusinessUnits(), subGuid, v.NextRun.RunKeyHash, rg, "old scheduler released it", "ops@example.test")
	if err != nil || r.Kind != store.ReportRunSupportRetry || r.OwnershipKey != v.NextRun.SchedulerKey || r.RequestedBy != "ops@example.test" {
		t.Fatalf("retry = %+v %v", r, err)
	}
	if again, err := e.svc.SupportRetry(ctx, automation.AllBusinessUnits(), subGuid, v.NextRun.RunKeyHash, rg, "old scheduler released it", "ops@example.test"); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("the retried row is no longer failed: %+v %v", again, err)
	}
	e.tick(t)
	if n := len(e.sentMessages()); n != 2 {
		t.Fatalf("support retry sent %d", n)
	}
	own, _ := e.st.ReportOwnershipGet(ctx, v.NextRun.SchedulerKey)
	if own.OwnerType != store.OwnerAutomationScheduler || own.OwnerVersion != 2 || own.Status != store.OwnershipDeliveryCreated {
		t.Fatalf("ownership after the retry: %+v", own)
	}
	if f, _, _ := e.svc.FailedRuns(ctx, automation.AllBusinessUnits(), "", 0, 10); len(f) != 0 {
		t.Fatalf("failed queue after the retry = %+v", f)
	}
	orig, _ := e.st.SchedulerGetByKey(ctx, v.NextRun.SchedulerKey)
	if orig.ReasonCode != report.ReasonSupportRetried {
		t.Fatalf("original row = %+v", orig)
	}
	// Completed runs cannot be support-retried: that would be a resend.
	if _, err := e.svc.SupportRetry(ctx, automation.AllBusinessUnits(), subGuid, r.RunKeyHash, "1c1d2e3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5", "again", "ops"); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("retry of a completed run: %v", err)
	}
}

// Cutover guards the old scheduler out; the allowlists keep manual keys ours; a key the old
// scheduler already owns stays its own whatever the mode.
func TestOldSchedulerGuardByMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	v := e.create(t, subGuid, weekly())
	sched := v.NextRun.SchedulerKey
	manual := "report-subscription:" + subGuid + ":manual:3c9a7e52-1f0b-4d8e-a4c6-7b2e9f1d0a35"
	later := "report-subscription:" + subGuid + ":scheduled:2027-03-28T21:00:00Z"
	if a, _ := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), sched, "ops"); !a.Acquired {
		t.Fatalf("shadow: %+v", a)
	}
	e.setMode(t, subGuid, report.ModeRunNowAllowlist)
	if a, _ := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), manual, "ops"); a.Acquired || a.Reason != report.RefusedGuardedByRollout {
		t.Fatalf("manual key in the run-now allowlist: %+v", a)
	}
	e.setMode(t, subGuid, report.ModeCutover)
	if a, _ := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), later, "ops"); a.Acquired || a.Reason != report.RefusedGuardedByRollout || a.Ownership != nil {
		t.Fatalf("cutover: %+v", a)
	}
	if _, err := e.st.ReportOwnershipGet(ctx, later); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused acquire stored something: %v", err)
	}
	if a, _ := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), sched, "ops"); !a.Acquired || a.Outcome != store.OwnershipReacquired {
		t.Fatalf("a key the old scheduler owns stays its own: %+v", a)
	}
	if a, err := e.svc.OldSchedulerDeliveryCreated(ctx, automation.AllBusinessUnits(), report.OldSchedulerFence{SchedulerKey: sched, OwnerVersion: 1, Coordinates: []byte(`{"jobId":"old-17"}`)}); err != nil || a.Status != store.OwnershipDeliveryCreated {
		t.Fatalf("delivery created: %+v %v", a, err)
	}
	if _, err := e.svc.OldSchedulerRelease(ctx, automation.AllBusinessUnits(), report.OldSchedulerFence{SchedulerKey: sched, OwnerVersion: 1}); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("release after delivery: %v", err)
	}
	for name, k := range map[string]string{"garbage": "nope", "upper-case guid": strings.ToUpper(sched),
		"support retry": "report-subscription:" + subGuid + ":support-retry:3c9a7e52-1f0b-4d8e-a4c6-7b2e9f1d0a35"} {
		if _, err := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), k, "ops"); !automation.IsInvalid(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := e.svc.OldSchedulerAcquire(ctx, automation.BusinessUnits("bu-nyc"), later, "ops"); automation.CodeOf(err) != automation.CodeNotFound {
		t.Errorf("out of scope: %v", err)
	}
	if _, err := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), "report-subscription:"+subGuid2+":scheduled:2027-03-28T21:00:00Z", "ops"); automation.CodeOf(err) != automation.CodeNotFound {
		t.Errorf("unknown subscription: %v", err)
	}
	// Our own run of that key: the old scheduler delivered it, so ours is held, never sent.
	e.runUntil(t, utc("2027-03-22T00:00:00Z"))
	if row, _ := e.st.SchedulerGetByKey(ctx, sched); !row.IsOnSupportHold || len(e.sentMessages()) != 0 {
		t.Fatalf("row %+v sent %d", row, len(e.sentMessages()))
	}
}

// Rollback: removing a subscription from the allowlist returns ownership we hold but have
// not delivered to the old scheduler.
func TestRollbackReturnsOwnershipToTheOldScheduler(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	v := e.create(t, subGuid, weekly())
	e.setMode(t, subGuid, report.ModeScheduledAllowlist)
	// Our executor acquired the key, then crashed before recording a delivery.
	if _, err := e.st.ReportOwnershipAcquire(ctx, store.ReportOwnershipAcquireParams{SchedulerKey: v.NextRun.SchedulerKey, SubscriptionGuid: subGuid,
		RunKind: store.ReportRunScheduled, Owner: store.OwnerAutomationScheduler, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if a, _ := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), v.NextRun.SchedulerKey, "ops"); a.Acquired || a.Reason != report.RefusedOwnedByAutomation {
		t.Fatalf("before rollback: %+v", a)
	}
	released, removed, err := e.svc.RemoveRollout(ctx, automation.AllBusinessUnits(), store.RolloutSubscription, subGuid, "ops")
	if err != nil || !removed || released != 1 {
		t.Fatalf("rollback released %d removed %v: %v", released, removed, err)
	}
	a, err := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), v.NextRun.SchedulerKey, "ops")
	if err != nil || !a.Acquired || a.Outcome != store.OwnershipTakenOver || a.Ownership.OwnerVersion != 2 {
		t.Fatalf("after rollback: %+v %v", a, err)
	}
	e.runUntil(t, utc("2027-03-22T00:00:00Z"))
	if row, _ := e.st.SchedulerGetByKey(ctx, v.NextRun.SchedulerKey); row.ReasonCode != report.ReasonShadowOnly || len(e.sentMessages()) != 0 {
		t.Fatalf("after rollback our row %+v, sent %d", row, len(e.sentMessages()))
	}
	if _, err := e.svc.SetRollout(ctx, automation.AllBusinessUnits(), store.RolloutBusinessUnit, "bu-syd", "Everything", "ops"); !automation.IsInvalid(err) {
		t.Fatalf("unknown mode: %v", err)
	}
	if _, err := e.svc.SetRollout(ctx, automation.BusinessUnits("bu-nyc"), store.RolloutBusinessUnit, "bu-syd", report.ModeCutover, "ops"); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("out of scope: %v", err)
	}
	r, err := e.svc.SetRollout(ctx, automation.AllBusinessUnits(), store.RolloutBusinessUnit, "bu-syd", report.ModeCutover, "ops")
	if err != nil || r.Mode != report.ModeCutover {
		t.Fatal(err)
	}
	if got, _ := e.svc.Get(ctx, automation.AllBusinessUnits(), subGuid); got.Rollout.Mode != report.ModeCutover || got.Rollout.Source != report.SourceBusinessUnit {
		t.Fatalf("business-unit mode: %+v", got.Rollout)
	}
	if l, _ := e.svc.ListRollouts(ctx, automation.BusinessUnits("bu-nyc"), 10); len(l) != 0 {
		t.Fatalf("rollouts out of scope: %+v", l)
	}
}

// A crash after the delivery was recorded and before the completion committed: the retry
// reuses ownership and coordinates (nothing is rendered again) and one delivery goes out.
func TestRetryAfterCrashReusesCoordinates(t *testing.T) {
	t.Parallel()
	e := cutoverEnv(t, utc("2027-03-21T20:00:00Z"))
	e.clock.Set(utc("2027-03-21T21:00:00Z"))
	rows, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: e.clock.Now(), Lease: time.Minute, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim %v %v", rows, err)
	}
	h := &report.Handler{Service: e.svc}
	out, err := h.Execute(ctx, rows[0], e.clock.Now())
	if err != nil || len(out.Deliveries) != 2 {
		t.Fatalf("first attempt %+v %v", out, err)
	}
	// "Crash": the outcome is never written. The lease expires; the poller rescues the row
	// and retries after the backoff.
	e.clock.Advance(2 * time.Minute)
	e.tick(t)
	e.clock.Advance(6 * time.Minute)
	e.tick(t)
	sent := e.sentMessages()
	if len(sent) != 2 || e.render.n.Load() != 1 {
		t.Fatalf("sent %d, rendered %d; want 2 and 1", len(sent), e.render.n.Load())
	}
	if sent[0].DeliveryKey != out.Deliveries[0].DeliveryKey && sent[1].DeliveryKey != out.Deliveries[0].DeliveryKey {
		t.Fatalf("the retry used other delivery keys: %v vs %v", sent, out.Deliveries)
	}
	row, _ := e.st.SchedulerGetByKey(ctx, rows[0].SchedulerKey)
	if row.Status != automation.StatusCompleted || row.RetryCount != 1 {
		t.Fatalf("row %+v", row)
	}
	// The overview counts the run delivered once: the first attempt (its own handler, not
	// counted here) recorded DeliveryCreated; the retry reused the coordinates.
	if got := e.runs.DrainCounts(e.clock.Now()); len(got) != 0 {
		t.Fatalf("the retry that reused the coordinates counted again: %+v", got)
	}
	counted := metricscount.New(metricscount.FlowReport)
	h = &report.Handler{Service: e.svc, Runs: counted}
	if _, err := h.Execute(ctx, rows[0], e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := counted.DrainCounts(e.clock.Now()); len(got) != 0 {
		t.Fatalf("a third execution of a delivered run counted: %+v", got)
	}
}

// The overview's report counts (report.Handler.Runs): a run delivered counts once, by unit
// and report type (a conflict's failure: TestOwnershipConflictHoldsAndSupportRetry).
func TestHandlerCountsRunsForTheOverview(t *testing.T) {
	t.Parallel()
	e := cutoverEnv(t, utc("2027-03-21T20:00:00Z"))
	e.runUntil(t, utc("2027-03-21T21:30:00Z"))
	got := e.runs.DrainCounts(e.clock.Now())
	if len(got) != 1 || got[0].Outcome != metricscount.OutcomeDelivered || got[0].N != 1 || got[0].BusinessUnitID != "bu-syd" || got[0].Label == "" {
		t.Fatalf("a delivered run: %+v", got)
	}
}

// A renderer that keeps failing: retried with backoff, then support hold; a permanent error
// holds at once. Neither delivers, and the chain goes on.
func TestRenderFailuresRetryThenHold(t *testing.T) {
	t.Parallel()
	e := cutoverEnv(t, utc("2027-03-21T20:00:00Z"))
	e.clock.Set(utc("2027-03-21T21:00:00Z"))
	boom := errors.New("source down")
	e.render.fail.Store(&boom)
	for i := 0; i < 4; i++ {
		e.tick(t)
		e.clock.Advance(2 * time.Hour)
	}
	row, _ := e.st.SchedulerGetByKey(ctx, "report-subscription:"+subGuid+":scheduled:2027-03-21T21:00:00Z")
	if row.Status != automation.StatusFailed || !row.IsOnSupportHold || row.RetryCount != 4 || len(e.sentMessages()) != 0 {
		t.Fatalf("row %+v, sent %d", row, len(e.sentMessages()))
	}
	perm := automation.Permanent(errors.New("bad parameters"))
	e.render.fail.Store(&perm)
	e.runUntil(t, utc("2027-03-29T00:00:00Z"))
	second, _ := e.st.SchedulerGetByKey(ctx, "report-subscription:"+subGuid+":scheduled:2027-03-28T21:00:00Z")
	if second.Status != automation.StatusFailed || second.RetryCount != 1 || second.FailureReasonCode != automation.ReasonPermanentError {
		t.Fatalf("permanent failure: %+v", second)
	}
	if open := e.open(t, subGuid); len(open) != 3 {
		t.Fatalf("the chain stalled: %v", open)
	}
}
