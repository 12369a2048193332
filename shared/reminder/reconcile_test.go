package reminder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// domainApp is a real HTTP server standing in for the domain application's list endpoint
// (the HTTPSourceLister protocol): entities ordered by (changedOn, guid), changed-since,
// cursor, activeOnly and limit; it can be told to fail.
type domainApp struct {
	mu       sync.Mutex
	entities map[string]domainEntity
	fail     bool
	requests []string // query strings seen
}

type domainEntity struct {
	Guid      string
	Revision  int64
	ChangedOn time.Time
	Deleted   bool
	Data      map[string]any
}

func (d *domainApp) put(e domainEntity) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.entities[e.Guid] = e
}

func (d *domainApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.requests = append(d.requests, r.URL.RawQuery)
	if d.fail {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	var since time.Time
	if s := q.Get("changedSince"); s != "" {
		since, _ = time.Parse(time.RFC3339Nano, s)
	}
	var list []domainEntity
	for _, e := range d.entities {
		if e.ChangedOn.Before(since) || (q.Get("activeOnly") == "true" && (e.Deleted || e.Data["isActive"] == false)) {
			continue
		}
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool {
		if !list[i].ChangedOn.Equal(list[j].ChangedOn) {
			return list[i].ChangedOn.Before(list[j].ChangedOn)
		}
		return list[i].Guid < list[j].Guid
	})
	if c := q.Get("cursor"); c != "" {
		on, guid, _ := strings.Cut(c, "|")
		n, _ := strconv.ParseInt(on, 10, 64)
		for len(list) > 0 && (list[0].ChangedOn.UnixNano() < n || (list[0].ChangedOn.UnixNano() == n && list[0].Guid <= guid)) {
			list = list[1:]
		}
	}
	if len(list) > limit {
		list = list[:limit]
	}
	type item struct {
		EntityGuid string         `json:"entityGuid"`
		Revision   int64          `json:"revision"`
		ChangedOn  time.Time      `json:"changedOn"`
		Deleted    bool           `json:"deleted"`
		Data       map[string]any `json:"data"`
	}
	out := struct {
		Items      []item `json:"items"`
		NextCursor string `json:"nextCursor"`
	}{Items: []item{}}
	for _, e := range list {
		out.Items = append(out.Items, item{e.Guid, e.Revision, e.ChangedOn, e.Deleted, e.Data})
		out.NextCursor = fmt.Sprintf("%d|%s", e.ChangedOn.UnixNano(), e.Guid)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func police(expires, email string) map[string]any {
	return map[string]any{"expiresOn": expires, "staffEmail": email, "isActive": true}
}

// sourceRows returns "localDate/status/reason" for every row of the PoliceVetting source
// guid, sorted.
func sourceRows(t *testing.T, f *fixture, guid string) []string {
	t.Helper()
	rows, err := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: guid, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s/%s/%s", r.ScheduledLocalDate, r.Status, r.ReasonCode))
	}
	sort.Strings(out)
	return out
}

// Events were dropped on the way (never delivered): the source sweep reads the domain app,
// repairs the rows with the same keys as the event path, in bounded batches, and its
// watermark moves only after a batch succeeded.
func TestReconciliationRepairsDroppedEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	app := &domainApp{entities: map[string]domainEntity{}}
	srv := httptest.NewServer(app)
	defer srv.Close()

	t0 := utc("2026-09-01T00:00:00Z")
	// p-1 reached us (revision 1); its revision 2 (date moved) was dropped.
	f.mustProcess(t, []byte(strings.Replace(string(event("evt-p1", 1, police("2026-10-31", "p1@example.test"))), `"e-1"`, `"p-1"`, 1)))
	app.put(domainEntity{"p-1", 2, t0.Add(1 * time.Minute), false, police("2026-11-30", "p1@example.test")})
	// p-2 .. p-4 were created and every event about them was dropped.
	app.put(domainEntity{"p-2", 1, t0.Add(2 * time.Minute), false, police("2026-10-20", "p2@example.test")})
	app.put(domainEntity{"p-3", 1, t0.Add(3 * time.Minute), false, police("2026-12-01", "p3@example.test")})
	app.put(domainEntity{"p-4", 1, t0.Add(4 * time.Minute), false, police("2026-10-10", "p4@example.test")})
	// p-5 was already deleted: a first pass asks for active sources only.
	app.put(domainEntity{"p-5", 3, t0.Add(5 * time.Minute), true, nil})

	f.clock.Set(utc("2026-09-05T00:00:00Z"))
	rec := &reminder.Reconciler{Service: f.svc, Config: reminder.ReconcileConfig{BatchSize: 2, MaxBatches: 1,
		Listers: map[string]reminder.SourceLister{"PoliceVetting": reminder.HTTPSourceLister{URL: srv.URL}}}}
	run := func() reminder.ReconcileResult {
		t.Helper()
		r, err := rec.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The tzdata resync is tested on its own; here it is already done.
	if _, err := f.st.ReconcileStateSave(ctx, store.ReconcileState{SweepKey: "tzdata", Marker: localtime.TZDataVersion, UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	// Run 1: one batch (the budget): p-1 and p-2.
	r := run()
	if r.SourceSweeps != 1 || r.SourcesProcessed != 2 || r.Complete {
		t.Fatalf("batch 1: %+v", r)
	}
	eq(t, sourceRows(t, f, "p-1"), "2026-10-01/Deactivated/Superseded", "2026-10-24/Deactivated/Superseded", "2026-10-31/Deactivated/Superseded",
		"2026-10-31/Pending/", "2026-11-23/Pending/", "2026-11-30/Pending/")
	eq(t, sourceRows(t, f, "p-2"), "2026-09-20/Pending/", "2026-10-13/Pending/", "2026-10-20/Pending/")
	if len(sourceRows(t, f, "p-3")) != 0 {
		t.Fatal("batch 1 went past its bound")
	}
	st1, _ := f.st.ReconcileStateGet(ctx, "source:bu-syd:PoliceVetting")
	if st1.Cursor == "" || st1.WatermarkOn != nil {
		t.Fatalf("after batch 1: %+v", st1)
	}
	// The domain app fails: nothing moves.
	app.mu.Lock()
	app.fail = true
	app.mu.Unlock()
	rf, err := rec.RunOnce(ctx)
	if err == nil {
		t.Fatal("a failing lister must fail the run")
	}
	// The run reports each service: only the source sweeps failed.
	var names []string
	for _, sr := range rf.Services {
		names = append(names, sr.Service)
		if failed := sr.Error != ""; failed != (sr.Service == reminder.ServiceSourceSweeps) {
			t.Fatalf("service report %+v", sr)
		}
	}
	if strings.Join(names, ",") != "settings-propagation,tzdata-resync,source-sweeps,idempotency-purge" {
		t.Fatalf("services reported: %v", names)
	}
	if st, _ := f.st.ReconcileStateGet(ctx, "source:bu-syd:PoliceVetting"); st.Cursor != st1.Cursor || st.Version != st1.Version {
		t.Fatalf("state moved on a failed batch: %+v → %+v", st1, st)
	}
	app.mu.Lock()
	app.fail = false
	app.mu.Unlock()
	// Runs 3, 4: the rest of the pass; then the watermark is the latest change seen.
	rec.Config.MaxBatches = 10
	r = run()
	if r.SourcesProcessed != 2 || !r.Complete {
		t.Fatalf("rest of the pass: %+v", r)
	}
	eq(t, sourceRows(t, f, "p-3"), "2026-11-01/Pending/", "2026-11-24/Pending/", "2026-12-01/Pending/")
	// p-4's 30-day reminder (2026-09-10) is still ahead; none was missed by the repair.
	eq(t, sourceRows(t, f, "p-4"), "2026-09-10/Pending/", "2026-10-03/Pending/", "2026-10-10/Pending/")
	if len(sourceRows(t, f, "p-5")) != 0 {
		t.Fatal("a deleted source got rows")
	}
	st2, _ := f.st.ReconcileStateGet(ctx, "source:bu-syd:PoliceVetting")
	if st2.WatermarkOn == nil || !st2.WatermarkOn.Equal(t0.Add(4*time.Minute)) || st2.Cursor != "" {
		t.Fatalf("after the pass: %+v", st2)
	}
	// A later change whose event is dropped: the next (incremental) pass asks for changes
	// since the watermark only, includes deletions, and deactivates.
	app.put(domainEntity{"p-2", 2, t0.Add(10 * time.Minute), true, nil})
	app.mu.Lock()
	app.requests = nil
	app.mu.Unlock()
	r = run()
	// p-4 again (at the watermark, inclusive), the deleted p-5 (incremental passes include
	// inactive sources) and p-2.
	if r.SourcesProcessed != 3 {
		t.Fatalf("incremental pass: %+v", r)
	}
	eq(t, sourceRows(t, f, "p-2"), "2026-09-20/Deactivated/SourceNoLongerValid", "2026-10-13/Deactivated/SourceNoLongerValid", "2026-10-20/Deactivated/SourceNoLongerValid")
	app.mu.Lock()
	q := app.requests[0]
	app.mu.Unlock()
	if !strings.Contains(q, "changedSince=2026-09-01T00%3A04%3A00Z") || strings.Contains(q, "activeOnly") {
		t.Fatalf("incremental request %q", q)
	}
	// Running it again repairs nothing more and sends nothing twice (idempotent).
	before := sourceRows(t, f, "p-3")
	run()
	eq(t, sourceRows(t, f, "p-3"), before...)
}

// An event whose processing died after the snapshot was stored, and was never redelivered,
// is repaired from the pipeline's own snapshots.
func TestReconciliationFromSnapshots(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.snapshot(t, "2026-10-31")
	rec := &reminder.Reconciler{Service: f.svc}
	if _, err := rec.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, f.rows(t), "2026-10-01/Pending/", "2026-10-24/Pending/", "2026-10-31/Pending/")
}

// When the tzdata version changes, pending rows get ScheduledOn recomputed from their stored
// local intent; rows already right, and rows already due, are left alone.
func TestReconciliationTZDataResync(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	// A row computed under "older tzdata": its instant is an hour off its local intent.
	rows := f.rowMap(t)
	var stale automation.SchedulerRow
	for _, r := range rows {
		if r.ScheduledLocalDate == "2026-10-24" {
			stale = r
		}
	}
	// Mark the resync done for an older version, then move the row.
	if _, err := f.st.ReconcileStateSave(ctx, store.ReconcileState{SweepKey: "tzdata", Marker: "2024a", UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	c := automation.Candidate{AutomationType: stale.AutomationType, TriggerType: stale.TriggerType, SchedulerKey: stale.SchedulerKey, InputHash: stale.InputHash,
		SettingGuid: stale.SettingGuid, SourceEntityType: stale.SourceEntityType, SourceEntityGuid: stale.SourceEntityGuid, BusinessUnitID: stale.BusinessUnitID,
		ScheduledOn: stale.ScheduledOn.Add(time.Hour), ScheduledLocalDate: stale.ScheduledLocalDate, ScheduledLocalTime: stale.ScheduledLocalTime, TimeZoneID: stale.TimeZoneID}
	if res, err := f.st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: f.clock.Now(), Candidates: []automation.Candidate{c}}); err != nil || res[0].Action != automation.EnsureUpdated {
		t.Fatalf("%+v %v", res, err)
	}
	// A report run whose key holds its UTC period start is never re-timed by the resync,
	// even when its instant disagrees with its local intent.
	rep := c
	rep.AutomationType, rep.TriggerType = automation.TypeReportSubscription, automation.TriggerScheduledRun
	rep.SchedulerKey = "report-subscription:7d1c2b3a-0000-4000-8000-000000000001:scheduled:" + rep.ScheduledOn.UTC().Format(time.RFC3339)
	rep.SettingGuid = ""
	if _, err := f.st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: f.clock.Now(), Candidates: []automation.Candidate{rep}}); err != nil {
		t.Fatal(err)
	}
	rec := &reminder.Reconciler{Service: f.svc, Config: reminder.ReconcileConfig{BatchSize: 2}}
	r, err := rec.RunOnce(ctx)
	if got, _ := f.st.SchedulerGetByKey(ctx, rep.SchedulerKey); !got.ScheduledOn.Equal(rep.ScheduledOn) {
		t.Fatalf("report row re-timed to %v", got.ScheduledOn)
	}
	if err != nil || r.Rescheduled != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	got, _ := f.st.SchedulerGetByKey(ctx, stale.SchedulerKey)
	if !got.ScheduledOn.Equal(stale.ScheduledOn) || got.Status != automation.StatusPending {
		t.Fatalf("row %v, want %v", got.ScheduledOn, stale.ScheduledOn)
	}
	st, _ := f.st.ReconcileStateGet(ctx, "tzdata")
	if st.Marker != localtime.TZDataVersion {
		t.Fatalf("marker %q", st.Marker)
	}
	if r, _ := rec.RunOnce(ctx); r.Rescheduled != 0 {
		t.Fatalf("second run %+v", r)
	}
}

func TestReconciliationPurgesOldIdempotencyKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for i, at := range []time.Time{f.clock.Now().Add(-30 * 24 * time.Hour), f.clock.Now().Add(-time.Hour)} {
		if _, err := f.st.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "s", Key: fmt.Sprint(i), RequestHash: "h", Now: at, Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := (&reminder.Reconciler{Service: f.svc}).RunOnce(ctx)
	if err != nil || r.Purged != 1 {
		t.Fatalf("%+v %v", r, err)
	}
}

// The business-unit allowlist bounds which source sweeps run.
func TestReconciliationAllowlist(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.snapshot(t, "2026-10-31")
	nyc := automation.BusinessUnits("bu-nyc")
	rec := &reminder.Reconciler{Service: f.svc, Config: reminder.ReconcileConfig{BusinessUnits: &nyc}}
	if r, err := rec.RunOnce(ctx); err != nil || r.SourceSweeps != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	if len(f.rows(t)) != 0 {
		t.Fatal("a unit outside the allowlist was swept")
	}
}

// The immediate-notification provider (docs/architecture.md#event-flow): a source first seen after its target date
// gets one notification now; one known before its date does not.
func TestImmediateNotificationForOverdueSource(t *testing.T) {
	t.Parallel()
	overdue := strings.Replace(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), `"template"`, `"immediateIfOverdue":true,"template"`, 1)
	t.Run("created already past its date", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, overdue)
		f.clock.Set(utc("2026-11-02T03:17:42Z")) // 14:17 AEDT, two days after the expiry
		f.mustProcess(t, event("evt-1", 1, alice))
		eq(t, f.rows(t), "2026-10-01/Deactivated/MissedWindow", "2026-10-24/Deactivated/MissedWindow",
			"2026-10-31/Deactivated/MissedWindow", "2026-11-02/Pending/")
		row := f.rowMap(t)["reminder:"+settingGuid+":PoliceVetting:e-1:expiresOn:2026-10-31:overdue"]
		if !row.ScheduledOn.Equal(utc("2026-11-02T03:17:00Z")) || row.ScheduledLocalTime != "14:17" {
			t.Fatalf("overdue row %+v", row)
		}
		if n := completeDue(t, f); n != 1 {
			t.Fatalf("completed %d", n)
		}
		// Another event later: never a second one.
		f.clock.Set(utc("2026-11-05T00:00:00Z"))
		r := f.mustProcess(t, event("evt-2", 2, alice))
		if r.Ensured[automation.EnsureAlreadyCompleted] != 1 || r.Ensured[automation.EnsureInserted] != 0 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("known before its date", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, overdue)
		f.mustProcess(t, event("evt-1", 1, alice))
		f.clock.Set(utc("2026-11-05T00:00:00Z"))
		f.mustProcess(t, event("evt-2", 2, with(alice, "staffEmail", "alice2@example.test")))
		for _, r := range f.rows(t) {
			if strings.HasPrefix(r, "2026-11-05") {
				t.Fatalf("an overdue notification for a source known before its date: %v", f.rows(t))
			}
		}
	})
}

func TestResolveRecipients(t *testing.T) {
	t.Parallel()
	roles := map[string][]string{"managers": {"m@example.test", "a@example.test"}}
	data := map[string]any{"one": "a@example.test", "many": []any{"b@example.test", " ", "c@example.test"}, "bad": []any{1}, "evil": "x@example.test\r\nBcc: y"}
	cases := []struct {
		name string
		p    reminder.RecipientPolicy
		want string
		err  string
	}{
		{"field", reminder.RecipientPolicy{Field: "one"}, "a@example.test", ""},
		{"array, blanks dropped", reminder.RecipientPolicy{Field: "many"}, "b@example.test,c@example.test", ""},
		{"union without duplicates", reminder.RecipientPolicy{Field: "one", Role: "managers", Fixed: []string{"ops@example.test", "m@example.test"}},
			"a@example.test,m@example.test,ops@example.test", ""},
		{"unknown role is empty", reminder.RecipientPolicy{Role: "nobody"}, "", ""},
		{"missing field is empty", reminder.RecipientPolicy{Field: "absent"}, "", ""},
		{"not a string", reminder.RecipientPolicy{Field: "bad"}, "", "data.bad[0]"},
		{"header injection", reminder.RecipientPolicy{Field: "evil"}, "", "control characters"},
	}
	for _, c := range cases {
		got, err := reminder.ResolveRecipients(c.p, data, roles)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v", c.name, err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("%s: %v %v", c.name, got, err)
		}
	}
	many := make([]string, reminder.MaxRecipients)
	for i := range many {
		many[i] = fmt.Sprintf("r%d@example.test", i)
	}
	if _, err := reminder.ResolveRecipients(reminder.RecipientPolicy{Role: "big", Fixed: []string{"extra@example.test"}}, nil, map[string][]string{"big": many}); err == nil {
		t.Error("more than MaxRecipients must fail")
	}
}

// A role list is read from the business unit when the reminder is due, not when it was
// scheduled.
func TestRoleRecipientsResolvedAtExecution(t *testing.T) {
	t.Parallel()
	js := strings.Replace(settingJSON("bu-syd", "[30]", "09:00", false), `{"field":"staffEmail"}`, `{"role":"managers"}`, 1)
	f := newFixture(t, js)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	bu, _ := f.st.BusinessUnitGetRecord(ctx, "bu-syd")
	bu.Roles = map[string][]string{"managers": {"lee@example.test"}}
	if _, err := f.st.BusinessUnitUpdate(ctx, bu, bu.Version); err != nil {
		t.Fatal(err)
	}
	f.clock.Set(utc("2026-09-30T23:00:00Z"))
	rows := f.claimDue(t, 1)
	out, err := f.h.Execute(ctx, rows[0], f.clock.Now())
	if err != nil || len(out.Deliveries) != 1 || out.Deliveries[0].Recipient != "lee@example.test" {
		t.Fatalf("%+v %v", out, err)
	}
}

// With a budget of one batch per run, the source sweeps of several (business unit, source
// type) pairs all progress and finish: a run resumes where the previous one stopped.
func TestReconciliationRotatesPairsWithinTheBudget(t *testing.T) {
	t.Parallel()
	aid := strings.NewReplacer(settingGuid, "3c3c3c3c-5d7a-4c41-9d0e-6b1c2a3d4e5f", `"PoliceVetting"`, `"FirstAid"`).Replace(settingJSON("bu-syd", "[0]", "09:00", false))
	f := newFixture(t, settingJSON("bu-syd", "[0]", "09:00", false), aid)
	ctx := context.Background()
	for _, typ := range []string{"PoliceVetting", "FirstAid"} {
		for i := 0; i < 2; i++ {
			if _, err := f.st.SourceSnapshotApply(ctx, store.SourceSnapshot{EntityType: typ, EntityGuid: fmt.Sprintf("%s-%d", typ, i), BusinessUnitID: "bu-syd",
				Revision: 1, DataJSON: `{"expiresOn":"2026-10-31","staffEmail":"x@example.test"}`, LastEventID: "x", UpdatedOn: f.clock.Now()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := f.st.ReconcileStateSave(ctx, store.ReconcileState{SweepKey: "tzdata", Marker: localtime.TZDataVersion, UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	rec := &reminder.Reconciler{Service: f.svc, Config: reminder.ReconcileConfig{BatchSize: 1, MaxBatches: 1}}
	for i := 0; i < 12; i++ {
		r, err := rec.RunOnce(ctx)
		if err != nil || r.Batches > 1 {
			t.Fatalf("run %d: %+v %v", i, r, err)
		}
	}
	for _, typ := range []string{"PoliceVetting", "FirstAid"} {
		st, _ := f.st.ReconcileStateGet(ctx, "source:bu-syd:"+typ)
		if st.WatermarkOn == nil {
			t.Errorf("%s: first pass not finished: %+v", typ, st)
		}
		for i := 0; i < 2; i++ {
			rows, _ := f.st.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: typ, SourceEntityGuid: fmt.Sprintf("%s-%d", typ, i), Limit: 10})
			if len(rows) != 1 {
				t.Errorf("%s-%d: %d rows", typ, i, len(rows))
			}
		}
	}
}
