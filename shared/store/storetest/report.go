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

// runReport runs the report-subscription area of the suite (docs/architecture.md#report-subscriptions).
func runReport(t *testing.T, open Opener) {
	runCases(t, open, reportCases)
}

const reportSub = "7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"

func reportRec(guid, bu string) store.ReportSubscriptionRecord {
	return store.ReportSubscriptionRecord{Guid: guid, BusinessUnitID: bu, ReportType: "automation-activity",
		Status: store.ReportSubscriptionActive, Body: `{"name":"weekly"}`, CreatedOn: T0, UpdatedOn: T0}
}

func testReportSubscriptions(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	got, err := s.ReportSubscriptionInsert(ctx, reportRec(reportSub, "bu-1"))
	if err != nil || got.Version != 1 || !got.CreatedOn.Equal(T0) || got.Status != store.ReportSubscriptionActive {
		t.Fatalf("insert = %+v, %v", got, err)
	}
	if _, err := s.ReportSubscriptionInsert(ctx, reportRec(reportSub, "bu-2")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate insert: err = %v, want ErrConflict", err)
	}
	upd := got
	upd.Status, upd.Body, upd.UpdatedOn = store.ReportSubscriptionPaused, `{"name":"paused"}`, T0.Add(time.Hour)
	after, err := s.ReportSubscriptionUpdate(ctx, store.ReportSubscriptionUpdateParams{Record: upd, ExpectedVersion: 1})
	if err != nil || after.Version != 2 || after.Status != store.ReportSubscriptionPaused || after.Body != upd.Body ||
		!after.UpdatedOn.Equal(T0.Add(time.Hour)) || !after.CreatedOn.Equal(T0) || after.BusinessUnitID != "bu-1" {
		t.Fatalf("update = %+v, %v", after, err)
	}
	if _, err := s.ReportSubscriptionUpdate(ctx, store.ReportSubscriptionUpdateParams{Record: upd, ExpectedVersion: 1}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale update: err = %v, want ErrLeaseLost", err)
	}
	if cur, _ := s.ReportSubscriptionGet(ctx, reportSub); cur.Version != 2 || cur.Body != upd.Body {
		t.Fatalf("a stale update changed the row: %+v", cur)
	}
	missing := reportRec("00000000-0000-4000-8000-000000000000", "bu-1")
	if _, err := s.ReportSubscriptionUpdate(ctx, store.ReportSubscriptionUpdateParams{Record: missing, ExpectedVersion: 1}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown update: err = %v, want ErrNotFound", err)
	}
	if _, err := s.ReportSubscriptionGet(ctx, missing.Guid); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown get: %v", err)
	}
	// Paging by Guid, business-unit filter, tombstones hidden.
	for i := 0; i < 5; i++ {
		bu := "bu-1"
		if i%2 == 1 {
			bu = "bu-2"
		}
		r := reportRec(fmt.Sprintf("10000000-0000-4000-8000-00000000000%d", i), bu)
		if i == 4 {
			r.Status = store.ReportSubscriptionDeleted
		}
		if _, err := s.ReportSubscriptionInsert(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.ReportSubscriptionList(ctx, store.ReportSubscriptionListParams{Limit: 2})
	if err != nil || len(page) != 2 || page[0].Guid != "10000000-0000-4000-8000-000000000000" {
		t.Fatalf("page 1 = %+v, %v", page, err)
	}
	rest, _ := s.ReportSubscriptionList(ctx, store.ReportSubscriptionListParams{AfterGuid: page[1].Guid, Limit: 10})
	if len(rest) != 3 || rest[len(rest)-1].Guid != reportSub {
		t.Fatalf("page 2 = %+v (tombstone must be hidden)", rest)
	}
	bu2, _ := s.ReportSubscriptionList(ctx, store.ReportSubscriptionListParams{BusinessUnitID: "bu-2", Limit: 10})
	if len(bu2) != 2 {
		t.Fatalf("bu-2 = %+v", bu2)
	}
	if _, err := s.ReportSubscriptionList(ctx, store.ReportSubscriptionListParams{Limit: store.MaxBatch + 1}); err == nil {
		t.Fatal("an unbounded list was accepted")
	}
}

func reportRun(n int, kind store.ReportRunKind) store.ReportRunRecord {
	key := fmt.Sprintf("report-subscription:%s:scheduled:2026-10-%02dT21:00:00Z", reportSub, n)
	return store.ReportRunRecord{RunKeyHash: fmt.Sprintf("hash-%02d", n), SchedulerKey: key, SubscriptionGuid: reportSub,
		BusinessUnitID: "bu-1", RunKind: kind, OwnershipKey: key, PeriodStart: T0, PeriodEnd: T0.Add(7 * 24 * time.Hour), CreatedOn: T0}
}

func testReportRunRegistry(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	r := reportRun(1, store.ReportRunManual)
	r.RequestedBy, r.Reason = "ops@example.test", "asked by the centre"
	got, inserted, err := s.ReportRunRegister(ctx, r)
	if err != nil || !inserted || got.ID == 0 || got.RequestedBy != r.RequestedBy || got.Reason != r.Reason ||
		!got.PeriodEnd.Equal(r.PeriodEnd) || got.RunKind != store.ReportRunManual {
		t.Fatalf("register = %+v %v %v", got, inserted, err)
	}
	again := r
	again.Reason, again.PeriodEnd = "changed", T0
	got2, inserted, err := s.ReportRunRegister(ctx, again)
	if err != nil || inserted || got2 != got {
		t.Fatalf("second register must return the stored run unchanged: %+v %v %v", got2, inserted, err)
	}
	clash := reportRun(2, store.ReportRunScheduled)
	clash.RunKeyHash = r.RunKeyHash
	if _, _, err := s.ReportRunRegister(ctx, clash); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("hash taken by another key: err = %v, want ErrConflict", err)
	}
	if byHash, err := s.ReportRunGetByHash(ctx, r.RunKeyHash); err != nil || byHash.SchedulerKey != r.SchedulerKey {
		t.Fatalf("by hash: %+v %v", byHash, err)
	}
	if _, err := s.ReportRunGetByKey(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	for n := 2; n <= 5; n++ {
		if _, _, err := s.ReportRunRegister(ctx, reportRun(n, store.ReportRunScheduled)); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.ReportRunList(ctx, store.ReportRunListParams{SubscriptionGuid: reportSub, Limit: 2})
	if err != nil || len(page) != 2 || page[0].RunKeyHash != "hash-05" || page[1].RunKeyHash != "hash-04" {
		t.Fatalf("newest first: %+v %v", page, err)
	}
	rest, _ := s.ReportRunList(ctx, store.ReportRunListParams{SubscriptionGuid: reportSub, BeforeID: page[1].ID, Limit: 10})
	if len(rest) != 3 || rest[2].RunKeyHash != "hash-01" {
		t.Fatalf("page 2: %+v", rest)
	}
	if other, _ := s.ReportRunList(ctx, store.ReportRunListParams{SubscriptionGuid: "other", Limit: 10}); len(other) != 0 {
		t.Fatalf("other subscription: %+v", other)
	}
}

// reportCandidate is a report row of reportSub (or another subscription) due at due.
func reportCandidate(sub string, n int, due time.Time) automation.Candidate {
	key := fmt.Sprintf("report-subscription:%s:scheduled:%s", sub, due.Add(time.Duration(n)*time.Minute).Format(time.RFC3339))
	return automation.Candidate{AutomationType: automation.TypeReportSubscription, TriggerType: automation.TriggerScheduledRun,
		SchedulerKey: key, InputHash: automation.InputHash(key), SettingGuid: sub, SourceEntityType: "ReportSubscription",
		SourceEntityGuid: sub, BusinessUnitID: "bu-1", ScheduledOn: due, ScheduledLocalDate: due.Format("2006-01-02"),
		ScheduledLocalTime: due.Format("15:04"), TimeZoneID: "UTC"}
}

func testReportSchedulerLists(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	const other = "99999999-0000-4000-8000-000000000000"
	// Row 0 Completed, 1 Failed on hold, 2 Pending, 3 conflict hold (Pending), 4 Deactivated;
	// one reminder row and one row of another subscription that must not show.
	var keys []string
	for n := 0; n < 5; n++ {
		c := reportCandidate(reportSub, n, T0)
		keys = append(keys, c.SchedulerKey)
		ensure1(t, s, T0, c)
	}
	ensure1(t, s, T0, Candidate(1, T0))
	ensure1(t, s, T0, reportCandidate(other, 0, T0))
	rows := claim(t, s, T0.Add(time.Hour), 10)
	byKey := map[string]automation.SchedulerRow{}
	for _, r := range rows {
		byKey[r.SchedulerKey] = r
	}
	now := T0.Add(time.Hour)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: byKey[keys[0]].ID, Token: byKey[keys[0]].Version, Now: now}))
	must(s.SchedulerFail(ctx, store.SchedulerFailParams{ID: byKey[keys[1]].ID, Token: byKey[keys[1]].Version, Now: now, FailureReasonCode: automation.ReasonPermanentError, Hold: true}))
	must(s.SchedulerFail(ctx, store.SchedulerFailParams{ID: byKey[keys[2]].ID, Token: byKey[keys[2]].Version, Now: now, FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: now.Add(time.Hour)}))
	must(s.SchedulerFail(ctx, store.SchedulerFailParams{ID: byKey[keys[3]].ID, Token: byKey[keys[3]].Version, Now: now, FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: now.Add(time.Hour)}))
	must(s.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: byKey[keys[4]].ID, Token: byKey[keys[4]].Version, Now: now, Reason: automation.ReasonSuperseded}))
	conflict := reportCandidate(reportSub, 3, T0)
	conflict.InputHash = automation.InputHash("other")
	if r := ensure1(t, s, now, conflict); r.Action != automation.EnsureConflict {
		t.Fatalf("conflict setup: %s", r.Action)
	}
	open1, err := s.ReportSchedulerListOpen(ctx, reportSub, 10)
	if err != nil || len(open1) != 3 || open1[0].SchedulerKey != keys[1] || open1[1].SchedulerKey != keys[2] || open1[2].SchedulerKey != keys[3] {
		t.Fatalf("open rows = %v, %v", rowKeys(open1), err)
	}
	failed, err := s.ReportSchedulerListFailed(ctx, store.ReportFailedListParams{Limit: 10})
	if err != nil || len(failed) != 2 || failed[0].SchedulerKey != keys[1] || failed[1].SchedulerKey != keys[3] {
		t.Fatalf("failed queue = %v, %v", rowKeys(failed), err)
	}
	next, _ := s.ReportSchedulerListFailed(ctx, store.ReportFailedListParams{AfterID: failed[0].ID, Limit: 10})
	if len(next) != 1 || next[0].SchedulerKey != keys[3] {
		t.Fatalf("failed queue page 2 = %v", rowKeys(next))
	}
	if none, _ := s.ReportSchedulerListFailed(ctx, store.ReportFailedListParams{BusinessUnitID: "bu-2", Limit: 10}); len(none) != 0 {
		t.Fatalf("bu-2 failed queue = %v", rowKeys(none))
	}
}

func rowKeys(rows []automation.SchedulerRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.SchedulerKey
	}
	return out
}

func acquire(t *testing.T, s store.Store, key string, owner store.ReportOwnerType, now time.Time) store.ReportOwnershipAcquireResult {
	t.Helper()
	r, err := s.ReportOwnershipAcquire(context.Background(), store.ReportOwnershipAcquireParams{SchedulerKey: key,
		SubscriptionGuid: reportSub, RunKind: store.ReportRunScheduled, Owner: owner, Now: now})
	if err != nil {
		t.Fatalf("acquire %s by %s: %v", key, owner, err)
	}
	return r
}

func testReportOwnership(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	const key = "report-subscription:" + reportSub + ":scheduled:2026-10-05T21:00:00Z"
	auto, old := store.OwnerAutomationScheduler, store.OwnerOldScheduler

	a := acquire(t, s, key, auto, T0)
	if a.Outcome != store.OwnershipAcquired || a.Ownership.OwnerType != auto || a.Ownership.OwnerVersion != 1 ||
		a.Ownership.Status != store.OwnershipOwned || a.Ownership.Version != 1 || a.Ownership.SubscriptionGuid != reportSub {
		t.Fatalf("first acquire = %+v", a)
	}
	if r := acquire(t, s, key, auto, T0.Add(time.Minute)); r.Outcome != store.OwnershipReacquired || r.Ownership != a.Ownership {
		t.Fatalf("retry by the owner must reuse ownership unchanged: %+v", r)
	}
	if c := acquire(t, s, key, old, T0.Add(time.Minute)); c.Outcome != store.OwnershipConflict || c.Ownership.OwnerType != auto || c.Ownership.Version != 1 {
		t.Fatalf("other owner: %+v", c)
	}
	fence := func(owner store.ReportOwnerType, v int64, coords string) store.ReportOwnershipFenceParams {
		return store.ReportOwnershipFenceParams{SchedulerKey: key, Owner: owner, OwnerVersion: v, CoordinatesJSON: coords, Now: T0.Add(2 * time.Minute)}
	}
	if _, err := s.ReportOwnershipMarkDeliveryCreated(ctx, fence(old, 1, `{"x":1}`)); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("non-owner marks delivery: err = %v, want ErrLeaseLost", err)
	}
	if _, err := s.ReportOwnershipMarkDeliveryCreated(ctx, fence(auto, 2, `{"x":1}`)); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("wrong owner version: err = %v, want ErrLeaseLost", err)
	}
	if _, err := s.ReportOwnershipMarkDeliveryCreated(ctx, fence(auto, 1, "")); err == nil {
		t.Fatal("marking without coordinates was accepted")
	}
	d, err := s.ReportOwnershipMarkDeliveryCreated(ctx, fence(auto, 1, `{"deliveryKeys":["dlv_1"]}`))
	if err != nil || d.Status != store.OwnershipDeliveryCreated || d.CoordinatesJSON != `{"deliveryKeys":["dlv_1"]}` || d.Version != 2 {
		t.Fatalf("mark = %+v, %v", d, err)
	}
	if again, err := s.ReportOwnershipMarkDeliveryCreated(ctx, fence(auto, 1, `{"deliveryKeys":["dlv_1"]}`)); err != nil || again.Version != 2 {
		t.Fatalf("marking again with the same coordinates must be a no-op: %+v %v", again, err)
	}
	if _, err := s.ReportOwnershipMarkDeliveryCreated(ctx, fence(auto, 1, `{"deliveryKeys":["dlv_2"]}`)); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("other coordinates: err = %v, want ErrLeaseLost", err)
	}
	if r := acquire(t, s, key, auto, T0.Add(3*time.Minute)); r.Outcome != store.OwnershipReacquired || r.Ownership.CoordinatesJSON != d.CoordinatesJSON {
		t.Fatalf("retry after the delivery must get the coordinates back: %+v", r)
	}
	if c := acquire(t, s, key, old, T0.Add(3*time.Minute)); c.Outcome != store.OwnershipConflict {
		t.Fatalf("old scheduler after delivery: %+v", c)
	}
	if _, err := s.ReportOwnershipRelease(ctx, fence(auto, 1, "")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("release after delivery: err = %v, want ErrConflict", err)
	}

	// Release and take-over: the new owner gets OwnerVersion 2 and fences the old one out.
	const key2 = "report-subscription:" + reportSub + ":scheduled:2026-10-12T21:00:00Z"
	acquire(t, s, key2, old, T0)
	f2 := store.ReportOwnershipFenceParams{SchedulerKey: key2, Owner: old, OwnerVersion: 1, Now: T0.Add(time.Minute)}
	if _, err := s.ReportOwnershipRelease(ctx, store.ReportOwnershipFenceParams{SchedulerKey: key2, Owner: auto, OwnerVersion: 1, Now: T0}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("release by non-owner: err = %v", err)
	}
	rel, err := s.ReportOwnershipRelease(ctx, f2)
	if err != nil || rel.Status != store.OwnershipCancelled {
		t.Fatalf("release = %+v %v", rel, err)
	}
	if again, err := s.ReportOwnershipRelease(ctx, f2); err != nil || again.Version != rel.Version {
		t.Fatalf("releasing again must be a no-op: %+v %v", again, err)
	}
	tk := acquire(t, s, key2, auto, T0.Add(2*time.Minute))
	if tk.Outcome != store.OwnershipTakenOver || tk.Ownership.OwnerType != auto || tk.Ownership.OwnerVersion != 2 || tk.Ownership.Status != store.OwnershipOwned {
		t.Fatalf("take over = %+v", tk)
	}
	f2.CoordinatesJSON = `{"old":true}`
	if _, err := s.ReportOwnershipMarkDeliveryCreated(ctx, f2); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("the fenced-out owner marked a delivery: %v", err)
	}
	if _, err := s.ReportOwnershipRelease(ctx, store.ReportOwnershipFenceParams{SchedulerKey: key2, Owner: old, OwnerVersion: 1, Now: T0}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("the fenced-out owner released: %v", err)
	}
	if _, err := s.ReportOwnershipGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := s.ReportOwnershipRelease(ctx, store.ReportOwnershipFenceParams{SchedulerKey: "nope", Owner: auto, OwnerVersion: 1, Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("release unknown: %v", err)
	}
	list, err := s.ReportOwnershipList(ctx, store.ReportOwnershipListParams{SubscriptionGuid: reportSub, Limit: 10})
	if err != nil || len(list) != 2 || list[0].SchedulerKey != key || list[1].SchedulerKey != key2 {
		t.Fatalf("list = %+v %v", list, err)
	}
	if page, _ := s.ReportOwnershipList(ctx, store.ReportOwnershipListParams{SubscriptionGuid: reportSub, AfterKey: key, Limit: 10}); len(page) != 1 {
		t.Fatalf("page 2 = %+v", page)
	}
}

// testReportOwnershipConcurrent: both schedulers race on the same keys; each key ends with
// exactly one owner and exactly one Acquired answer.
func testReportOwnershipConcurrent(t *testing.T, open Opener) {
	s := fresh(t, open)
	const keys, workers = 10, 6
	var mu sync.Mutex
	acquired := map[string][]store.ReportOwnerType{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		owner := store.OwnerAutomationScheduler
		if w%2 == 1 {
			owner = store.OwnerOldScheduler
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < keys; k++ {
				key := fmt.Sprintf("report-subscription:%s:scheduled:k%d", reportSub, k)
				r, err := s.ReportOwnershipAcquire(context.Background(), store.ReportOwnershipAcquireParams{SchedulerKey: key,
					SubscriptionGuid: reportSub, RunKind: store.ReportRunScheduled, Owner: owner, Now: T0})
				if err != nil {
					errs <- err
					return
				}
				if r.Outcome == store.OwnershipAcquired {
					mu.Lock()
					acquired[key] = append(acquired[key], owner)
					mu.Unlock()
				}
				if (r.Outcome == store.OwnershipConflict) != (r.Ownership.OwnerType != owner) {
					errs <- fmt.Errorf("%s: outcome %s for %s but owner %s", key, r.Outcome, owner, r.Ownership.OwnerType)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("report-subscription:%s:scheduled:k%d", reportSub, k)
		got, err := s.ReportOwnershipGet(context.Background(), key)
		if len(acquired[key]) != 1 || err != nil || got.OwnerType != acquired[key][0] || got.OwnerVersion != 1 {
			t.Fatalf("%s: acquired by %v, row %+v %v", key, acquired[key], got, err)
		}
	}
}

func testReportOwnershipReleaseAll(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	auto := store.OwnerAutomationScheduler
	mk := func(key string, kind store.ReportRunKind, owner store.ReportOwnerType) {
		if _, err := s.ReportOwnershipAcquire(ctx, store.ReportOwnershipAcquireParams{SchedulerKey: key, SubscriptionGuid: reportSub,
			RunKind: kind, Owner: owner, Now: T0}); err != nil {
			t.Fatal(err)
		}
	}
	mk("k-sched-1", store.ReportRunScheduled, auto)
	mk("k-sched-2", store.ReportRunScheduled, auto)
	mk("k-manual", store.ReportRunManual, auto)
	mk("k-old", store.ReportRunScheduled, store.OwnerOldScheduler)
	mk("k-done", store.ReportRunScheduled, auto)
	if _, err := s.ReportOwnershipMarkDeliveryCreated(ctx, store.ReportOwnershipFenceParams{SchedulerKey: "k-done", Owner: auto, OwnerVersion: 1, CoordinatesJSON: `{}`, Now: T0}); err != nil {
		t.Fatal(err)
	}
	p := store.ReportOwnershipReleaseAllParams{SubscriptionGuid: reportSub, Owner: auto, Kinds: []store.ReportRunKind{store.ReportRunScheduled}, Now: T0.Add(time.Hour), Limit: 1}
	n, err := s.ReportOwnershipReleaseAll(ctx, p)
	if err != nil || n != 1 {
		t.Fatalf("bounded release = %d %v", n, err)
	}
	p.Limit = 100
	if n, err := s.ReportOwnershipReleaseAll(ctx, p); err != nil || n != 1 {
		t.Fatalf("second release = %d %v", n, err)
	}
	want := map[string]store.ReportOwnershipStatus{"k-sched-1": store.OwnershipCancelled, "k-sched-2": store.OwnershipCancelled,
		"k-manual": store.OwnershipOwned, "k-old": store.OwnershipOwned, "k-done": store.OwnershipDeliveryCreated}
	for key, st := range want {
		if got, _ := s.ReportOwnershipGet(ctx, key); got.Status != st {
			t.Fatalf("%s: %s, want %s", key, got.Status, st)
		}
	}
	if _, err := s.ReportOwnershipReleaseAll(ctx, store.ReportOwnershipReleaseAllParams{SubscriptionGuid: reportSub, Owner: auto, Now: T0, Limit: 10}); err == nil {
		t.Fatal("release without kinds was accepted")
	}
}

func testReportRollout(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	r, err := s.ReportRolloutPut(ctx, store.ReportRolloutRecord{ScopeType: store.RolloutBusinessUnit, ScopeID: "bu-1", Mode: "Shadow", UpdatedOn: T0, UpdatedBy: "ops"})
	if err != nil || r.Version != 1 || r.Mode != "Shadow" || r.UpdatedBy != "ops" || !r.UpdatedOn.Equal(T0) {
		t.Fatalf("insert = %+v %v", r, err)
	}
	r, err = s.ReportRolloutPut(ctx, store.ReportRolloutRecord{ScopeType: store.RolloutBusinessUnit, ScopeID: "bu-1", Mode: "Cutover", UpdatedOn: T0.Add(time.Hour)})
	if err != nil || r.Version != 2 || r.Mode != "Cutover" || r.UpdatedBy != "" {
		t.Fatalf("update = %+v %v", r, err)
	}
	if _, err := s.ReportRolloutPut(ctx, store.ReportRolloutRecord{ScopeType: "Global", ScopeID: "*", Mode: "Cutover", UpdatedOn: T0}); err == nil {
		t.Fatal("unknown scope accepted")
	}
	if _, err := s.ReportRolloutPut(ctx, store.ReportRolloutRecord{ScopeType: store.RolloutSubscription, ScopeID: reportSub, Mode: "RunNowAllowlist", UpdatedOn: T0}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReportRolloutGet(ctx, store.RolloutSubscription, reportSub); err != nil || got.Mode != "RunNowAllowlist" {
		t.Fatalf("get = %+v %v", got, err)
	}
	list, err := s.ReportRolloutList(ctx, store.ReportRolloutListParams{Limit: 10})
	if err != nil || len(list) != 2 || list[0].ScopeType != store.RolloutBusinessUnit || list[1].ScopeType != store.RolloutSubscription {
		t.Fatalf("list = %+v %v", list, err)
	}
	if page, _ := s.ReportRolloutList(ctx, store.ReportRolloutListParams{AfterScopeType: list[0].ScopeType, AfterScopeID: list[0].ScopeID, Limit: 10}); len(page) != 1 {
		t.Fatalf("page 2 = %+v", page)
	}
	if ok, err := s.ReportRolloutDelete(ctx, store.RolloutSubscription, reportSub, nil); err != nil || !ok {
		t.Fatalf("delete = %v %v", ok, err)
	}
	if ok, err := s.ReportRolloutDelete(ctx, store.RolloutSubscription, reportSub, nil); err != nil || ok {
		t.Fatalf("delete again = %v %v", ok, err)
	}
	if _, err := s.ReportRolloutGet(ctx, store.RolloutSubscription, reportSub); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
}

// testReportActivity builds activity through the public API and checks the aggregates.
func testReportActivity(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	day := T0.Add(24 * time.Hour)
	// Three reminder rows of one setting: two complete with a delivery each (one sent, one
	// failed), one held. One row of another business unit that must not count.
	var cs []automation.Candidate
	for i := 0; i < 3; i++ {
		cs = append(cs, Candidate(10+i, T0))
	}
	foreign := Candidate(20, T0)
	foreign.BusinessUnitID = "bu-2"
	cs = append(cs, foreign)
	if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: T0, Candidates: cs}); err != nil {
		t.Fatal(err)
	}
	rows := claim(t, s, T0.Add(time.Hour), 10)
	now := T0.Add(2 * time.Hour)
	for _, r := range rows {
		switch r.SchedulerKey {
		case cs[2].SchedulerKey:
			if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: now, FailureReasonCode: automation.ReasonPermanentError, Hold: true}); err != nil {
				t.Fatal(err)
			}
		default:
			dk := "dlv-" + r.SchedulerKey
			if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: now,
				Deliveries: []store.NotificationRequest{{DeliveryKey: dk, SchedulerKey: r.SchedulerKey, BusinessUnitID: r.BusinessUnitID,
					Channel: "log", Recipient: "a@example.test", Template: "t", PayloadJSON: "{}"}}}); err != nil {
				t.Fatal(err)
			}
			c, err := s.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: dk, Now: now, Lease: time.Minute})
			if err != nil || !c.Claimed {
				t.Fatalf("claim %s: %+v %v", dk, c, err)
			}
			st := store.NotificationSent
			if r.SchedulerKey == cs[1].SchedulerKey {
				st = store.NotificationFailed
			}
			if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: now, Status: st}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.ReportActivity(ctx, store.ReportActivityParams{BusinessUnitID: "bu-1", From: T0, To: day, Limit: 100})
	if err != nil || len(got) != 1 {
		t.Fatalf("activity = %+v %v", got, err)
	}
	want := store.ReportActivityRow{BusinessUnitID: "bu-1", AutomationType: automation.TypeReminder, SettingGuid: cs[0].SettingGuid,
		DeliveriesSent: 1, DeliveriesFailed: 1, RunsFailed: 1, RunsOnHold: 1}
	if got[0] != want {
		t.Fatalf("activity = %+v, want %+v", got[0], want)
	}
	if later, _ := s.ReportActivity(ctx, store.ReportActivityParams{BusinessUnitID: "bu-1", From: day, To: day.Add(time.Hour), Limit: 100}); len(later) != 0 {
		t.Fatalf("another period = %+v", later)
	}
	if _, err := s.ReportActivity(ctx, store.ReportActivityParams{BusinessUnitID: "bu-1", From: day, To: T0, Limit: 100}); err == nil {
		t.Fatal("an empty period was accepted")
	}
}
