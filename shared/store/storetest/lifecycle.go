package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// RunLifecycle runs the reminder-lifecycle part of the suite (also run by Run).
func RunLifecycle(t *testing.T, open Opener) {
	runCases(t, open, lifecycleCases)
}

func testBusinessUnitLifecycle(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	bu := store.BusinessUnitRecord{BusinessUnit: store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"},
		TimeZoneIDGiven: "AUS Eastern Standard Time", Roles: map[string][]string{"managers": {"m1@example.test", "m2@example.test"}}, UpdatedOn: T0}
	if err := s.BusinessUnitInsert(ctx, bu); err != nil {
		t.Fatal(err)
	}
	if err := s.BusinessUnitInsert(ctx, bu); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second insert: %v, want ErrConflict", err)
	}
	got, err := s.BusinessUnitGetRecord(ctx, "bu-syd")
	if err != nil || got.Version != 1 || got.TimeZoneIDGiven != "AUS Eastern Standard Time" || len(got.Roles["managers"]) != 2 || !got.UpdatedOn.Equal(T0) {
		t.Fatalf("get: %+v %v", got, err)
	}
	// The plain read used by the pipeline sees the same unit.
	if plain, err := s.BusinessUnitGet(ctx, "bu-syd"); err != nil || plain.TimeZoneID != "Australia/Sydney" {
		t.Fatalf("BusinessUnitGet: %+v %v", plain, err)
	}
	upd := got
	upd.Name, upd.Roles, upd.UpdatedOn = "Sydney CBD", nil, T0.Add(time.Hour)
	after, err := s.BusinessUnitUpdate(ctx, upd, 1)
	if err != nil || after.Version != 2 || after.Name != "Sydney CBD" || after.Roles != nil {
		t.Fatalf("update: %+v %v", after, err)
	}
	if _, err := s.BusinessUnitUpdate(ctx, upd, 1); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale update: %v, want ErrLeaseLost", err)
	}
	upd.ID = "bu-none"
	if _, err := s.BusinessUnitUpdate(ctx, upd, 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown update: %v, want ErrNotFound", err)
	}
	if _, err := s.BusinessUnitGetRecord(ctx, "bu-none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown get: %v", err)
	}
	for _, id := range []string{"bu-a", "bu-b", "bu-c"} {
		if err := s.BusinessUnitInsert(ctx, store.BusinessUnitRecord{BusinessUnit: store.BusinessUnit{ID: id, Name: id, TimeZoneID: "UTC"}, UpdatedOn: T0}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(p store.BusinessUnitListParams) string {
		t.Helper()
		return listed(t, " ", func(b store.BusinessUnitRecord) string { return b.ID })(s.BusinessUnitList(ctx, p))
	}
	if got := ids(store.BusinessUnitListParams{Scope: automation.AllBusinessUnits(), Limit: 2}); got != "bu-a bu-b " {
		t.Fatalf("page 1: %q", got)
	}
	if got := ids(store.BusinessUnitListParams{Scope: automation.AllBusinessUnits(), AfterID: "bu-b", Limit: 10}); got != "bu-c bu-syd " {
		t.Fatalf("page 2: %q", got)
	}
	if got := ids(store.BusinessUnitListParams{Scope: automation.BusinessUnits("bu-c", "bu-a", "bu-zzz"), Limit: 10}); got != "bu-a bu-c " {
		t.Fatalf("scoped: %q", got)
	}
	if got := ids(store.BusinessUnitListParams{Scope: automation.Scope{}, Limit: 10}); got != "" {
		t.Fatalf("empty scope sees %q", got)
	}
	if _, err := s.BusinessUnitList(ctx, store.BusinessUnitListParams{Scope: automation.AllBusinessUnits(), Limit: store.MaxBatch + 1}); err == nil {
		t.Fatal("unbounded list must fail")
	}
}

func settingRec(guid, bu, src string, active bool) store.ReminderSettingRecord {
	return store.ReminderSettingRecord{Guid: guid, BusinessUnitID: bu, SourceType: src, TriggerType: "DateBased",
		IsActive: active, Body: `{"guid":"` + guid + `"}`, Version: 1, UpdatedOn: T0}
}

func testSettingLifecycle(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	g := func(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
	recs := []store.ReminderSettingRecord{
		settingRec(g(1), "bu-a", "Cert", true), settingRec(g(2), "bu-a", "Cert", false),
		settingRec(g(3), "bu-a", "Invoice", true), settingRec(g(4), "bu-b", "Cert", true),
		settingRec(g(5), "bu-b", "Cert", true),
	}
	for _, r := range recs {
		if err := s.ReminderSettingInsert(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ReminderSettingInsert(ctx, recs[0]); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate insert: %v", err)
	}
	upd := recs[0]
	upd.Body, upd.Version, upd.IsActive, upd.UpdatedOn = `{"changed":true}`, 2, false, T0.Add(time.Minute)
	if err := s.ReminderSettingUpdate(ctx, upd, 1); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ReminderSettingGet(ctx, g(1)); got.Version != 2 || got.Body != `{"changed":true}` || got.IsActive {
		t.Fatalf("after update: %+v", got)
	}
	if err := s.ReminderSettingUpdate(ctx, upd, 1); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale update: %v", err)
	}
	ghost := settingRec(g(9), "bu-a", "Cert", true)
	if err := s.ReminderSettingUpdate(ctx, ghost, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown update: %v", err)
	}
	yes, no := true, false
	list := func(p store.ReminderSettingListParams) string {
		t.Helper()
		if p.Limit == 0 {
			p.Limit = 10
		}
		return listed(t, "", func(r store.ReminderSettingRecord) string { return r.Guid[len(r.Guid)-1:] })(s.ReminderSettingList(ctx, p))
	}
	all := automation.AllBusinessUnits()
	cases := []struct {
		name string
		p    store.ReminderSettingListParams
		want string
	}{
		{"all", store.ReminderSettingListParams{Scope: all}, "12345"},
		{"page", store.ReminderSettingListParams{Scope: all, AfterGuid: g(2), Limit: 2}, "34"},
		{"bu", store.ReminderSettingListParams{Scope: all, BusinessUnitID: "bu-b"}, "45"},
		{"type", store.ReminderSettingListParams{Scope: all, SourceType: "Cert"}, "1245"},
		{"active", store.ReminderSettingListParams{Scope: all, Active: &yes}, "345"},
		{"inactive", store.ReminderSettingListParams{Scope: all, Active: &no}, "12"},
		{"scoped", store.ReminderSettingListParams{Scope: automation.BusinessUnits("bu-b")}, "45"},
		{"scoped other bu", store.ReminderSettingListParams{Scope: automation.BusinessUnits("bu-b"), BusinessUnitID: "bu-a"}, ""},
		{"no scope", store.ReminderSettingListParams{}, ""},
	}
	for _, c := range cases {
		if got := list(c.p); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	pairs, err := s.ReminderSettingListPairs(ctx, store.SettingSourcePair{}, 10)
	if err != nil || fmt.Sprint(pairs) != "[{bu-a Invoice} {bu-b Cert}]" {
		t.Fatalf("pairs: %v %v", pairs, err)
	}
	pairs, err = s.ReminderSettingListPairs(ctx, store.SettingSourcePair{BusinessUnitID: "bu-a", SourceType: "Invoice"}, 10)
	if err != nil || fmt.Sprint(pairs) != "[{bu-b Cert}]" {
		t.Fatalf("pairs after: %v %v", pairs, err)
	}
}

func testSnapshotPaging(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	put := func(guid string, rev int64, at time.Time, deleted bool) {
		t.Helper()
		if _, err := s.SourceSnapshotApply(ctx, store.SourceSnapshot{EntityType: "Cert", EntityGuid: guid, BusinessUnitID: "bu-a",
			Revision: rev, IsDeleted: deleted, DataJSON: `{}`, LastEventID: fmt.Sprintf("e-%s-%d", guid, rev), UpdatedOn: at}); err != nil {
			t.Fatal(err)
		}
	}
	put("c", 1, T0, false)
	put("a", 1, T0, false)
	put("b", 1, T0.Add(time.Minute), false)
	put("d", 1, T0.Add(2*time.Minute), true)
	if _, err := s.SourceSnapshotApply(ctx, store.SourceSnapshot{EntityType: "Cert", EntityGuid: "x", BusinessUnitID: "bu-other",
		Revision: 1, DataJSON: `{}`, LastEventID: "x", UpdatedOn: T0}); err != nil {
		t.Fatal(err)
	}
	page := func(p store.SourceSnapshotListParams) string {
		t.Helper()
		p.BusinessUnitID, p.EntityType = "bu-a", "Cert"
		if p.Limit == 0 {
			p.Limit = 10
		}
		return listed(t, "", func(x store.SourceSnapshot) string { return x.EntityGuid })(s.SourceSnapshotList(ctx, p))
	}
	if got := page(store.SourceSnapshotListParams{}); got != "acb" {
		t.Fatalf("all live: %q", got)
	}
	if got := page(store.SourceSnapshotListParams{IncludeDeleted: true}); got != "acbd" {
		t.Fatalf("with deleted: %q", got)
	}
	if got := page(store.SourceSnapshotListParams{Limit: 1, AfterUpdatedOn: T0, AfterGuid: "a"}); got != "c" {
		t.Fatalf("keyset after (T0,a): %q", got)
	}
	if got := page(store.SourceSnapshotListParams{AfterUpdatedOn: T0, AfterGuid: "c", IncludeDeleted: true}); got != "bd" {
		t.Fatalf("keyset after (T0,c): %q", got)
	}
	if got := page(store.SourceSnapshotListParams{ChangedSince: T0.Add(time.Minute), IncludeDeleted: true}); got != "bd" {
		t.Fatalf("changed since: %q", got)
	}
	// A source changed during a pass moves forward, never back past the cursor.
	put("a", 2, T0.Add(3*time.Minute), false)
	if got := page(store.SourceSnapshotListParams{AfterUpdatedOn: T0, AfterGuid: "c"}); got != "ba" {
		t.Fatalf("after a change: %q", got)
	}
}

func testSchedulerLifecycleLists(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	var keys []string
	for n := 0; n < 5; n++ {
		c := Candidate(n, T0.Add(time.Duration(n)*time.Hour))
		if n == 4 {
			c.SettingGuid = "1f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f"
		}
		ensure1(t, s, T0, c)
		keys = append(keys, c.SchedulerKey)
	}
	// Row 0 completes; row 1 is deactivated; rows 2, 3 stay pending (setting A); row 4 has setting B.
	r0 := claim(t, s, T0.Add(time.Second), 1)[0]
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r0.ID, Token: r0.Version, Now: T0}); err != nil {
		t.Fatal(err)
	}
	r1 := get(t, s, keys[1])
	if err := s.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r1.ID, Token: r1.Version, Now: T0, Reason: automation.ReasonSuperseded}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.SchedulerListBySetting(ctx, store.SchedulerListBySettingParams{SettingGuid: "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", Limit: 10})
	if err != nil || len(rows) != 2 || rows[0].SchedulerKey != keys[2] || rows[1].SchedulerKey != keys[3] {
		t.Fatalf("by setting: %v %v", rows, err)
	}
	rows, _ = s.SchedulerListBySetting(ctx, store.SchedulerListBySettingParams{SettingGuid: "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", AfterID: rows[0].ID, Limit: 10})
	if len(rows) != 1 || rows[0].SchedulerKey != keys[3] {
		t.Fatalf("by setting, page 2: %v", rows)
	}
	fut, err := s.SchedulerListFuturePending(ctx, store.SchedulerListFuturePendingParams{Now: T0.Add(2 * time.Hour), Limit: 10})
	if err != nil || len(fut) != 2 || fut[0].SchedulerKey != keys[3] || fut[1].SchedulerKey != keys[4] {
		t.Fatalf("future pending: %v %v", fut, err)
	}
	if _, err := s.SchedulerListFuturePending(ctx, store.SchedulerListFuturePendingParams{Now: T0, Limit: 0}); err == nil {
		t.Fatal("limit 0 must fail")
	}
}

func testThresholdEdge(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	apply := func(met bool, rev int64) store.ThresholdEdge {
		t.Helper()
		e, err := s.ThresholdEdgeApply(ctx, store.ThresholdEdgeApplyParams{SettingGuid: "g", SourceEntityType: "Class",
			SourceEntityGuid: "c1", Level: "90", IsMet: met, Revision: rev, Now: T0.Add(time.Duration(rev) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	steps := []struct {
		met       bool
		rev       int64
		wantMet   bool
		wantEdges int64
		wantRev   int64
	}{
		{false, 1, false, 0, 1}, // first seen, not met
		{true, 2, true, 1, 2},   // rising edge 1
		{true, 2, true, 1, 2},   // redelivery of revision 2: no new edge
		{true, 3, true, 1, 3},   // still met
		{false, 1, true, 1, 3},  // an older revision: ignored
		{false, 4, false, 1, 4}, // falls
		{true, 5, true, 2, 5},   // rising edge 2
		{true, 5, true, 2, 5},   // redelivered again
	}
	for i, st := range steps {
		e := apply(st.met, st.rev)
		if e.IsMet != st.wantMet || e.EdgeCount != st.wantEdges || e.Revision != st.wantRev {
			t.Fatalf("step %d: %+v, want met=%v edges=%d rev=%d", i, e, st.wantMet, st.wantEdges, st.wantRev)
		}
	}
	if e, err := s.ThresholdEdgeGet(ctx, "g", "Class", "c1", "90"); err != nil || e.EdgeCount != 2 {
		t.Fatalf("get: %+v %v", e, err)
	}
	if _, err := s.ThresholdEdgeGet(ctx, "g", "Class", "c1", "80"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown level: %v", err)
	}
	// A level first seen already met counts as its first edge.
	e, _ := s.ThresholdEdgeApply(ctx, store.ThresholdEdgeApplyParams{SettingGuid: "g", SourceEntityType: "Class", SourceEntityGuid: "c1", Level: "80", IsMet: true, Revision: 5, Now: T0})
	if e.EdgeCount != 1 || !e.IsMet {
		t.Fatalf("new level: %+v", e)
	}
}

// Concurrent redeliveries of one rising edge count it once.
func testThresholdEdgeConcurrent(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if _, err := s.ThresholdEdgeApply(ctx, store.ThresholdEdgeApplyParams{SettingGuid: "g", SourceEntityType: "Class", SourceEntityGuid: "c1", Level: "90", Revision: 1, Now: T0}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.ThresholdEdgeApply(ctx, store.ThresholdEdgeApplyParams{SettingGuid: "g", SourceEntityType: "Class", SourceEntityGuid: "c1", Level: "90", IsMet: true, Revision: 2, Now: T0}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if e, _ := s.ThresholdEdgeGet(ctx, "g", "Class", "c1", "90"); e.EdgeCount != 1 {
		t.Fatalf("edges after concurrent redelivery: %+v", e)
	}
}

func testReconcileState(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if _, err := s.ReconcileStateGet(ctx, "source:bu-a:Cert"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	wm := T0.Add(-time.Hour)
	st, err := s.ReconcileStateSave(ctx, store.ReconcileState{SweepKey: "source:bu-a:Cert", WatermarkOn: &wm, Cursor: `{"p":1}`, UpdatedOn: T0})
	if err != nil || st.Version != 1 || st.Cursor != `{"p":1}` || st.WatermarkOn == nil || !st.WatermarkOn.Equal(wm) {
		t.Fatalf("insert: %+v %v", st, err)
	}
	if _, err := s.ReconcileStateSave(ctx, store.ReconcileState{SweepKey: "source:bu-a:Cert", UpdatedOn: T0}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("second insert: %v", err)
	}
	st.Cursor, st.Marker = "", "2025c"
	st2, err := s.ReconcileStateSave(ctx, st)
	if err != nil || st2.Version != 2 || st2.Cursor != "" || st2.Marker != "2025c" {
		t.Fatalf("update: %+v %v", st2, err)
	}
	if _, err := s.ReconcileStateSave(ctx, st); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale save: %v", err)
	}
	// Requests: a new key owes one pass; a request during a pass restarts it.
	for _, k := range []string{"setting:b", "setting:a", "other:x"} {
		if err := s.ReconcileStateRequest(ctx, k, T0); err != nil {
			t.Fatal(err)
		}
	}
	owed, err := s.ReconcileStateListRequested(ctx, "setting:", 10)
	if err != nil || len(owed) != 2 || owed[0].SweepKey != "setting:a" || owed[0].Generation != 1 || owed[0].DoneGeneration != 0 {
		t.Fatalf("owed: %+v %v", owed, err)
	}
	a := owed[0]
	a.Cursor = "half-way"
	a, _ = s.ReconcileStateSave(ctx, a)
	if err := s.ReconcileStateRequest(ctx, "setting:a", T0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	again, _ := s.ReconcileStateGet(ctx, "setting:a")
	if again.Generation != 2 || again.Cursor != "" || again.Version != a.Version+1 {
		t.Fatalf("request during a pass: %+v", again)
	}
	again.DoneGeneration = again.Generation
	if _, err := s.ReconcileStateSave(ctx, again); err != nil {
		t.Fatal(err)
	}
	owed, _ = s.ReconcileStateListRequested(ctx, "setting:", 10)
	if len(owed) != 1 || owed[0].SweepKey != "setting:b" {
		t.Fatalf("owed after completing a: %+v", owed)
	}
}
