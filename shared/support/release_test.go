package support_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/shared/support"
	"github.com/automation-platform/automation/shared/trace/localtrace"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 11, 2, 3, 0, 0, 0, time.UTC)

type env struct {
	st    store.Store
	tr    *localtrace.Store
	clock *automation.ManualClock
	svc   *support.Service
}

func newEnv(t *testing.T, cfg support.Config) *env {
	t.Helper()
	dir := t.TempDir()
	st := sqlitetest.OpenAt(t, filepath.Join(dir, "a.db"), nil)
	tr := sqlitetest.OpenTrace(t, dir)
	e := &env{st: st, tr: tr, clock: automation.NewManualClock(t0)}
	var err error
	e.svc, err = support.New(st, tr, e.clock, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// held creates n rows of business unit bu on support hold (Failed, HandlerError), keys
// numbered from first.
// unit stores business unit u.
func (e *env) unit(t *testing.T, u store.BusinessUnit) {
	t.Helper()
	if err := e.st.BusinessUnitUpsert(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

func (e *env) held(t *testing.T, first, n int, bu string) {
	t.Helper()
	ctx := context.Background()
	var cs []automation.Candidate
	for i := first; i < first+n; i++ {
		c := storetest.Candidate(i, t0.Add(-time.Hour))
		c.BusinessUnitID = bu
		cs = append(cs, c)
	}
	if _, err := e.st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: t0.Add(-2 * time.Hour), Candidates: cs}); err != nil {
		t.Fatal(err)
	}
	rows, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: t0.Add(-time.Hour), Lease: time.Minute, Limit: store.MaxBatch})
	if err != nil || len(rows) != n {
		t.Fatalf("claimed %d of %d: %v", len(rows), n, err)
	}
	for _, r := range rows {
		if err := e.st.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: t0.Add(-time.Hour),
			FailureReasonCode: automation.ReasonHandlerError, Hold: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPacedReleaseRespectsItsRate releases 95 held rows at 30 rows a minute in batches of 5
// and drives the due-work claim second by second on a simulated clock: no 60-second window
// ever sees more than 30 rows become due (claimed), every row is claimed, and a second
// release made meanwhile starts where the first one's pace ends instead of adding to it.
func TestPacedReleaseRespectsItsRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	e.held(t, 0, 95, "bu-a")
	e.held(t, 1000, 20, "bu-b")
	res, err := e.svc.ReleaseMany(ctx, automation.AllBusinessUnits(), support.ReleaseRequest{Filter: support.ReleaseFilter{BusinessUnitID: "bu-a"},
		RatePerMinute: 30, BatchSize: 5, Operator: "ops.jane", Reason: "provider outage over"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Released != 95 || res.Batches != 19 || res.IntervalSeconds != 10 || !res.FirstDueOn.Equal(t0) || !res.LastDueOn.Equal(t0.Add(180*time.Second)) || res.More {
		t.Fatalf("release %+v", res)
	}
	claimedAt := map[string]time.Time{}
	claim := func() {
		rows, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: e.clock.Now(), Lease: time.Hour, Limit: store.MaxBatch})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			claimedAt[r.SchedulerKey] = e.clock.Now()
		}
	}
	var second support.ReleaseResult
	for s := 0; s <= 400; s++ {
		if s == 30 { // another operator releases bu-b, as fast as allowed, half a minute in
			second, err = e.svc.ReleaseMany(ctx, automation.AllBusinessUnits(), support.ReleaseRequest{Filter: support.ReleaseFilter{BusinessUnitID: "bu-b"},
				RatePerMinute: 60, BatchSize: 10, Operator: "ops.sam", Reason: "same outage"})
			if err != nil {
				t.Fatal(err)
			}
		}
		claim()
		e.clock.Advance(time.Second)
	}
	if len(claimedAt) != 115 {
		t.Fatalf("claimed %d of 115 released rows", len(claimedAt))
	}
	// The second release starts after the first one's last slot (t0+190s), 10 s apart.
	if second.Released != 20 || !second.FirstDueOn.Equal(t0.Add(190*time.Second)) || !second.LastDueOn.Equal(t0.Add(200*time.Second)) {
		t.Fatalf("second release %+v", second)
	}
	perSecond := map[int]int{}
	for _, at := range claimedAt {
		perSecond[int(at.Sub(t0)/time.Second)]++
	}
	for start := 0; start <= 400; start++ {
		inWindow := 0
		for s := start; s < start+60; s++ {
			inWindow += perSecond[s]
		}
		// 30/min for the first release; the second (60/min) runs only after it ends.
		limit := 30
		if start+60 > 190 {
			limit = 60
		}
		if inWindow > limit {
			t.Fatalf("%d rows became due in the minute from t0+%ds (limit %d): %v", inWindow, start, limit, perSecond)
		}
	}
	if perSecond[0] != 5 || perSecond[10] != 5 || perSecond[5] != 0 || perSecond[180] != 5 || perSecond[190] != 10 || perSecond[200] != 10 {
		t.Fatalf("batches not on their slots: %v", perSecond)
	}
	// Each released row has its audit and a trace row.
	rows, err := e.st.SupportSchedulerFind(ctx, store.SupportFindParams{Scope: automation.AllBusinessUnits(), BusinessUnitID: "bu-a", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	audit, _ := e.st.SupportAuditList(ctx, []int64{rows[0].ID}, 10)
	recs, _ := e.tr.JobsByKey(ctx, rows[0].SchedulerKey)
	if len(audit) != 1 || audit[0].BatchID != res.ID || audit[0].Operator != "ops.jane" || len(recs) != 1 || recs[0].Outcome != support.OutcomeSupportReleased {
		t.Fatalf("audit %+v trace %+v", audit, recs)
	}
}

// TestReleaseRejectsBadRequests: no filter, a rate above the configured maximum and bad
// sizes are refused with field errors, and nothing is released.
func TestReleaseRejectsBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{MaxReleasePerMinute: 120})
	ctx := context.Background()
	e.held(t, 0, 3, "bu-a")
	ok := support.ReleaseRequest{Filter: support.ReleaseFilter{BusinessUnitID: "bu-a"}, Operator: "o", Reason: "r"}
	cases := []struct {
		name  string
		edit  func(*support.ReleaseRequest)
		field string
	}{
		{"no filter", func(r *support.ReleaseRequest) { r.Filter = support.ReleaseFilter{} }, "filter"},
		{"rate above the maximum", func(r *support.ReleaseRequest) { r.RatePerMinute = 121 }, "ratePerMinute"},
		{"negative rate", func(r *support.ReleaseRequest) { r.RatePerMinute = -1 }, "ratePerMinute"},
		{"batch too large", func(r *support.ReleaseRequest) { r.BatchSize = 101 }, "batchSize"},
		{"too many rows", func(r *support.ReleaseRequest) { r.MaxRows = 10_001 }, "maxRows"},
		{"source guid alone", func(r *support.ReleaseRequest) { r.Filter.SourceGuid = "g" }, "filter.sourceGuid"},
		{"a status that is never held", func(r *support.ReleaseRequest) { r.Filter.Status = automation.StatusCompleted }, "filter.status"},
		{"no reason", func(r *support.ReleaseRequest) { r.Reason = " " }, "reason"},
		{"no operator", func(r *support.ReleaseRequest) { r.Operator = "" }, "operator"},
	}
	for _, c := range cases {
		req := ok
		c.edit(&req)
		_, err := e.svc.ReleaseMany(ctx, automation.AllBusinessUnits(), req)
		if automation.CodeOf(err) != automation.CodeInvalidInput || !automationtest.NamesField(err, c.field) {
			t.Errorf("%s: err = %v, want InvalidInput on %s", c.name, err, c.field)
		}
	}
	m, _ := e.st.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: t0, Since: t0, Cap: 100})
	if m.HeldByReason["HandlerError"] != 3 {
		t.Fatalf("bad requests released rows: %+v", m.HeldByReason)
	}
	if _, err := e.svc.ReleaseMany(ctx, automation.BusinessUnits("bu-b"), ok); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("a business unit outside the scope: %v", err)
	}
	res, err := e.svc.ReleaseMany(ctx, automation.BusinessUnits("bu-b"), support.ReleaseRequest{Filter: support.ReleaseFilter{FailureReasonCode: automation.ReasonHandlerError}, Operator: "o", Reason: "r"})
	if err != nil || res.Released != 0 {
		t.Fatalf("a scoped release must not touch other business units: %+v %v", res, err)
	}
	res, err = e.svc.ReleaseMany(ctx, automation.AllBusinessUnits(), support.ReleaseRequest{Filter: support.ReleaseFilter{FailureReasonCode: automation.ReasonHandlerError}, MaxRows: 2, Operator: "o", Reason: "r"})
	if err != nil || res.Released != 2 || !res.More || res.RatePerMinute != 60 || res.BatchSize != 10 {
		t.Fatalf("MaxRows stops the release and says so: %+v %v", res, err)
	}
}

func asError(err error, target **automation.Error) bool { return errors.As(err, target) }
