package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// runSupport runs the support API's store conformance tests (store.SupportStore).
func runSupport(t *testing.T, open Opener) {
	runCases(t, open, supportCases)
}

// supportCandidate is Candidate(n, due) in business unit bu.
func supportCandidate(n int, due time.Time, bu string) automation.Candidate {
	c := Candidate(n, due)
	c.BusinessUnitID = bu
	return c
}

func ids(rows []automation.SchedulerRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func find(t *testing.T, s store.Store, p store.SupportFindParams) []automation.SchedulerRow {
	t.Helper()
	if p.Limit == 0 {
		p.Limit = 100
	}
	rows, err := s.SupportSchedulerFind(context.Background(), p)
	if err != nil {
		t.Fatalf("find %+v: %v", p, err)
	}
	return rows
}

// hold puts the fresh row of c on support hold through the public API (Failed + hold).
func hold(t *testing.T, s store.Store, c automation.Candidate) automation.SchedulerRow {
	t.Helper()
	return putInStatus(t, s, c, automation.StatusFailed)
}

func testSupportFind(t *testing.T, open Opener) {
	s := fresh(t, open)
	due := T0.Add(24 * time.Hour)
	var all []automation.SchedulerRow
	for i := 0; i < 6; i++ {
		bu := "bu-a"
		if i%2 == 1 {
			bu = "bu-b"
		}
		ensure1(t, s, T0, supportCandidate(i, due.Add(time.Duration(i)*time.Hour), bu))
	}
	held := hold(t, s, supportCandidate(6, T0.Add(time.Hour), "bu-a")) // Failed, on hold
	for i := 0; i < 7; i++ {
		all = append(all, get(t, s, Candidate(i, T0).SchedulerKey))
	}
	newestFirst := func(rows []automation.SchedulerRow) []int64 {
		out := ids(rows)
		slices.Reverse(out)
		return out
	}
	yes := true
	from, to := due.Add(time.Hour), due.Add(4*time.Hour)
	cases := []struct {
		name string
		p    store.SupportFindParams
		want []int64
	}{
		{"no filter: newest first", store.SupportFindParams{Scope: automation.AllBusinessUnits()}, newestFirst(all)},
		{"by key", store.SupportFindParams{Scope: automation.AllBusinessUnits(), SchedulerKey: all[3].SchedulerKey}, []int64{all[3].ID}},
		{"by key, other business unit", store.SupportFindParams{Scope: automation.AllBusinessUnits(), SchedulerKey: all[3].SchedulerKey, BusinessUnitID: "bu-a"}, nil},
		{"by source", store.SupportFindParams{Scope: automation.AllBusinessUnits(), SourceEntityType: "Test", SourceEntityGuid: "src-2"}, []int64{all[2].ID}},
		{"by business unit", store.SupportFindParams{Scope: automation.AllBusinessUnits(), BusinessUnitID: "bu-b"}, []int64{all[5].ID, all[3].ID, all[1].ID}},
		{"by status", store.SupportFindParams{Scope: automation.AllBusinessUnits(), Status: automation.StatusFailed}, []int64{held.ID}},
		{"by business unit and status", store.SupportFindParams{Scope: automation.AllBusinessUnits(), BusinessUnitID: "bu-a", Status: automation.StatusPending}, []int64{all[4].ID, all[2].ID, all[0].ID}},
		{"on hold", store.SupportFindParams{Scope: automation.AllBusinessUnits(), OnHold: &yes}, []int64{held.ID}},
		{"scheduledOn range only: schedule order", store.SupportFindParams{Scope: automation.AllBusinessUnits(), ScheduledFrom: &from, ScheduledTo: &to}, []int64{all[1].ID, all[2].ID, all[3].ID}},
		{"range as a residual", store.SupportFindParams{Scope: automation.AllBusinessUnits(), BusinessUnitID: "bu-a", ScheduledFrom: &from}, []int64{all[4].ID, all[2].ID}},
		{"scope narrows", store.SupportFindParams{Scope: automation.BusinessUnits("bu-b")}, []int64{all[5].ID, all[3].ID, all[1].ID}},
		{"empty scope sees nothing", store.SupportFindParams{Scope: automation.Scope{}}, nil},
		{"scope and a business unit outside it", store.SupportFindParams{Scope: automation.BusinessUnits("bu-b"), BusinessUnitID: "bu-a"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(find(t, s, tc.p))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := s.SupportSchedulerFind(context.Background(), store.SupportFindParams{Scope: automation.AllBusinessUnits(), Limit: store.MaxBatch + 1}); err == nil {
		t.Fatal("a limit above MaxBatch must be refused")
	}
	if _, err := s.SupportSchedulerFind(context.Background(), store.SupportFindParams{Scope: automation.AllBusinessUnits(), SourceEntityType: "Test", Limit: 1}); err == nil {
		t.Fatal("a source type without its guid must be refused")
	}
}

func testSupportFindPages(t *testing.T, open Opener) {
	s := fresh(t, open)
	at := T0.Add(24 * time.Hour)
	for i := 0; i < 7; i++ {
		// Pairs at the same instant, so schedule-order pages must break ties by Id.
		ensure1(t, s, T0, supportCandidate(i, at.Add(time.Duration(i/2)*time.Hour), "bu-a"))
	}
	var seen []int64
	p := store.SupportFindParams{Scope: automation.AllBusinessUnits(), BusinessUnitID: "bu-a", Limit: 3}
	for page := 0; page < 5; page++ {
		rows := find(t, s, p)
		seen = append(seen, ids(rows)...)
		if len(rows) < p.Limit {
			break
		}
		p.BeforeID = rows[len(rows)-1].ID
	}
	if len(seen) != 7 || !slices.IsSortedFunc(seen, func(a, b int64) int { return int(b - a) }) {
		t.Fatalf("newest-first pages gave %v", seen)
	}
	from := at
	q := store.SupportFindParams{Scope: automation.AllBusinessUnits(), ScheduledFrom: &from, Limit: 2}
	var ordered []automation.SchedulerRow
	for page := 0; page < 6; page++ {
		rows := find(t, s, q)
		ordered = append(ordered, rows...)
		if len(rows) < q.Limit {
			break
		}
		last := rows[len(rows)-1]
		q.AfterOn, q.AfterID = last.ScheduledOn, last.ID
	}
	if len(ordered) != 7 {
		t.Fatalf("schedule-order pages gave %d rows", len(ordered))
	}
	for i := 1; i < len(ordered); i++ {
		a, b := ordered[i-1], ordered[i]
		if a.ScheduledOn.After(b.ScheduledOn) || (a.ScheduledOn.Equal(b.ScheduledOn) && a.ID >= b.ID) {
			t.Fatalf("not in (ScheduledOn, Id) order at %d: %v %d, %v %d", i, a.ScheduledOn, a.ID, b.ScheduledOn, b.ID)
		}
	}
}

func testSupportGet(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	r := ensure1(t, s, T0, Candidate(1, T0.Add(time.Hour))).Row
	byID, err := s.SupportSchedulerGet(ctx, r.ID)
	if err != nil || byID.SchedulerKey != r.SchedulerKey {
		t.Fatalf("get by id: %+v %v", byID, err)
	}
	byGuid, err := s.SupportSchedulerGetByGuid(ctx, r.Guid)
	if err != nil || byGuid.ID != r.ID {
		t.Fatalf("get by guid: %+v %v", byGuid, err)
	}
	if _, err := s.SupportSchedulerGet(ctx, r.ID+100); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := s.SupportSchedulerGetByGuid(ctx, store.RowGuid("nope")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown guid: %v", err)
	}
}

func act(s store.Store, r automation.SchedulerRow, a store.SupportAction, now time.Time, due *time.Time) (store.SupportActResult, error) {
	return s.SupportSchedulerAct(context.Background(), store.SupportActParams{ID: r.ID, Version: r.Version, Action: a,
		Operator: "ops.jane", Reason: "provider fixed", Now: now, DueOn: due})
}

func audits(t *testing.T, s store.Store, id int64) []store.SupportAuditRecord {
	t.Helper()
	recs, err := s.SupportAuditList(context.Background(), []int64{id}, 100)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func testSupportRelease(t *testing.T, open Opener) {
	s := fresh(t, open)
	now := T0.Add(48 * time.Hour)
	h := hold(t, s, Candidate(1, T0.Add(time.Hour)))
	res, err := act(s, h, store.SupportRelease, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := get(t, s, h.SchedulerKey)
	if got.Status != automation.StatusPending || got.IsOnSupportHold || got.NextRetryOn != nil || got.RetryCount != h.RetryCount ||
		got.Version != h.Version+1 || res.Row.Version != got.Version || res.AuditID == 0 {
		t.Fatalf("released row %+v (result %+v)", got, res)
	}
	if rows := claim(t, s, now, 10); len(rows) != 1 || rows[0].ID != h.ID {
		t.Fatalf("a released row is due at once: claimed %v", keys(rows))
	}
	a := audits(t, s, h.ID)
	if len(a) != 1 || a[0].Action != store.SupportRelease || a[0].Operator != "ops.jane" || a[0].Reason != "provider fixed" ||
		a[0].StatusBefore != automation.StatusFailed || a[0].StatusAfter != automation.StatusPending ||
		a[0].VersionBefore != h.Version || a[0].VersionAfter != h.Version+1 || !a[0].CreatedOn.Equal(now) {
		t.Fatalf("audit %+v", a)
	}

	// A conflict hold on a Pending row: released, still Pending, due after DueOn.
	c := Candidate(2, T0.Add(time.Hour))
	ensure1(t, s, T0, c)
	c2 := c
	c2.InputHash = automation.InputHash("another input")
	conflict := ensure1(t, s, T0, c2).Row
	due := now.Add(10 * time.Minute)
	if _, err := act(s, conflict, store.SupportRelease, now, &due); err != nil {
		t.Fatal(err)
	}
	got = get(t, s, c.SchedulerKey)
	if got.IsOnSupportHold || got.Status != automation.StatusPending || got.NextRetryOn == nil || !got.NextRetryOn.Equal(due) ||
		got.InputHash != c.InputHash || got.ConflictInputHash != c2.InputHash {
		t.Fatalf("released conflict row %+v", got)
	}
	if rows := claim(t, s, now.Add(time.Minute), 10); len(rows) != 0 {
		t.Fatalf("released with DueOn: not due before it, claimed %v", keys(rows))
	}
	// Not on hold any more: a second release is refused and writes nothing.
	before := get(t, s, c.SchedulerKey)
	if _, err := act(s, before, store.SupportRelease, now, nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("release of a row not on hold: %v", err)
	}
	if after := get(t, s, c.SchedulerKey); after.Version != before.Version || len(audits(t, s, after.ID)) != 1 {
		t.Fatalf("a refused action changed the row or the audit: v%d→v%d", before.Version, after.Version)
	}
}

func testSupportRetryCancel(t *testing.T, open Opener) {
	s := fresh(t, open)
	now := T0.Add(48 * time.Hour)
	// Retry now: Failed on hold → Pending, due now.
	h := hold(t, s, Candidate(1, T0.Add(time.Hour)))
	if _, err := act(s, h, store.SupportRetryNow, now, nil); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, h.SchedulerKey); got.Status != automation.StatusPending || got.IsOnSupportHold || got.NextRetryOn != nil {
		t.Fatalf("retried row %+v", got)
	}
	// Retry now on a Pending row in backoff clears NextRetryOn.
	c := Candidate(2, T0.Add(time.Hour))
	ensure1(t, s, T0, c)
	r := claim(t, s, T0.Add(2*time.Hour), 10)
	var mine automation.SchedulerRow
	for _, x := range r {
		if x.SchedulerKey == c.SchedulerKey {
			mine = x
		}
	}
	if err := s.SchedulerFail(context.Background(), store.SchedulerFailParams{ID: mine.ID, Token: mine.Version, Now: T0.Add(2 * time.Hour),
		FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	backoff := get(t, s, c.SchedulerKey)
	if _, err := act(s, backoff, store.SupportRetryNow, now, nil); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, c.SchedulerKey); got.NextRetryOn != nil || got.Status != automation.StatusPending {
		t.Fatalf("backoff row after retry now %+v", got)
	}
	// Retry now is refused for a Completed row (that needs a support retry).
	done := putInStatus(t, s, Candidate(3, T0.Add(time.Hour)), automation.StatusCompleted)
	if _, err := act(s, done, store.SupportRetryNow, now, nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("retry now of a Completed row: %v", err)
	}
	// Cancel: Pending → Cancelled SupportCancelled; a second cancel is refused.
	p := ensure1(t, s, T0, Candidate(4, now.Add(time.Hour))).Row
	if _, err := act(s, p, store.SupportCancel, now, nil); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, p.SchedulerKey)
	if got.Status != automation.StatusCancelled || got.ReasonCode != automation.ReasonSupportCancelled {
		t.Fatalf("cancelled row %+v", got)
	}
	if _, err := act(s, got, store.SupportCancel, now, nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("second cancel: %v", err)
	}
	if rows := claim(t, s, now.Add(2*time.Hour), 10); slices.Contains(keys(rows), p.SchedulerKey) {
		t.Fatal("a cancelled row was claimed")
	}
	// Processing and Completed rows cannot be cancelled.
	proc := putInStatus(t, s, Candidate(5, T0.Add(time.Hour)), automation.StatusProcessing)
	if _, err := act(s, proc, store.SupportCancel, now, nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("cancel of a Processing row: %v", err)
	}
	if _, err := act(s, done, store.SupportCancel, now, nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("cancel of a Completed row: %v", err)
	}
}

// retryCandidate is the support retry of row (ensured from c) due at now: c under the retry
// key of row's current Version.
func retryCandidate(c automation.Candidate, row automation.SchedulerRow, now time.Time) automation.Candidate {
	c.SchedulerKey = automation.SupportRetryKey(c.SchedulerKey, row.Version)
	c.ScheduledOn = now
	return c
}

// supportRetry has operator ops.jane retry row (at its current Version) with retry, for
// reason, at now; it fails t on an error.
func supportRetry(t *testing.T, s store.Store, row automation.SchedulerRow, retry automation.Candidate, now time.Time, reason string) store.SupportActResult {
	t.Helper()
	res, err := s.SupportSchedulerAct(context.Background(), store.SupportActParams{ID: row.ID, Version: row.Version, Action: store.SupportRetry,
		Operator: "ops.jane", Reason: reason, Now: now, RetryCandidate: &retry})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func testSupportRetryCompleted(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	now := T0.Add(72 * time.Hour)
	c := Candidate(1, T0.Add(time.Hour))
	done := putInStatus(t, s, c, automation.StatusCompleted)
	retry := retryCandidate(c, done, now)
	res := supportRetry(t, s, done, retry, now, "customer asked again")
	orig := get(t, s, c.SchedulerKey)
	if orig.Status != automation.StatusCompleted || orig.Version != done.Version+1 || orig.DispatchResultJSON != done.DispatchResultJSON {
		t.Fatalf("original after support retry %+v", orig)
	}
	if res.RetryRow == nil || res.RetryRow.Action != automation.EnsureInserted || res.RetryRow.Row.Status != automation.StatusPending ||
		!res.RetryRow.Row.ScheduledOn.Equal(now) || res.RetryRow.Row.InputHash != c.InputHash {
		t.Fatalf("retry row %+v", res.RetryRow)
	}
	if rows := claim(t, s, now, 10); len(rows) != 1 || rows[0].SchedulerKey != retry.SchedulerKey {
		t.Fatalf("the retry row is due now: %v", keys(rows))
	}
	a := audits(t, s, done.ID)
	if len(a) != 1 || a[0].Action != store.SupportRetry || a[0].RetrySchedulerKey != retry.SchedulerKey {
		t.Fatalf("audit %+v", a)
	}
	// The same read (old Version) again: refused, no second retry row.
	if _, err := s.SupportSchedulerAct(ctx, store.SupportActParams{ID: done.ID, Version: done.Version, Action: store.SupportRetry,
		Operator: "ops.jane", Reason: "double click", Now: now, RetryCandidate: &retry}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("retry with a stale version: %v", err)
	}
	if rows := find(t, s, store.SupportFindParams{Scope: automation.AllBusinessUnits(), SourceEntityType: c.SourceEntityType, SourceEntityGuid: c.SourceEntityGuid}); len(rows) != 2 {
		t.Fatalf("rows of the source: %v", ids(rows))
	}
	// Support retry of a row still in flight is refused.
	p := ensure1(t, s, T0, Candidate(2, now.Add(time.Hour))).Row
	r2 := Candidate(2, now)
	r2.SchedulerKey = automation.SupportRetryKey(p.SchedulerKey, p.Version)
	if _, err := s.SupportSchedulerAct(ctx, store.SupportActParams{ID: p.ID, Version: p.Version, Action: store.SupportRetry,
		Operator: "o", Reason: "r", Now: now, RetryCandidate: &r2}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("support retry of a Pending row: %v", err)
	}
	if _, err := s.SchedulerGetByKey(ctx, r2.SchedulerKey); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused support retry left a row: %v", err)
	}
}

// testSupportCancelSticks: ensure meets a row support cancelled with the same InputHash and
// leaves it Cancelled (automation.DecideEnsure); another InputHash is the conflict rule.
func testSupportCancelSticks(t *testing.T, open Opener) {
	s := fresh(t, open)
	c := Candidate(1, T0.Add(48*time.Hour))
	p := ensure1(t, s, T0, c).Row
	if _, err := act(s, p, store.SupportCancel, T0.Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	cancelled := get(t, s, c.SchedulerKey)
	moved := c
	moved.ScheduledOn = moved.ScheduledOn.Add(time.Hour)
	moved.ScheduledLocalTime = moved.ScheduledOn.Format("15:04")
	for _, cand := range []automation.Candidate{c, moved} {
		res := ensure1(t, s, T0.Add(2*time.Hour), cand)
		got := get(t, s, c.SchedulerKey)
		if res.Action != automation.EnsureUnchanged || got.Status != automation.StatusCancelled || got.Version != cancelled.Version {
			t.Fatalf("ensure after a support cancel: %s, row %s v%d", res.Action, got.Status, got.Version)
		}
	}
	other := c
	other.InputHash = automation.InputHash("the source really changed")
	if res := ensure1(t, s, T0.Add(3*time.Hour), other); res.Action != automation.EnsureConflict || res.Row.Status != automation.StatusCancelled {
		t.Fatalf("ensure with another input: %s %s", res.Action, res.Row.Status)
	}
}

func testSupportActBadInput(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	h := hold(t, s, Candidate(1, T0.Add(time.Hour)))
	retry := Candidate(9, T0)
	cases := []store.SupportActParams{
		{ID: h.ID, Version: h.Version, Action: store.SupportRelease, Reason: "r", Now: T0},                 // no operator
		{ID: h.ID, Version: h.Version, Action: store.SupportRelease, Operator: "o", Reason: "  ", Now: T0}, // blank reason
		{ID: h.ID, Version: h.Version, Action: "Frobnicate", Operator: "o", Reason: "r", Now: T0},          // unknown action
		{ID: h.ID, Version: h.Version, Action: store.SupportRetry, Operator: "o", Reason: "r", Now: T0},    // no candidate
		{ID: h.ID, Version: h.Version, Action: store.SupportCancel, Operator: "o", Reason: "r", Now: T0, RetryCandidate: &retry},
	}
	for i, p := range cases {
		if _, err := s.SupportSchedulerAct(ctx, p); err == nil {
			t.Errorf("case %d: accepted %+v", i, p)
		}
	}
	if _, err := s.SupportSchedulerAct(ctx, store.SupportActParams{ID: h.ID, Version: h.Version - 1, Action: store.SupportRelease,
		Operator: "o", Reason: "r", Now: T0}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale version: %v", err)
	}
	if _, err := s.SupportSchedulerAct(ctx, store.SupportActParams{ID: h.ID + 1000, Version: 1, Action: store.SupportRelease,
		Operator: "o", Reason: "r", Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown row: %v", err)
	}
	if got := get(t, s, h.SchedulerKey); got.Version != h.Version || !got.IsOnSupportHold || len(audits(t, s, h.ID)) != 0 {
		t.Fatalf("bad input changed the row: %+v", got)
	}
}

func testSupportReleaseBatch(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	var held []automation.SchedulerRow
	for i := 0; i < 5; i++ {
		bu := "bu-a"
		if i == 4 {
			bu = "bu-b"
		}
		held = append(held, hold(t, s, supportCandidate(i, T0.Add(time.Hour), bu)))
	}
	now := T0.Add(24 * time.Hour)
	batch := func(after int64, at time.Time, f store.SupportReleaseFilter) store.SupportReleaseBatchResult {
		t.Helper()
		res, err := s.SupportSchedulerReleaseBatch(ctx, store.SupportReleaseBatchParams{Filter: f, AfterID: after, Limit: 2,
			Now: at, Interval: time.Minute, Operator: "ops.jane", Reason: "outage over", BatchID: "rel-1"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	f := store.SupportReleaseFilter{Scope: automation.AllBusinessUnits(), BusinessUnitID: "bu-a", FailureReasonCode: automation.ReasonHandlerError}
	b1 := batch(0, now, f)
	b2 := batch(b1.Rows[len(b1.Rows)-1].ID, now, f)
	b3 := batch(b2.Rows[len(b2.Rows)-1].ID, now, f)
	if len(b1.Rows) != 2 || len(b2.Rows) != 2 || len(b3.Rows) != 0 {
		t.Fatalf("batches of %d, %d, %d rows", len(b1.Rows), len(b2.Rows), len(b3.Rows))
	}
	if !b1.DueOn.Equal(now) || !b2.DueOn.Equal(now.Add(time.Minute)) || !b3.DueOn.IsZero() {
		t.Fatalf("paced due instants %v %v %v", b1.DueOn, b2.DueOn, b3.DueOn)
	}
	for _, r := range append(b1.Rows, b2.Rows...) {
		if r.IsOnSupportHold || r.Status != automation.StatusPending || r.BusinessUnitID != "bu-a" {
			t.Fatalf("released row %+v", r)
		}
	}
	if r := get(t, s, held[4].SchedulerKey); !r.IsOnSupportHold {
		t.Fatal("the other business unit's row was released")
	}
	if rows := claim(t, s, now, 10); len(rows) != 2 {
		t.Fatalf("at the first slot only the first batch is due: %v", keys(rows))
	}
	if rows := claim(t, s, now.Add(time.Minute), 10); len(rows) != 2 {
		t.Fatalf("at the second slot the second batch: %v", keys(rows))
	}
	// A later release continues after the last slot even when asked earlier (shared pace),
	// and scope (Units) limits it.
	if res := batch(0, now, store.SupportReleaseFilter{Scope: automation.BusinessUnits("bu-a")}); len(res.Rows) != 0 {
		t.Fatalf("nothing on hold in bu-a any more: %v", ids(res.Rows))
	}
	res := batch(0, now, store.SupportReleaseFilter{Scope: automation.BusinessUnits("bu-b")})
	if len(res.Rows) != 1 || !res.DueOn.Equal(now.Add(2*time.Minute)) {
		t.Fatalf("third batch %v due %v", ids(res.Rows), res.DueOn)
	}
	a := audits(t, s, held[0].ID)
	if len(a) != 1 || a[0].BatchID != "rel-1" || a[0].DueOn == nil || !a[0].DueOn.Equal(now) {
		t.Fatalf("audit of a paced release %+v", a)
	}
	if _, err := s.SupportSchedulerReleaseBatch(ctx, store.SupportReleaseBatchParams{Limit: 2, Now: now, Interval: 0, Operator: "o", Reason: "r"}); err == nil {
		t.Fatal("a zero interval must be refused")
	}
}

func testSupportMetrics(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	now := T0.Add(10 * time.Hour)
	ensure1(t, s, T0, supportCandidate(1, T0.Add(time.Hour), "bu-a"))   // due
	ensure1(t, s, T0, supportCandidate(2, T0.Add(2*time.Hour), "bu-b")) // due, oldest in bu-b
	ensure1(t, s, T0, supportCandidate(3, now.Add(time.Hour), "bu-a"))  // not yet due
	hold(t, s, supportCandidate(4, T0.Add(time.Minute), "bu-a"))        // Failed, held HandlerError
	putInStatus(t, s, supportCandidate(5, T0.Add(time.Minute), "bu-b"), automation.StatusDeactivated)
	// Processing with an expired lease (claimed at 00:01:01 with a 5 min lease).
	putInStatus(t, s, supportCandidate(6, T0, "bu-a"), automation.StatusProcessing)
	// A completed row with one queued delivery and its outbox message.
	c7 := supportCandidate(7, T0.Add(-time.Hour), "bu-a")
	ensure1(t, s, T0, c7)
	var r7 automation.SchedulerRow
	for _, r := range claim(t, s, T0, 10) {
		if r.SchedulerKey == c7.SchedulerKey {
			r7 = r
		}
	}
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r7.ID, Token: r7.Version, Now: T0.Add(time.Minute),
		Deliveries: []store.NotificationRequest{{DeliveryKey: "dk-m", SchedulerKey: c7.SchedulerKey, BusinessUnitID: "bu-a", Channel: "log", Recipient: "x", Template: "t", PayloadJSON: "{}"}},
		Outbox:     []store.OutboxMessage{{MessageID: "m-m", Destination: "q", Body: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	m, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: now, Since: now.Add(-24 * time.Hour), Cap: 1000})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("due=%d oldest=%v proc=%d expired=%d held=%v failed=%d deact=%v outbox=%d outboxOldest=%v unknown=%d",
		2, T0.Add(time.Hour), 1, 1, map[string]int{"HandlerError": 1}, 1, map[string]int{"Superseded": 1}, 1, T0.Add(time.Minute), 0)
	if got := metricsString(m); got != want {
		t.Fatalf("metrics\n got %s\nwant %s", got, want)
	}
	scoped, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Now: now, Since: now.Add(-24 * time.Hour), Cap: 1000, Scope: automation.BusinessUnits("bu-b")})
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("due=%d oldest=%v proc=%d expired=%d held=%v failed=%d deact=%v outbox=%d outboxOldest=%v unknown=%d",
		1, T0.Add(2*time.Hour), 0, 0, map[string]int{}, 0, map[string]int{"Superseded": 1}, 0, nil, 0)
	if got := metricsString(scoped); got != want {
		t.Fatalf("scoped metrics\n got %s\nwant %s", got, want)
	}
	capped, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: now, Since: now, Cap: 1})
	if err != nil || capped.PendingDue != 1 || len(capped.DeactivatedByReason) != 0 {
		t.Fatalf("capped metrics %+v %v", capped, err)
	}
	if _, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: now, Cap: 0}); err == nil {
		t.Fatal("cap 0 must be refused")
	}
}

func metricsString(m store.SupportMetrics) string {
	tm := func(t *time.Time) any {
		if t == nil {
			return nil
		}
		return *t
	}
	held, deact := m.HeldByReason, m.DeactivatedByReason
	if held == nil {
		held = map[string]int{}
	}
	if deact == nil {
		deact = map[string]int{}
	}
	return fmt.Sprintf("due=%d oldest=%v proc=%d expired=%d held=%v failed=%d deact=%v outbox=%d outboxOldest=%v unknown=%d",
		m.PendingDue, tm(m.OldestDueOn), m.Processing, m.ExpiredLeases, held, m.Failed, deact, m.OutboxUnsent, tm(m.OutboxOldestOn), m.UnknownDeliveries)
}

func testSupportStaleEvent(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	snap := func(rev int64, id string, at time.Time) store.SnapshotOutcome {
		t.Helper()
		out, err := s.SourceSnapshotApply(ctx, store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: "g-1", BusinessUnitID: "bu-1",
			Revision: rev, DataJSON: "{}", LastEventID: id, UpdatedOn: at})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	snap(3, "evt-3", T0)
	if _, err := s.SourceStaleEventGet(ctx, "PoliceVetting", "g-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no stale event yet: %v", err)
	}
	if snap(3, "evt-3", T0.Add(time.Second)) != store.SnapshotReapplied {
		t.Fatal("redelivery")
	}
	if _, err := s.SourceStaleEventGet(ctx, "PoliceVetting", "g-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a redelivery is not a stale event: %v", err)
	}
	snap(2, "evt-2", T0.Add(time.Minute))
	snap(1, "evt-1", T0.Add(2*time.Minute))
	e, err := s.SourceStaleEventGet(ctx, "PoliceVetting", "g-1")
	if err != nil || e.EventID != "evt-1" || e.Revision != 1 || e.StoredRevision != 3 || e.StoredEventID != "evt-3" || !e.ReceivedOn.Equal(T0.Add(2*time.Minute)) {
		t.Fatalf("stale event %+v %v", e, err)
	}
}

func testSupportNotifications(t *testing.T, open Opener) {
	s, c, r := freshClaimed(t, open)
	ctx := context.Background()
	var reqs []store.NotificationRequest
	for i := 0; i < 3; i++ {
		reqs = append(reqs, store.NotificationRequest{DeliveryKey: fmt.Sprintf("dk-%d", i), SchedulerKey: c.SchedulerKey, BusinessUnitID: "bu-1",
			Channel: "log", Recipient: fmt.Sprintf("r%d@example.test", i), Template: "t", PayloadJSON: "{}"})
	}
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0, Deliveries: reqs}); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.SupportNotificationList(ctx, c.SchedulerKey, 2)
	if err != nil || len(jobs) != 2 || jobs[0].DeliveryKey != "dk-0" || jobs[1].DeliveryKey != "dk-1" {
		t.Fatalf("jobs %+v %v", jobs, err)
	}
	if jobs, _ := s.SupportNotificationList(ctx, "other", 10); len(jobs) != 0 {
		t.Fatalf("other key: %+v", jobs)
	}
	testSupportNotificationsByOtherKey(t, open)
}

// testSupportNotificationsByOtherKey: a job is listed under its own SchedulerKey whichever
// row's completion wrote it: another existing row's key (found by key, not by the completing
// row), a key with no row yet, and that key after its row was created later.
func testSupportNotificationsByOtherKey(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	a, b, later := Candidate(1, T0), Candidate(2, T0.Add(time.Hour)), Candidate(3, T0.Add(time.Hour))
	ensure1(t, s, T0, a)
	ensure1(t, s, T0, b)
	r := claim(t, s, T0, 1)[0]
	if r.SchedulerKey != a.SchedulerKey {
		t.Fatalf("claimed %s, want %s", r.SchedulerKey, a.SchedulerKey)
	}
	req := func(dk, key string) store.NotificationRequest {
		return store.NotificationRequest{DeliveryKey: dk, SchedulerKey: key, BusinessUnitID: "bu-1", Channel: "log", Recipient: dk + "@example.test", Template: "t", PayloadJSON: "{}"}
	}
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0,
		Deliveries: []store.NotificationRequest{req("dk-own", a.SchedulerKey), req("dk-b", b.SchedulerKey), req("dk-later", later.SchedulerKey)}}); err != nil {
		t.Fatal(err)
	}
	list := func(key string) []string { return deliveryKeysOf(t, s, key, 10) }
	for key, want := range map[string]string{a.SchedulerKey: "dk-own", b.SchedulerKey: "dk-b", later.SchedulerKey: "dk-later"} {
		if got := list(key); len(got) != 1 || got[0] != want {
			t.Fatalf("jobs of %s: %q, want [%s]", key, got, want)
		}
	}
	ensure1(t, s, T0, later)
	if got := list(later.SchedulerKey); len(got) != 1 || got[0] != "dk-later" {
		t.Fatalf("jobs of %s after its row was created: %q", later.SchedulerKey, got)
	}
}

// testSupportRetryKeepsEndTime: a support retry of a row that ended long ago moves its
// Version on (so a second retry needs a fresh read) but not its UpdatedOn, which says when it
// ended: the row must not count as "deactivated in the last 24 hours" again, and its history
// keeps the real deactivation time.
func testSupportRetryKeepsEndTime(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	c := supportCandidate(1, T0.Add(time.Hour), "bu-a")
	ended := putInStatus(t, s, c, automation.StatusDeactivated)
	now := ended.UpdatedOn.Add(30 * 24 * time.Hour)
	res := supportRetry(t, s, ended, retryCandidate(c, ended, now), now, "send it anyway")
	after := get(t, s, c.SchedulerKey)
	if after.Version != ended.Version+1 || res.Row.Version != after.Version {
		t.Fatalf("version after a support retry: %d (answer %d), want %d", after.Version, res.Row.Version, ended.Version+1)
	}
	if !after.UpdatedOn.Equal(ended.UpdatedOn) || !res.Row.UpdatedOn.Equal(ended.UpdatedOn) {
		t.Fatalf("a support retry moved the ended row's UpdatedOn from %s to %s", ended.UpdatedOn, after.UpdatedOn)
	}
	m, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: now, Since: now.Add(-24 * time.Hour), Cap: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.DeactivatedByReason) != 0 {
		t.Fatalf("a row deactivated 30 days ago counts as deactivated in the last 24 hours after a support retry: %v", m.DeactivatedByReason)
	}
}

// testSupportMetricsOldestDueAfterABackoff: a row waiting on a backoff (or a released hold)
// becomes due at its NextRetryOn, not at its old ScheduledOn; the oldest due figure says how
// long due work has waited for the poller, so a retry that came due a minute ago is a minute
// old, not days.
func testSupportMetricsOldestDueAfterBackoff(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	c := supportCandidate(1, T0.Add(time.Hour), "bu-a")
	ensure1(t, s, T0, c)
	r := claim(t, s, c.ScheduledOn, 10)[0]
	retryAt := c.ScheduledOn.Add(72 * time.Hour) // three days later (a long backoff, or a paced release)
	if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: c.ScheduledOn,
		FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: retryAt}); err != nil {
		t.Fatal(err)
	}
	// A row due later than the retry, never failed: due since its ScheduledOn.
	later := supportCandidate(2, retryAt.Add(30*time.Second), "bu-a")
	ensure1(t, s, T0, later)
	for _, tc := range []struct {
		now  time.Time
		want any
	}{
		{retryAt.Add(-time.Minute), nil},         // nothing is due yet
		{retryAt.Add(20 * time.Second), retryAt}, // the retry: due 20 s ago, not 3 days
		{retryAt.Add(time.Minute), retryAt},      // both due; the retry came due first
		{retryAt.Add(48 * time.Hour), retryAt},   // still waiting: its age grows from NextRetryOn
	} {
		m, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: tc.now, Since: tc.now.Add(-24 * time.Hour), Cap: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if m.OldestDueOn != nil {
			got = *m.OldestDueOn
		}
		if got != tc.want {
			t.Errorf("at %s: oldest due %v, want %v", tc.now, got, tc.want)
		}
	}
}

// testSupportRunNow: run now makes a Pending row that waits for its time due at once (its
// local intent kept, audited as RunNow); a held, ended or stale row is refused untouched.
func testSupportRunNow(t *testing.T, open Opener) {
	s := fresh(t, open)
	now := T0.Add(time.Hour)
	c := Candidate(1, T0.Add(72*time.Hour))
	p := ensure1(t, s, T0, c).Row
	if rows := claim(t, s, now, 10); len(rows) != 0 {
		t.Fatalf("not due before run now: claimed %v", keys(rows))
	}
	res, err := act(s, p, store.SupportRunNow, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := get(t, s, c.SchedulerKey)
	if got.Status != automation.StatusPending || !got.ScheduledOn.Equal(now) || got.NextRetryOn != nil || got.Version != p.Version+1 ||
		got.ScheduledLocalDate != p.ScheduledLocalDate || got.ScheduledLocalTime != p.ScheduledLocalTime || got.TimeZoneID != p.TimeZoneID ||
		res.Row.Version != got.Version || res.AuditID == 0 {
		t.Fatalf("row after run now %+v (result %+v)", got, res)
	}
	a := audits(t, s, p.ID)
	if len(a) != 1 || a[0].Action != store.SupportRunNow || a[0].StatusBefore != automation.StatusPending ||
		a[0].StatusAfter != automation.StatusPending || a[0].VersionBefore != p.Version || a[0].VersionAfter != got.Version {
		t.Fatalf("audit %+v", a)
	}
	// The stale Version it was read at is refused and changes nothing.
	if _, err := act(s, p, store.SupportRunNow, now, nil); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("run now with a stale version: %v", err)
	}
	if rows := claim(t, s, now, 10); len(rows) != 1 || rows[0].ID != p.ID {
		t.Fatalf("run now makes the row due at once: claimed %v", keys(rows))
	}
	// A row already due keeps its earlier ScheduledOn (never later than it was).
	early := ensure1(t, s, T0, Candidate(2, T0.Add(time.Minute))).Row
	if _, err := act(s, early, store.SupportRunNow, now, nil); err != nil {
		t.Fatal(err)
	}
	if g := get(t, s, early.SchedulerKey); !g.ScheduledOn.Equal(early.ScheduledOn) {
		t.Fatalf("run now moved an already-due row from %s to %s", early.ScheduledOn, g.ScheduledOn)
	}
	// On support hold, Completed: refused, nothing written.
	for _, r := range []automation.SchedulerRow{hold(t, s, Candidate(3, T0.Add(time.Hour))),
		putInStatus(t, s, Candidate(4, T0.Add(time.Hour)), automation.StatusCompleted)} {
		if _, err := act(s, r, store.SupportRunNow, now, nil); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("run now of %s (hold %v): %v", r.Status, r.IsOnSupportHold, err)
		}
		if g := get(t, s, r.SchedulerKey); g.Version != r.Version || len(audits(t, s, r.ID)) != 0 {
			t.Fatalf("a refused run now changed the row or the audit: %+v", g)
		}
	}
}

// testMetricsHistory: samples are kept once per unit and minute, a scope of every unit reads
// the platform row, a narrower scope reads its own units added up (never another unit's),
// the series is bounded by Since and Limit, and the purge deletes only older samples, in
// bounded batches.
func testMetricsHistory(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	at := func(m int) time.Time { return T0.Add(time.Duration(m) * time.Minute) }
	var in []store.MetricsSample
	for m := 0; m < 5; m++ {
		in = append(in,
			store.MetricsSample{BusinessUnitID: "bu-a", SampledOn: at(m), PendingDue: 1 + m, OldestDueAgeSeconds: int64(10 * m), OnHold: 1},
			store.MetricsSample{BusinessUnitID: "bu-b", SampledOn: at(m), PendingDue: 100, OldestDueAgeSeconds: 7, OnHold: 2},
			store.MetricsSample{BusinessUnitID: store.PlatformUnit, SampledOn: at(m), PendingDue: 101 + m, OldestDueAgeSeconds: int64(10 * m), OnHold: 3,
				OutboxUnsent: 4, OutboxOldestAgeSeconds: 9})
	}
	if err := s.MetricsSamplePut(ctx, in); err != nil {
		t.Fatal(err)
	}
	// The same unit and minute again (another instance): ignored, the first stays.
	if err := s.MetricsSamplePut(ctx, []store.MetricsSample{{BusinessUnitID: "bu-a", SampledOn: at(0), PendingDue: 999}}); err != nil {
		t.Fatal(err)
	}
	series := func(sc automation.Scope, since time.Time, limit int) []store.MetricsSample {
		t.Helper()
		out, err := s.MetricsSampleSeries(ctx, store.MetricsSeriesParams{Scope: sc, Since: since, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := series(automation.BusinessUnits("bu-a"), at(0), 100)
	if len(a) != 5 || a[0].PendingDue != 1 || a[4].PendingDue != 5 || a[4].OldestDueAgeSeconds != 40 || a[0].OutboxUnsent != 0 || !a[2].SampledOn.Equal(at(2)) {
		t.Fatalf("bu-a: %+v", a)
	}
	ab := series(automation.BusinessUnits("bu-a", "bu-b"), at(3), 100)
	if len(ab) != 2 || ab[0].PendingDue != 104 || ab[0].OnHold != 3 || ab[0].OldestDueAgeSeconds != 30 || ab[1].OldestDueAgeSeconds != 40 {
		t.Fatalf("bu-a+bu-b since minute 3: %+v", ab)
	}
	all := series(automation.AllBusinessUnits(), at(0), 2)
	if len(all) != 2 || all[0].PendingDue != 101 || all[0].OutboxUnsent != 4 || all[1].OutboxOldestAgeSeconds != 9 {
		t.Fatalf("every unit, limit 2: %+v", all)
	}
	if none := series(automation.Scope{}, at(0), 100); len(none) != 0 {
		t.Fatalf("zero scope: %+v", none)
	}
	if got := series(automation.BusinessUnits("bu-c"), at(0), 100); len(got) != 0 {
		t.Fatalf("a unit without samples: %+v", got)
	}
	if _, err := s.MetricsSampleSeries(ctx, store.MetricsSeriesParams{Scope: automation.AllBusinessUnits(), Since: at(0), Limit: store.MaxMetricsSeries + 1}); err == nil {
		t.Fatal("a limit over MaxMetricsSeries was accepted")
	}
	// Purge before minute 2: 6 samples (3 units × 2 minutes), 4 at a time.
	n, err := s.MetricsSamplePurge(ctx, at(2), 4)
	if err != nil || n != 4 {
		t.Fatalf("purge batch 1: %d %v", n, err)
	}
	if n, err = s.MetricsSamplePurge(ctx, at(2), 4); err != nil || n != 2 {
		t.Fatalf("purge batch 2: %d %v", n, err)
	}
	if n, err = s.MetricsSamplePurge(ctx, at(2), 4); err != nil || n != 0 {
		t.Fatalf("purge batch 3: %d %v", n, err)
	}
	if a = series(automation.BusinessUnits("bu-a"), at(0), 100); len(a) != 3 || !a[0].SampledOn.Equal(at(2)) {
		t.Fatalf("after the purge: %+v", a)
	}
}

// The held reservations and the fees by status (the telemetry gauges' figures) count every
// unit's for a scope of all, only the unit's otherwise, and are capped.
func testSupportMetricsBudget(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	for _, bu := range []string{"bu-a", "bu-b"} {
		if _, err := s.BudgetCreate(ctx, store.BudgetCreateParams{BusinessUnitID: bu, CampaignID: "c1", Currency: "USD", MaxCost: 100, Now: T0, Operator: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	reserve := func(bu, cmd string, at time.Time) {
		t.Helper()
		r, err := s.BudgetReserve(ctx, store.BudgetReserveParams{BusinessUnitID: bu, CampaignID: "c1", CommandID: cmd, Amount: 1,
			Currency: "USD", OrderIDFor: orderFor(cmd), Now: at})
		if err != nil || r.Outcome != store.ReserveHeld {
			t.Fatalf("reserve %s: %+v %v", cmd, r, err)
		}
	}
	reserve("bu-a", "cmd-1", T0.Add(2*time.Minute))
	reserve("bu-a", "cmd-2", T0.Add(3*time.Minute))
	reserve("bu-b", "cmd-3", T0.Add(time.Minute))
	if _, err := s.FeeTransferBegin(ctx, store.FeeTransferBeginParams{CommandID: "cmd-1", OrderID: orderFor("cmd-1")(1), TransferType: "x", Day: "2026-10-01", Now: T0}); err != nil {
		t.Fatal(err)
	}
	now := T0.Add(time.Hour)
	all, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: now, Since: now, Cap: 100})
	if err != nil {
		t.Fatal(err)
	}
	if all.ReservationsHeld != 3 || all.OldestHeldOn == nil || !all.OldestHeldOn.Equal(T0.Add(time.Minute)) ||
		all.FeesByStatus[store.FeePending] != 1 || all.FeesByStatus[store.FeeSucceeded] != 0 {
		t.Fatalf("every unit: held %d oldest %v fees %v", all.ReservationsHeld, all.OldestHeldOn, all.FeesByStatus)
	}
	a, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.BusinessUnits("bu-a"), Now: now, Since: now, Cap: 100})
	if err != nil {
		t.Fatal(err)
	}
	if a.ReservationsHeld != 2 || a.OldestHeldOn == nil || !a.OldestHeldOn.Equal(T0.Add(2*time.Minute)) || a.FeesByStatus[store.FeePending] != 1 {
		t.Fatalf("bu-a: held %d oldest %v fees %v", a.ReservationsHeld, a.OldestHeldOn, a.FeesByStatus)
	}
	b, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.BusinessUnits("bu-b"), Now: now, Since: now, Cap: 100})
	if err != nil {
		t.Fatal(err)
	}
	if b.ReservationsHeld != 1 || b.FeesByStatus[store.FeePending] != 0 {
		t.Fatalf("bu-b: held %d fees %v", b.ReservationsHeld, b.FeesByStatus)
	}
	capped, err := s.SupportMetrics(ctx, store.SupportMetricsParams{Scope: automation.AllBusinessUnits(), Now: now, Since: now, Cap: 2})
	if err != nil || capped.ReservationsHeld != 2 {
		t.Fatalf("cap 2: held %d %v", capped.ReservationsHeld, err)
	}
}

// testMetricsCounts: persisted counters add up (two instances adding the same minute and key
// make one row of the sum), read per minute and outcome for a scope (a scope of every unit
// also reads the "" unit), bounded by the window, and purged by minute; bad counts change
// nothing (issue 35: event metrics survive restarts).
func testMetricsCounts(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	at := func(m int) time.Time { return T0.Add(time.Duration(m) * time.Minute) }
	c := func(m int, bu, label, outcome string, n int64) store.MetricsCount {
		return store.MetricsCount{MinuteOn: at(m), Flow: store.FlowIngest, BusinessUnitID: bu, Label: label, Outcome: outcome, N: n}
	}
	if err := s.MetricsCountAdd(ctx, "flush-1", []store.MetricsCount{c(0, "bu-a", "order.paid", "accepted", 2), c(0, "bu-b", "order.paid", "accepted", 5),
		c(0, "", "", "rejected", 1), c(1, "bu-a", "order.paid", "duplicate", 1),
		{MinuteOn: at(1), Flow: "other", BusinessUnitID: "bu-a", Outcome: "accepted", N: 9}}); err != nil {
		t.Fatal(err)
	}
	// Another instance (or the next flush of this one) adds to the same minute and key; the
	// instant is truncated to its minute.
	if err := s.MetricsCountAdd(ctx, "flush-2", []store.MetricsCount{c(0, "bu-a", "order.paid", "accepted", 3)}); err != nil {
		t.Fatal(err)
	}
	// A flush retried with its id (its commit succeeded, its caller saw an error) adds
	// nothing: the flush ledger holds its id.
	if err := s.MetricsCountAdd(ctx, "flush-2", []store.MetricsCount{c(0, "bu-a", "order.paid", "accepted", 3)}); err != nil {
		t.Fatalf("a retried flush: %v", err)
	}
	// A flush id out of bounds is refused, nothing written.
	for _, bad := range []string{"", strings.Repeat("f", store.MaxMetricsCountFlushID+1), "flush 3", "flush-é"} {
		if err := s.MetricsCountAdd(ctx, bad, []store.MetricsCount{c(0, "bu-a", "order.paid", "accepted", 100)}); err == nil {
			t.Fatalf("flush id %q: no error", bad)
		}
	}
	// Bad counts: refused, nothing of the batch written.
	// A member wider than its column (SQL Server's nvarchar, counted in UTF-16 code units) is
	// refused in every dialect, not only where the column would truncate it.
	if err := s.MetricsCountAdd(ctx, strings.Repeat("f", store.MaxMetricsCountFlushID), []store.MetricsCount{{MinuteOn: at(1), Flow: "other", BusinessUnitID: strings.Repeat("u", store.MaxMetricsCountUnit),
		Label: strings.Repeat("é", store.MaxMetricsCountLabel), Outcome: "accepted", N: 1}}); err != nil {
		t.Fatalf("MetricsCountAdd at the columns' widths: %v", err)
	}
	for _, bad := range []store.MetricsCount{c(0, "bu-a", "x", "accepted", 0), c(0, "bu-a", "x", "", 1), {MinuteOn: at(0), Outcome: "accepted", N: 1},
		c(0, "bu-a", strings.Repeat("é", store.MaxMetricsCountLabel+1), "accepted", 1), c(0, "bu-a", strings.Repeat("😀", store.MaxMetricsCountLabel/2+1), "accepted", 1),
		c(0, strings.Repeat("u", store.MaxMetricsCountUnit+1), "x", "accepted", 1)} {
		if err := s.MetricsCountAdd(ctx, "flush-bad", []store.MetricsCount{c(0, "bu-a", "order.paid", "accepted", 100), bad}); err == nil {
			t.Fatalf("MetricsCountAdd(%+v): no error", bad)
		}
	}
	series := func(sc automation.Scope, since, until time.Time) []store.MetricsCountBucket {
		t.Helper()
		out, err := s.MetricsCountSeries(ctx, store.MetricsCountParams{Flow: store.FlowIngest, Since: since, Until: until, Scope: sc})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	eq := func(got []store.MetricsCountBucket, want []store.MetricsCountBucket) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		for i := range got {
			if !got[i].Minute.Equal(want[i].Minute) || got[i].Outcome != want[i].Outcome || got[i].Count != want[i].Count {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		}
	}
	eq(series(automation.BusinessUnits("bu-a"), at(0), at(2)), []store.MetricsCountBucket{{Minute: at(0), Outcome: "accepted", Count: 5}, {Minute: at(1), Outcome: "duplicate", Count: 1}})
	eq(series(automation.AllBusinessUnits(), at(0), at(2)), []store.MetricsCountBucket{{Minute: at(0), Outcome: "accepted", Count: 10}, {Minute: at(0), Outcome: "rejected", Count: 1}, {Minute: at(1), Outcome: "duplicate", Count: 1}})
	eq(series(automation.AllBusinessUnits(), at(1), at(2)), []store.MetricsCountBucket{{Minute: at(1), Outcome: "duplicate", Count: 1}})
	eq(series(automation.Scope{}, at(0), at(2)), nil)
	if _, err := s.MetricsCountSeries(ctx, store.MetricsCountParams{Flow: store.FlowIngest, Since: at(0), Until: at(0).Add(25 * time.Hour)}); err == nil {
		t.Fatal("a window over MaxThroughputWindow: no error")
	}
	if _, err := s.MetricsCountSeries(ctx, store.MetricsCountParams{Since: at(0), Until: at(1)}); err == nil {
		t.Fatal("no flow: no error")
	}
	n, err := s.MetricsCountPurge(ctx, at(1), 2)
	if err != nil || n != 2 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	n, err = s.MetricsCountPurge(ctx, at(1), 100)
	if err != nil || n != 1 {
		t.Fatalf("purge the rest of minute 0: %d, %v", n, err)
	}
	eq(series(automation.AllBusinessUnits(), at(0), at(2)), []store.MetricsCountBucket{{Minute: at(1), Outcome: "duplicate", Count: 1}})
	// The purge took minute 0's flush ledger too: its ids are free again (they are random in
	// the sampler; a flush is never retried after the retention).
	if err := s.MetricsCountAdd(ctx, "flush-2", []store.MetricsCount{c(0, "bu-a", "order.paid", "accepted", 4)}); err != nil {
		t.Fatal(err)
	}
	eq(series(automation.BusinessUnits("bu-a"), at(0), at(1)), []store.MetricsCountBucket{{Minute: at(0), Outcome: "accepted", Count: 4}})
	// Minute 1's ledger is kept: its flush (the one at the columns' widths) still absorbs a
	// retry.
	if err := s.MetricsCountAdd(ctx, strings.Repeat("f", store.MaxMetricsCountFlushID), []store.MetricsCount{c(1, "bu-a", "order.paid", "duplicate", 1)}); err != nil {
		t.Fatal(err)
	}
	eq(series(automation.AllBusinessUnits(), at(1), at(2)), []store.MetricsCountBucket{{Minute: at(1), Outcome: "duplicate", Count: 1}})
}
