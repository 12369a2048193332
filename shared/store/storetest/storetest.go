package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Opener returns a fresh, empty, migrated store for one test; the suite closes it.
type Opener func(t *testing.T) store.Store

// T0 is the suite's reference instant (UTC, millisecond aligned).
var T0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// Run runs the whole suite.
func Run(t *testing.T, open Opener) {
	runCases(t, open, suiteCases)
}

func fresh(t *testing.T, open Opener) store.Store {
	t.Helper()
	s := open(t)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// raceWins runs call n times at once (i is the caller's index, 0..n-1) and returns how many
// calls won (returned true): the cases where many callers race for one thing that only one
// may get. A call's error fails t (naming the caller) and is not counted.
func raceWins(t *testing.T, n int, call func(i int) (bool, error)) int {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for i := range n {
		wg.Go(func() {
			won, err := call(i)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			if won {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return wins
}

// listed reads a list call's answer as one string, each row's name followed by sep, so a
// case compares a page's rows and their order at a glance; the call's error fails t.
func listed[T any](t *testing.T, sep string, name func(T) string) func(rows []T, err error) string {
	return func(rows []T, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(name(r))
			b.WriteString(sep)
		}
		return b.String()
	}
}

// freshClaimed opens a fresh store holding one candidate, Candidate(1, T0), ensured and
// claimed at T0 (a 5-minute lease): the start of every case about what follows a claim.
func freshClaimed(t *testing.T, open Opener) (store.Store, automation.Candidate, automation.SchedulerRow) {
	t.Helper()
	s := fresh(t, open)
	c := Candidate(1, T0)
	ensure1(t, s, T0, c)
	return s, c, claim(t, s, T0, 1)[0]
}

// Candidate returns a valid Pending candidate for key n, due at `due`.
func Candidate(n int, due time.Time) automation.Candidate {
	key := fmt.Sprintf("reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:Test:src-%d:expiresOn:2026-10-31:%d", n, n%3)
	return automation.Candidate{
		AutomationType: automation.TypeReminder, TriggerType: automation.TriggerDateBased,
		SchedulerKey: key, InputHash: automation.InputHash(map[string]string{"key": key}),
		SettingGuid:      "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f",
		SourceEntityType: "Test", SourceEntityGuid: fmt.Sprintf("src-%d", n), BusinessUnitID: "bu-1",
		ScheduledOn: due.UTC(), ScheduledLocalDate: due.Format("2006-01-02"), ScheduledLocalTime: due.Format("15:04"),
		TimeZoneID: "UTC",
	}
}

func ensure1(t *testing.T, s store.Store, now time.Time, c automation.Candidate) store.EnsureResult {
	t.Helper()
	res, err := s.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{c}})
	if err != nil {
		t.Fatalf("ensure %s: %v", c.SchedulerKey, err)
	}
	return res[0]
}

func claim(t *testing.T, s store.Store, now time.Time, limit int) []automation.SchedulerRow {
	t.Helper()
	rows, err := s.SchedulerClaimDue(context.Background(), store.SchedulerClaimDueParams{Now: now, Lease: 5 * time.Minute, Limit: limit})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return rows
}

func get(t *testing.T, s store.Store, key string) automation.SchedulerRow {
	t.Helper()
	r, err := s.SchedulerGetByKey(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return r
}

// putInStatus drives a fresh row for c into the wanted status through the public API.
func putInStatus(t *testing.T, s store.Store, c automation.Candidate, st automation.Status) automation.SchedulerRow {
	t.Helper()
	ctx := context.Background()
	ensure1(t, s, T0, c)
	if st == automation.StatusPending {
		return get(t, s, c.SchedulerKey)
	}
	rows := claim(t, s, c.ScheduledOn.Add(time.Second), 10)
	var r automation.SchedulerRow
	for _, x := range rows {
		if x.SchedulerKey == c.SchedulerKey {
			r = x
		}
	}
	if r.ID == 0 {
		t.Fatalf("could not claim %s", c.SchedulerKey)
	}
	now := c.ScheduledOn.Add(2 * time.Second)
	var err error
	switch st {
	case automation.StatusProcessing:
		return r
	case automation.StatusCompleted:
		err = s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: now, DispatchResultJSON: `{"jobs":1}`})
	case automation.StatusFailed:
		err = s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: now, FailureReasonCode: automation.ReasonHandlerError, Hold: true, TraceBlobName: "diag/x.json"})
	case automation.StatusDeactivated:
		err = s.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r.ID, Token: r.Version, Now: now, Reason: automation.ReasonSuperseded})
	case automation.StatusCancelled:
		t.Fatalf("Cancelled is reached through the support API, not here")
	}
	if err != nil {
		t.Fatalf("drive to %s: %v", st, err)
	}
	return get(t, s, c.SchedulerKey)
}

func testEnsureTable(t *testing.T, open Opener) {
	due := T0.Add(48 * time.Hour)
	later := due.Add(2 * time.Hour)
	cases := []struct {
		name       string
		status     automation.Status // "" = no row
		sameHash   bool
		newSched   bool
		missed     bool
		wantAction automation.EnsureAction
		wantStatus automation.Status
		wantHold   bool
	}{
		{"no row inserts Pending", "", true, false, false, automation.EnsureInserted, automation.StatusPending, false},
		{"no row, missed window, records Deactivated", "", true, false, true, automation.EnsureRecordedMissed, automation.StatusDeactivated, false},
		{"Pending same hash same schedule is unchanged", automation.StatusPending, true, false, false, automation.EnsureUnchanged, automation.StatusPending, false},
		{"Pending same hash new schedule updates in place", automation.StatusPending, true, true, false, automation.EnsureUpdated, automation.StatusPending, false},
		{"Failed same hash reactivates", automation.StatusFailed, true, false, false, automation.EnsureReactivated, automation.StatusPending, true},
		{"Deactivated same hash reactivates", automation.StatusDeactivated, true, false, false, automation.EnsureReactivated, automation.StatusPending, false},
		{"Deactivated, missed candidate stays Deactivated", automation.StatusDeactivated, true, false, true, automation.EnsureUnchanged, automation.StatusDeactivated, false},
		{"Completed returns coordinates, never resends", automation.StatusCompleted, true, true, false, automation.EnsureAlreadyCompleted, automation.StatusCompleted, false},
		{"Completed with other hash is still never resent", automation.StatusCompleted, false, false, false, automation.EnsureAlreadyCompleted, automation.StatusCompleted, false},
		{"Processing is left alone", automation.StatusProcessing, true, true, false, automation.EnsureInProgress, automation.StatusProcessing, false},
		{"Pending different hash: conflict, hold", automation.StatusPending, false, false, false, automation.EnsureConflict, automation.StatusPending, true},
		{"Deactivated different hash: conflict, hold", automation.StatusDeactivated, false, false, false, automation.EnsureConflict, automation.StatusDeactivated, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fresh(t, open)
			c := Candidate(i, due)
			var before automation.SchedulerRow
			if tc.status != "" {
				before = putInStatus(t, s, c, tc.status)
			}
			c2 := c
			if !tc.sameHash {
				c2.InputHash = automation.InputHash("other input")
			}
			if tc.newSched {
				c2.ScheduledOn = later
				c2.ScheduledLocalTime = later.Format("15:04")
			}
			if tc.missed {
				c2.MissedReason = automation.ReasonMissedWindow
			}
			res := ensure1(t, s, T0.Add(time.Hour), c2)
			if res.Action != tc.wantAction {
				t.Fatalf("action = %s, want %s", res.Action, tc.wantAction)
			}
			got := get(t, s, c.SchedulerKey)
			if got.Status != tc.wantStatus || got.IsOnSupportHold != tc.wantHold {
				t.Fatalf("row status=%s hold=%v, want %s hold=%v", got.Status, got.IsOnSupportHold, tc.wantStatus, tc.wantHold)
			}
			if got.Version != res.Row.Version || got.Status != res.Row.Status {
				t.Fatalf("result row (v%d %s) differs from stored (v%d %s)", res.Row.Version, res.Row.Status, got.Version, got.Status)
			}
			switch tc.wantAction {
			case automation.EnsureInserted, automation.EnsureRecordedMissed:
				if got.Version != 1 || got.Guid != store.RowGuid(c.SchedulerKey) {
					t.Fatalf("inserted row version=%d guid=%s", got.Version, got.Guid)
				}
				if tc.missed && got.ReasonCode != automation.ReasonMissedWindow {
					t.Fatalf("reason = %q, want MissedWindow", got.ReasonCode)
				}
			case automation.EnsureUnchanged, automation.EnsureAlreadyCompleted, automation.EnsureInProgress:
				if got.Version != before.Version || !got.ScheduledOn.Equal(before.ScheduledOn) {
					t.Fatalf("row changed: v%d→v%d scheduled %s→%s", before.Version, got.Version, before.ScheduledOn, got.ScheduledOn)
				}
				if tc.wantAction == automation.EnsureAlreadyCompleted && got.DispatchResultJSON != `{"jobs":1}` {
					t.Fatalf("coordinates lost: %q", got.DispatchResultJSON)
				}
			case automation.EnsureUpdated:
				if !got.ScheduledOn.Equal(later) || got.Version != before.Version+1 || got.ID != before.ID {
					t.Fatalf("update in place: scheduled %s v%d id %d", got.ScheduledOn, got.Version, got.ID)
				}
			case automation.EnsureReactivated:
				if got.ReasonCode != "" || got.Version != before.Version+1 || got.RetryCount != before.RetryCount ||
					got.TraceBlobName != before.TraceBlobName || got.FailureReasonCode != before.FailureReasonCode {
					t.Fatalf("reactivate must keep attempts and diagnostics: before %+v after %+v", before, got)
				}
			case automation.EnsureConflict:
				if got.InputHash != c.InputHash || got.ConflictInputHash != c2.InputHash ||
					got.FailureReasonCode != automation.ReasonInputHashConflict || !got.ScheduledOn.Equal(before.ScheduledOn) {
					t.Fatalf("conflict must record both hashes and overwrite nothing: %+v", got)
				}
				// The same conflict again changes nothing more.
				again := ensure1(t, s, T0.Add(2*time.Hour), c2)
				if again.Action != automation.EnsureUnchanged || get(t, s, c.SchedulerKey).Version != got.Version {
					t.Fatalf("repeated conflict: action %s", again.Action)
				}
				if rows := claim(t, s, later.Add(time.Hour), 10); len(rows) != 0 {
					t.Fatalf("a held row was claimed")
				}
			}
		})
	}
}

func testEnsureIdempotent(t *testing.T, open Opener) {
	s := fresh(t, open)
	var cs []automation.Candidate
	for i := 0; i < 50; i++ {
		cs = append(cs, Candidate(i, T0.Add(time.Duration(i)*time.Minute)))
	}
	for round := 0; round < 3; round++ {
		res, err := s.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: T0, Candidates: cs})
		if err != nil {
			t.Fatal(err)
		}
		want := automation.EnsureInserted
		if round > 0 {
			want = automation.EnsureUnchanged
		}
		for _, r := range res {
			if r.Action != want || r.Row.Version != 1 {
				t.Fatalf("round %d: %s v%d, want %s v1", round, r.Action, r.Row.Version, want)
			}
		}
	}
	counts, err := s.SchedulerCountByStatus(context.Background())
	if err != nil || counts[automation.StatusPending] != 50 {
		t.Fatalf("counts %v %v", counts, err)
	}
}

func testEnsureBadBatch(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	c := Candidate(1, T0)
	bad := c
	bad.InputHash = ""
	for name, cs := range map[string][]automation.Candidate{
		"duplicate key": {c, c},
		"missing hash":  {Candidate(2, T0), bad},
	} {
		if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: T0, Candidates: cs}); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
	counts, _ := s.SchedulerCountByStatus(ctx)
	if counts[automation.StatusPending] != 0 {
		t.Fatalf("a rejected batch stored rows: %v", counts)
	}
	too := make([]automation.Candidate, store.MaxBatch+1)
	if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: T0, Candidates: too}); err == nil {
		t.Fatal("oversized batch accepted")
	}
	if _, err := s.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: T0, Lease: time.Minute, Limit: store.MaxBatch + 1}); err == nil {
		t.Fatal("oversized claim accepted")
	}
}

func testClaimDue(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	ensure1(t, s, T0, Candidate(1, T0.Add(10*time.Minute)))
	ensure1(t, s, T0, Candidate(2, T0.Add(5*time.Minute)))
	ensure1(t, s, T0, Candidate(3, T0.Add(time.Hour)))
	if rows := claim(t, s, T0.Add(4*time.Minute), 10); len(rows) != 0 {
		t.Fatalf("claimed %d rows before they were due", len(rows))
	}
	rows := claim(t, s, T0.Add(10*time.Minute), 10)
	if len(rows) != 2 || rows[0].SourceEntityGuid != "src-2" || rows[1].SourceEntityGuid != "src-1" {
		t.Fatalf("want src-2 then src-1 (oldest ScheduledOn first), got %v", keys(rows))
	}
	for _, r := range rows {
		if r.Status != automation.StatusProcessing || r.Version != 2 || r.ProcessingLeaseExpiresOn == nil ||
			!r.ProcessingLeaseExpiresOn.Equal(T0.Add(15*time.Minute)) {
			t.Fatalf("claimed row: %+v", r)
		}
	}
	// Retry time: a failed attempt with NextRetryOn in the future is not claimable until then.
	r := rows[0]
	next := T0.Add(30 * time.Minute)
	if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: T0.Add(11 * time.Minute), FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: next}); err != nil {
		t.Fatal(err)
	}
	if rows := claim(t, s, next.Add(-time.Millisecond), 10); len(rows) != 0 {
		t.Fatalf("claimed before NextRetryOn: %v", keys(rows))
	}
	if rows := claim(t, s, next, 10); len(rows) != 1 || rows[0].ID != r.ID || rows[0].RetryCount != 1 {
		t.Fatalf("retry claim: %v", keys(rows))
	}
	// Limit bounds the batch.
	for i := 10; i < 20; i++ {
		ensure1(t, s, T0, Candidate(i, T0))
	}
	if rows := claim(t, s, T0.Add(2*time.Hour), 4); len(rows) != 4 {
		t.Fatalf("limit 4 claimed %d", len(rows))
	}
}

func keys(rows []automation.SchedulerRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.SourceEntityGuid)
	}
	return out
}

func testClaimConcurrent(t *testing.T, open Opener) {
	s := fresh(t, open)
	const n = 300
	var cs []automation.Candidate
	for i := 0; i < n; i++ {
		cs = append(cs, Candidate(i, T0))
	}
	if _, err := s.SchedulerEnsure(context.Background(), store.SchedulerEnsureParams{Now: T0, Candidates: cs}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				rows, err := s.SchedulerClaimDue(context.Background(), store.SchedulerClaimDueParams{Now: T0.Add(time.Minute), Lease: time.Minute, Limit: 7})
				if err != nil {
					errs <- err
					return
				}
				if len(rows) == 0 {
					return
				}
				mu.Lock()
				for _, r := range rows {
					seen[r.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("claimed %d distinct rows, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("row %d claimed %d times", id, c)
		}
	}
}

func testStaleToken(t *testing.T, open Opener) {
	s, c, first := freshClaimed(t, open)
	ctx := context.Background()
	// The first worker's lease expires; the row is rescued and re-claimed by a second worker.
	after := T0.Add(6 * time.Minute)
	expired, err := s.SchedulerListExpiredLeases(ctx, store.SchedulerListParams{Now: after, Limit: 10})
	if err != nil || len(expired) != 1 {
		t.Fatalf("expired leases: %v %v", expired, err)
	}
	if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: expired[0].ID, Token: expired[0].Version, Now: after, FailureReasonCode: automation.ReasonLeaseExpired, NextRetryOn: after}); err != nil {
		t.Fatal(err)
	}
	second := claim(t, s, after, 1)[0]
	if second.Version <= first.Version {
		t.Fatalf("versions: first %d second %d", first.Version, second.Version)
	}
	// The first worker wakes up and tries every write with its stale token.
	checks := map[string]error{
		"complete": s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: first.ID, Token: first.Version, Now: after,
			Deliveries: []store.NotificationRequest{{DeliveryKey: "dk-stale", SchedulerKey: c.SchedulerKey, BusinessUnitID: "bu-1", Channel: "log", Recipient: "a@example.test", Template: "t", PayloadJSON: "{}"}},
			Outbox:     []store.OutboxMessage{{MessageID: "m-stale", Destination: "q", Body: []byte("x")}}}),
		"fail":       s.SchedulerFail(ctx, store.SchedulerFailParams{ID: first.ID, Token: first.Version, Now: after, FailureReasonCode: automation.ReasonHandlerError, Hold: true}),
		"deactivate": s.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: first.ID, Token: first.Version, Now: after, Reason: automation.ReasonSuperseded}),
	}
	for name, err := range checks {
		if !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("%s with stale token: err = %v, want ErrLeaseLost", name, err)
		}
	}
	if _, err := s.NotificationGetByKey(ctx, "dk-stale"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a rejected completion left a NotificationJob: %v", err)
	}
	if msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); len(msgs) != 0 {
		t.Fatalf("a rejected completion left outbox rows: %d", len(msgs))
	}
	// The second worker's token still works.
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: second.ID, Token: second.Version, Now: after}); err != nil {
		t.Fatalf("current token: %v", err)
	}
	if got := get(t, s, c.SchedulerKey); got.Status != automation.StatusCompleted || got.RetryCount != 1 {
		t.Fatalf("final row %s retry %d", got.Status, got.RetryCount)
	}
}

func testExpiredLease(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	ensure1(t, s, T0, Candidate(1, T0))
	r := claim(t, s, T0, 1)[0]
	// A live lease is not listed and the row is not claimable.
	if rows, _ := s.SchedulerListExpiredLeases(ctx, store.SchedulerListParams{Now: T0.Add(5*time.Minute - time.Millisecond), Limit: 10}); len(rows) != 0 {
		t.Fatal("live lease listed as expired")
	}
	if rows := claim(t, s, T0.Add(time.Minute), 10); len(rows) != 0 {
		t.Fatal("processing row claimed again")
	}
	rows, err := s.SchedulerListExpiredLeases(ctx, store.SchedulerListParams{Now: T0.Add(5 * time.Minute), Limit: 10})
	if err != nil || len(rows) != 1 || rows[0].Version != r.Version {
		t.Fatalf("expired: %v %v", rows, err)
	}
	// Two rescuers race with the same read: exactly one wins.
	p := store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: T0.Add(5 * time.Minute), FailureReasonCode: automation.ReasonLeaseExpired, NextRetryOn: T0.Add(10 * time.Minute)}
	err1, err2 := s.SchedulerFail(ctx, p), s.SchedulerFail(ctx, p)
	if err1 != nil || !errors.Is(err2, store.ErrLeaseLost) {
		t.Fatalf("rescue race: %v / %v", err1, err2)
	}
	got := get(t, s, r.SchedulerKey)
	if got.Status != automation.StatusPending || got.RetryCount != 1 || got.ProcessingLeaseExpiresOn != nil {
		t.Fatalf("rescued row: %+v", got)
	}
	if rows := claim(t, s, T0.Add(10*time.Minute), 1); len(rows) != 1 {
		t.Fatal("rescued row not reclaimable after backoff")
	}
}

func testVersionBumps(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	c := Candidate(1, T0)
	v := ensure1(t, s, T0, c).Row.Version
	step := func(name string, want int64) {
		t.Helper()
		if got := get(t, s, c.SchedulerKey).Version; got != want {
			t.Fatalf("after %s: version %d, want %d", name, got, want)
		}
	}
	c.ScheduledOn = T0.Add(time.Minute)
	ensure1(t, s, T0, c)
	step("update", v+1)
	r := claim(t, s, T0.Add(time.Minute), 1)[0]
	step("claim", v+2)
	if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: T0, FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: T0}); err != nil {
		t.Fatal(err)
	}
	step("fail", v+3)
	r = claim(t, s, T0.Add(time.Minute), 1)[0]
	step("claim again", v+4)
	if err := s.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r.ID, Token: r.Version, Now: T0, Reason: automation.ReasonTooLate}); err != nil {
		t.Fatal(err)
	}
	step("deactivate", v+5)
	ensure1(t, s, T0, c)
	step("reactivate", v+6)
	c.InputHash = "different"
	ensure1(t, s, T0, c)
	step("conflict hold", v+7)
}

func testCompleteAtomic(t *testing.T, open Opener) {
	s, c, r := freshClaimed(t, open)
	ctx := context.Background()
	follow := Candidate(2, T0.AddDate(1, 0, 0))
	req := store.NotificationRequest{DeliveryKey: "dk-1", SchedulerKey: c.SchedulerKey, BusinessUnitID: "bu-1", Channel: "log", Recipient: "a@example.test", Template: "t", PayloadJSON: `{"a":1}`}
	msg := store.OutboxMessage{MessageID: "dispatch:dk-1", Destination: "notification-dispatch", SessionID: "s", Body: []byte(`{"deliveryKey":"dk-1"}`)}
	// A follow-up that fails validation rolls the whole completion back.
	bad := follow
	bad.InputHash = ""
	err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0, Deliveries: []store.NotificationRequest{req}, Outbox: []store.OutboxMessage{msg}, FollowUps: []automation.Candidate{bad, bad}})
	if err == nil {
		t.Fatal("a completion with invalid follow-ups was accepted")
	}
	{
		if got := get(t, s, c.SchedulerKey); got.Status != automation.StatusProcessing || got.Version != r.Version {
			t.Fatalf("failed completion changed the row: %+v", got)
		}
		if _, err := s.NotificationGetByKey(ctx, "dk-1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("failed completion left a job: %v", err)
		}
		if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0, DispatchResultJSON: `{"deliveryKeys":["dk-1"]}`,
			Deliveries: []store.NotificationRequest{req}, Outbox: []store.OutboxMessage{msg}, FollowUps: []automation.Candidate{follow}}); err != nil {
			t.Fatal(err)
		}
	}
	got := get(t, s, c.SchedulerKey)
	if got.Status != automation.StatusCompleted || got.CompletedOn == nil || got.ProcessingLeaseExpiresOn != nil {
		t.Fatalf("completed row: %+v", got)
	}
	job, err := s.NotificationGetByKey(ctx, "dk-1")
	if err != nil || job.Status != store.NotificationQueued || job.PayloadJSON != `{"a":1}` || job.Version != 1 {
		t.Fatalf("job: %+v %v", job, err)
	}
	msgs, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if err != nil || len(msgs) != 1 || msgs[0].MessageID != "dispatch:dk-1" || string(msgs[0].Body) != `{"deliveryKey":"dk-1"}` || msgs[0].SessionID != "s" {
		t.Fatalf("outbox: %+v %v", msgs, err)
	}
	if f := get(t, s, follow.SchedulerKey); f.Status != automation.StatusPending {
		t.Fatalf("follow-up: %+v", f)
	}
}

func testCompleteBatch(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		ensure1(t, s, T0, Candidate(i, T0))
	}
	rows := claim(t, s, T0, 10)
	if len(rows) != 3 {
		t.Fatalf("claimed %d", len(rows))
	}
	item := func(r automation.SchedulerRow, token int64) store.SchedulerCompleteParams {
		dk := "dk-" + r.SourceEntityGuid
		return store.SchedulerCompleteParams{ID: r.ID, Token: token, Now: T0,
			Deliveries: []store.NotificationRequest{{DeliveryKey: dk, SchedulerKey: r.SchedulerKey, BusinessUnitID: "bu-1", Channel: "log", Recipient: "a@example.test", Template: "t", PayloadJSON: "{}"}},
			Outbox:     []store.OutboxMessage{{MessageID: dk, Destination: "q", Body: []byte(dk)}}}
	}
	items := []store.SchedulerCompleteParams{item(rows[0], rows[0].Version), item(rows[1], rows[1].Version-1), item(rows[2], rows[2].Version)}
	errs, err := s.SchedulerCompleteBatch(ctx, items)
	if err != nil || len(errs) != 3 || errs[0] != nil || !errors.Is(errs[1], store.ErrLeaseLost) || errs[2] != nil {
		t.Fatalf("batch: %v %v", errs, err)
	}
	for i, want := range []automation.Status{automation.StatusCompleted, automation.StatusProcessing, automation.StatusCompleted} {
		if got := get(t, s, rows[i].SchedulerKey); got.Status != want {
			t.Fatalf("row %d: %s, want %s", i, got.Status, want)
		}
	}
	if _, err := s.NotificationGetByKey(ctx, "dk-"+rows[1].SourceEntityGuid); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the stale item wrote its delivery: %v", err)
	}
	if msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); len(msgs) != 2 {
		t.Fatalf("outbox has %d, want 2", len(msgs))
	}
	// An invalid follow-up rejects the whole batch before anything is written.
	bad := item(rows[1], rows[1].Version)
	bad.FollowUps = []automation.Candidate{{SchedulerKey: "x"}}
	if _, err := s.SchedulerCompleteBatch(ctx, []store.SchedulerCompleteParams{bad}); err == nil {
		t.Fatal("invalid follow-up accepted")
	}
	if got := get(t, s, rows[1].SchedulerKey); got.Status != automation.StatusProcessing {
		t.Fatalf("rejected batch changed the row: %s", got.Status)
	}
	if _, err := s.SchedulerCompleteBatch(ctx, nil); err == nil {
		t.Fatal("empty batch accepted")
	}
	testCompleteBatchSharedDelivery(t, open)
	testEffectOncePerUnitAcrossBatches(t, open)
}

// testEffectOncePerUnitAcrossBatches: one effect has one job per business unit
// (docs/architecture.md#commands) when the jobs come in different completions, whichever
// came first: a job whose effect is its own delivery key, and another job whose effect is
// that key; two jobs whose effect is a third key. Another unit may have the same effect.
func testEffectOncePerUnitAcrossBatches(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	const n = 8
	for i := 0; i < n; i++ {
		ensure1(t, s, T0, Candidate(i, T0))
	}
	rows := claim(t, s, T0, n)
	if len(rows) != n {
		t.Fatalf("claimed %d rows, want %d", len(rows), n)
	}
	complete := func(r automation.SchedulerRow, bu, dk, effect string) {
		t.Helper()
		d := store.NotificationRequest{DeliveryKey: dk, EffectKey: effect, SchedulerKey: r.SchedulerKey, BusinessUnitID: bu, Channel: "log",
			Recipient: dk + "@example.test", Template: "t", PayloadJSON: "{}"}
		errs, err := s.SchedulerCompleteBatch(ctx, []store.SchedulerCompleteParams{{ID: r.ID, Token: r.Version, Now: T0, Deliveries: []store.NotificationRequest{d}}})
		if err != nil || errs[0] != nil {
			t.Fatalf("complete %s: %v %v", dk, errs, err)
		}
	}
	has := func(dk string) bool {
		t.Helper()
		_, err := s.NotificationGetByKey(ctx, dk)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	// The job whose effect is its own key first, then another job with that effect.
	complete(rows[0], "bu-1", "dk-x", "")
	complete(rows[1], "bu-1", "dk-y", "dk-x")
	// The other order.
	complete(rows[2], "bu-1", "dk-q", "dk-p")
	complete(rows[3], "bu-1", "dk-p", "dk-p")
	// Two jobs whose effect is a third key.
	complete(rows[4], "bu-1", "dk-m", "effect-z")
	complete(rows[5], "bu-1", "dk-n", "effect-z")
	// Another unit: the same effect is its own.
	complete(rows[6], "bu-2", "dk-x2", "dk-x")
	complete(rows[7], "bu-2", "dk-m2", "effect-z")
	for dk, want := range map[string]bool{"dk-x": true, "dk-y": false, "dk-q": true, "dk-p": false, "dk-m": true, "dk-n": false, "dk-x2": true, "dk-m2": true} {
		if got := has(dk); got != want {
			t.Errorf("job %s written: %v, want %v", dk, got, want)
		}
	}
}

// testCompleteBatchSharedDelivery: two items of one batch asking for the same delivery key,
// or the same effect under another key, complete both rows and keep the first item's job -
// what writing them one by one did (the second insert is a no-op) - never a duplicate-key
// error for the whole batch.
func testCompleteBatchSharedDelivery(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		ensure1(t, s, T0, Candidate(i, T0))
	}
	rows := claim(t, s, T0, 10)
	req := func(r automation.SchedulerRow, dk, effect, recipient string) store.SchedulerCompleteParams {
		return store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0,
			Deliveries: []store.NotificationRequest{{DeliveryKey: dk, EffectKey: effect, SchedulerKey: r.SchedulerKey, BusinessUnitID: "bu-1", Channel: "log", Recipient: recipient, Template: "t", PayloadJSON: "{}"}}}
	}
	items := []store.SchedulerCompleteParams{req(rows[0], "dk-same", "", "first@example.test"), req(rows[1], "dk-same", "", "second@example.test"),
		req(rows[2], "dk-other", "dk-same", "third@example.test")}
	// Outbox messages: any bytes survive, and a MessageId repeated in the batch keeps the first.
	first := []byte{0x00, 0xff, 0xfe, '{', 0x80}
	items[0].Outbox = []store.OutboxMessage{{MessageID: "m-same", Destination: "q", Body: first}, {MessageID: "m-empty", Destination: "q", SessionID: "s", Body: []byte{}}}
	items[2].Outbox = []store.OutboxMessage{{MessageID: "m-same", Destination: "q2", Body: []byte("second")}}
	errs, err := s.SchedulerCompleteBatch(ctx, items)
	if err != nil || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("batch: %v %v", errs, err)
	}
	for _, r := range rows {
		if got := get(t, s, r.SchedulerKey); got.Status != automation.StatusCompleted {
			t.Fatalf("row %s: %s", r.SchedulerKey, got.Status)
		}
	}
	if job, err := s.NotificationGetByKey(ctx, "dk-same"); err != nil || job.Recipient != "first@example.test" {
		t.Fatalf("shared delivery key: %+v %v", job, err)
	}
	if _, err := s.NotificationGetByKey(ctx, "dk-other"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a second job for one effect was written: %v", err)
	}
	msgs, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if err != nil || len(msgs) != 2 || msgs[0].MessageID != "m-same" || msgs[0].Destination != "q" || !bytes.Equal(msgs[0].Body, first) ||
		msgs[1].MessageID != "m-empty" || len(msgs[1].Body) != 0 || msgs[1].SessionID != "s" || msgs[0].SessionID != "" {
		t.Fatalf("outbox: %+v %v", msgs, err)
	}
}

// testCompleteBatchMixed: a batch of 254 items, more than one statement's rows (a store
// that completes them set-based splits them into several statements and a shorter last
// one), mixing fresh tokens, stale ones, a row already Completed (by its old token and by
// its current Version), a Pending row, an item repeated with the same token, and a row whose
// stale copy comes first and whose fresh copy comes last. Each item gets what it would get
// completed alone, in order: the completed rows carry their own item's DispatchResultJson,
// CompletedOn and Version+1; every other item gets ErrLeaseLost, leaves its row as it was
// and writes no delivery, outbox message or follow-up; the hand-off keeps item order.
func testCompleteBatchMixed(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	const n = 250
	cands := make([]automation.Candidate, 0, n+1)
	for i := 0; i < n; i++ {
		cands = append(cands, Candidate(i, T0))
	}
	pendingCand := Candidate(n, T0.Add(time.Hour)) // not yet due: stays Pending
	cands = append(cands, pendingCand)
	if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: T0, Candidates: cands}); err != nil {
		t.Fatal(err)
	}
	rows := claim(t, s, T0, store.MaxBatch)
	if len(rows) != n {
		t.Fatalf("claimed %d, want %d", len(rows), n)
	}
	pending := get(t, s, pendingCand.SchedulerKey)
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: rows[0].ID, Token: rows[0].Version, Now: T0, DispatchResultJSON: `{"before":1}`}); err != nil {
		t.Fatal(err)
	}
	completed := get(t, s, rows[0].SchedulerKey)

	var items []store.SchedulerCompleteParams
	var wantOK []bool
	add := func(r automation.SchedulerRow, token int64, ok bool) {
		i := len(items)
		tag := fmt.Sprintf("item-%d", i)
		items = append(items, store.SchedulerCompleteParams{ID: r.ID, Token: token, Now: T0.Add(time.Duration(i+1) * time.Second),
			DispatchResultJSON: fmt.Sprintf(`{"item":%d}`, i),
			Deliveries: []store.NotificationRequest{{DeliveryKey: "dk-" + tag, SchedulerKey: r.SchedulerKey, BusinessUnitID: "bu-1",
				Channel: "log", Recipient: "a@example.test", Template: "t", PayloadJSON: "{}"}},
			Outbox:    []store.OutboxMessage{{MessageID: "m-" + tag, Destination: "q", Body: []byte(tag)}},
			FollowUps: []automation.Candidate{Candidate(10_000+i, T0.Add(48*time.Hour))}})
		wantOK = append(wantOK, ok)
	}
	add(rows[0], completed.Version, false) // Completed: the Version matches, the Status does not
	add(rows[0], rows[0].Version, false)   // Completed, by the token it was claimed with
	add(pending, pending.Version, false)   // Pending, never claimed
	add(rows[7], rows[7].Version-1, false) // stale; its fresh copy comes last
	for i := 1; i < n; i++ {
		switch {
		case i == 7:
		case i%9 == 0:
			add(rows[i], rows[i].Version-1, false) // stale
		default:
			add(rows[i], rows[i].Version, true)
		}
		if i == 5 {
			add(rows[5], rows[5].Version, false) // the same item again: its token is now stale
		}
	}
	add(rows[7], rows[7].Version, true)

	errs, err := s.SchedulerCompleteBatch(ctx, items)
	if err != nil || len(errs) != len(items) {
		t.Fatalf("batch: %d errors for %d items, %v", len(errs), len(items), err)
	}
	byID := map[int64]int{} // row Id -> the item that completed it
	var okTags []string
	for i, ok := range wantOK {
		if ok {
			if errs[i] != nil {
				t.Errorf("item %d (row %d token %d): %v, want nil", i, items[i].ID, items[i].Token, errs[i])
			}
			byID[items[i].ID] = i
			okTags = append(okTags, fmt.Sprintf("item-%d", i))
		} else if !errors.Is(errs[i], store.ErrLeaseLost) {
			t.Errorf("item %d (row %d token %d): %v, want ErrLeaseLost", i, items[i].ID, items[i].Token, errs[i])
		}
	}
	for _, before := range append(rows, pending) {
		got := get(t, s, before.SchedulerKey)
		i, ok := byID[before.ID]
		switch {
		case ok:
			p := items[i]
			if got.Status != automation.StatusCompleted || got.Version != p.Token+1 || got.DispatchResultJSON != p.DispatchResultJSON ||
				got.CompletedOn == nil || !got.CompletedOn.Equal(p.Now) || got.ProcessingLeaseExpiresOn != nil {
				t.Errorf("row %d completed by item %d: %s v%d %q %v lease %v", before.ID, i, got.Status, got.Version, got.DispatchResultJSON, got.CompletedOn, got.ProcessingLeaseExpiresOn)
			}
		case before.ID == rows[0].ID:
			if got.Status != automation.StatusCompleted || got.Version != completed.Version || got.DispatchResultJSON != `{"before":1}` || !got.CompletedOn.Equal(T0) {
				t.Errorf("the completed row changed: %s v%d %q %v", got.Status, got.Version, got.DispatchResultJSON, got.CompletedOn)
			}
		default:
			if got.Status != before.Status || got.Version != before.Version || got.DispatchResultJSON != "" || got.CompletedOn != nil {
				t.Errorf("row %d, not completed, changed: %s v%d %q %v; was %s v%d", before.ID, got.Status, got.Version, got.DispatchResultJSON, got.CompletedOn, before.Status, before.Version)
			}
		}
	}
	var lastJob int64
	for i, p := range items {
		job, err := s.NotificationGetByKey(ctx, p.Deliveries[0].DeliveryKey)
		if wantOK[i] {
			if err != nil || job.ID <= lastJob {
				t.Errorf("item %d: job %+v %v (after job %d)", i, job, err, lastJob)
			}
			lastJob = job.ID
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("item %d, not completed, wrote its delivery: %v", i, err)
		}
		f, err := s.SchedulerGetByKey(ctx, p.FollowUps[0].SchedulerKey)
		if wantOK[i] && (err != nil || f.Status != automation.StatusPending) {
			t.Errorf("item %d: follow-up %s %v", i, f.Status, err)
		} else if !wantOK[i] && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("item %d, not completed, wrote its follow-up: %v", i, err)
		}
	}
	msgs, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: store.MaxBatch})
	if err != nil || len(msgs) != len(okTags) {
		t.Fatalf("outbox: %d messages, want %d: %v", len(msgs), len(okTags), err)
	}
	for i, m := range msgs {
		if m.MessageID != "m-"+okTags[i] {
			t.Fatalf("outbox message %d is %s, want m-%s (item order)", i, m.MessageID, okTags[i])
		}
	}
}

func testFail(t *testing.T, open Opener) {
	s, c, r := freshClaimed(t, open)
	ctx := context.Background()
	if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: T0, FailureReasonCode: automation.ReasonHandlerError}); err == nil {
		t.Fatal("fail without NextRetryOn or Hold accepted")
	}
	if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: T0, FailureReasonCode: automation.ReasonRetriesExhausted, Hold: true, TraceBlobName: "diag/1.json"}); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, c.SchedulerKey)
	if got.Status != automation.StatusFailed || !got.IsOnSupportHold || got.TraceBlobName != "diag/1.json" || got.NextRetryOn != nil || got.RetryCount != 1 {
		t.Fatalf("held row: %+v", got)
	}
	if rows := claim(t, s, T0.Add(48*time.Hour), 10); len(rows) != 0 {
		t.Fatal("held row claimed")
	}
}

func testNextWakeUp(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if w, err := s.SchedulerNextWakeUp(ctx); err != nil || w != nil {
		t.Fatalf("empty store wake-up: %v %v", w, err)
	}
	ensure1(t, s, T0, Candidate(1, T0.Add(time.Hour)))
	ensure1(t, s, T0, Candidate(2, T0.Add(2*time.Hour)))
	w, err := s.SchedulerNextWakeUp(ctx)
	if err != nil || w == nil || !w.Equal(T0.Add(time.Hour)) {
		t.Fatalf("wake-up %v %v", w, err)
	}
	r := claim(t, s, T0.Add(time.Hour), 1)[0] // lease until +1h05
	if err := s.SchedulerFail(ctx, store.SchedulerFailParams{ID: r.ID, Token: r.Version, Now: T0.Add(time.Hour), FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: T0.Add(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if w, _ := s.SchedulerNextWakeUp(ctx); w == nil || !w.Equal(T0.Add(2*time.Hour)) {
		t.Fatalf("wake-up must honour NextRetryOn: %v", w)
	}
	claim(t, s, T0.Add(2*time.Hour), 1) // src-2 processing, lease until 2h05
	if w, _ := s.SchedulerNextWakeUp(ctx); w == nil || !w.Equal(T0.Add(2*time.Hour+5*time.Minute)) {
		t.Fatalf("wake-up must include lease expiry: %v", w)
	}
	counts, err := s.SchedulerCountByStatus(ctx)
	if err != nil || counts[automation.StatusPending] != 1 || counts[automation.StatusProcessing] != 1 || counts[automation.StatusCompleted] != 0 || len(counts) != len(automation.AllStatuses) {
		t.Fatalf("counts: %v %v", counts, err)
	}
}

func testSendClaim(t *testing.T, open Opener) {
	s, c, r := freshClaimed(t, open)
	ctx := context.Background()
	req := store.NotificationRequest{DeliveryKey: "dk-1", SchedulerKey: c.SchedulerKey, BusinessUnitID: "bu-1", Channel: "log", Recipient: "a@example.test", Template: "t", PayloadJSON: "{}"}
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0, Deliveries: []store.NotificationRequest{req, req}}); err != nil {
		t.Fatalf("duplicate delivery key in one completion must be a no-op: %v", err)
	}
	if _, err := s.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: "nope", Now: T0, Lease: time.Minute}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	unsent, err := s.NotificationListUnsent(ctx, 0, 10)
	if err != nil || len(unsent) != 1 || unsent[0].DeliveryKey != "dk-1" {
		t.Fatalf("unsent: %+v %v", unsent, err)
	}
	if more, _ := s.NotificationListUnsent(ctx, unsent[0].ID, 10); len(more) != 0 {
		t.Fatal("cursor not honoured")
	}
	a, err := s.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: "dk-1", Now: T0, Lease: time.Minute})
	if err != nil || !a.Claimed || a.Job.Status != store.NotificationSending || a.Job.AttemptCount != 1 {
		t.Fatalf("first claim: %+v %v", a, err)
	}
	b, err := s.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: "dk-1", Now: T0.Add(30 * time.Second), Lease: time.Minute})
	if err != nil || b.Claimed {
		t.Fatalf("second claim under a live lease must not claim: %+v %v", b, err)
	}
	// Lease expires: a second sender claims; the first one's finish is rejected.
	c2, err := s.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: "dk-1", Now: T0.Add(time.Minute), Lease: time.Minute})
	if err != nil || !c2.Claimed || c2.Job.AttemptCount != 2 {
		t.Fatalf("claim after expiry: %+v %v", c2, err)
	}
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: a.Job.ID, Token: a.Job.Version, Now: T0, Status: store.NotificationSent}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale finish: %v", err)
	}
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c2.Job.ID, Token: c2.Job.Version, Now: T0.Add(time.Minute), Status: store.NotificationSent, ProviderReference: "ref-1"}); err != nil {
		t.Fatal(err)
	}
	if unsent, err := s.NotificationListUnsent(ctx, 0, 10); err != nil || len(unsent) != 0 {
		t.Fatalf("a sent job is not unsent: %+v %v", unsent, err)
	}
	d, err := s.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: "dk-1", Now: T0.Add(time.Hour), Lease: time.Minute})
	if err != nil || d.Claimed || d.Job.Status != store.NotificationSent || d.Job.ProviderReference != "ref-1" || d.Job.SentOn == nil {
		t.Fatalf("claim after sent: %+v %v", d, err)
	}
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: d.Job.ID, Token: d.Job.Version, Now: T0, Status: store.NotificationQueued}); err == nil {
		t.Fatal("finish with a non-final status accepted")
	}
	// Its facts never reached the projection: the job is behind until its current fact is
	// applied; an older revision applied does not catch it up.
	behind, err := s.NotificationListProjectionBehind(ctx, 0, 10)
	if err != nil || len(behind) != 1 || behind[0].DeliveryKey != "dk-1" || behind[0].Status != store.NotificationSent {
		t.Fatalf("projection behind: %+v %v", behind, err)
	}
	if more, _ := s.NotificationListProjectionBehind(ctx, behind[0].ID, 10); len(more) != 0 {
		t.Fatal("projection behind: cursor not honoured")
	}
	j := behind[0]
	fact := func(rev int64, st store.NotificationStatus) store.DeliveryFact {
		return store.DeliveryFact{EventID: store.FactEventID(j.DeliveryKey, rev), CommandID: j.DeliveryKey, EffectKey: j.EffectKey, BusinessUnitID: j.BusinessUnitID,
			Channel: j.Channel, LocalDate: j.LocalDate, Status: st, Revision: rev, OccurredOn: T0}
	}
	if _, err := s.DeliveryFactApply(ctx, []store.DeliveryFact{fact(j.Revision-1, store.NotificationSending)}, T0); err != nil {
		t.Fatal(err)
	}
	if behind, _ := s.NotificationListProjectionBehind(ctx, 0, 10); len(behind) != 1 {
		t.Fatalf("an older revision projected: still behind, got %+v", behind)
	}
	if _, err := s.DeliveryFactApply(ctx, []store.DeliveryFact{fact(j.Revision, j.Status)}, T0); err != nil {
		t.Fatal(err)
	}
	if behind, err := s.NotificationListProjectionBehind(ctx, 0, 10); err != nil || len(behind) != 0 {
		t.Fatalf("projected at the job's revision: not behind, got %+v %v", behind, err)
	}
}

func testOutbox(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	ensure1(t, s, T0, Candidate(1, T0))
	r := claim(t, s, T0, 1)[0]
	var msgs []store.OutboxMessage
	for i := 0; i < 5; i++ {
		msgs = append(msgs, store.OutboxMessage{MessageID: fmt.Sprintf("m-%d", i), Destination: "q", Body: []byte{byte(i)}})
	}
	msgs = append(msgs, msgs[0]) // the same message id twice is stored once
	if err := s.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0, Outbox: msgs}); err != nil {
		t.Fatal(err)
	}
	got, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 3})
	if err != nil || len(got) != 3 || got[0].MessageID != "m-0" || got[2].MessageID != "m-2" {
		t.Fatalf("list: %+v %v", got, err)
	}
	if err := s.OutboxRecordAttempt(ctx, got[0].ID, T0); err != nil {
		t.Fatal(err)
	}
	if err := s.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: []int64{got[0].ID, got[1].ID}, Now: T0}); err != nil {
		t.Fatal(err)
	}
	rest, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if len(rest) != 3 || rest[0].MessageID != "m-2" {
		t.Fatalf("after publish: %+v", rest)
	}
	if _, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 0}); err == nil {
		t.Fatal("limit 0 accepted")
	}
}

func testSnapshots(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	snap := func(rev int64, id, data string) store.SourceSnapshot {
		return store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: "e-1", BusinessUnitID: "bu-1", Revision: rev, DataJSON: data, LastEventID: id, UpdatedOn: T0}
	}
	steps := []struct {
		s    store.SourceSnapshot
		want store.SnapshotOutcome
		data string
	}{
		{snap(2, "evt-2", `{"v":2}`), store.SnapshotApplied, `{"v":2}`},
		{snap(1, "evt-1", `{"v":1}`), store.SnapshotStale, `{"v":2}`},     // out of order
		{snap(2, "evt-2", `{"v":2}`), store.SnapshotReapplied, `{"v":2}`}, // redelivery
		{snap(2, "evt-x", `{"v":9}`), store.SnapshotStale, `{"v":2}`},     // same revision, other event
		{snap(3, "evt-3", `{"v":3}`), store.SnapshotApplied, `{"v":3}`},
	}
	for i, st := range steps {
		got, err := s.SourceSnapshotApply(ctx, st.s)
		if err != nil || got != st.want {
			t.Fatalf("step %d: %s %v, want %s", i, got, err, st.want)
		}
		cur, err := s.SourceSnapshotGet(ctx, "PoliceVetting", "e-1")
		if err != nil || cur.DataJSON != st.data {
			t.Fatalf("step %d: stored %q %v, want %q", i, cur.DataJSON, err, st.data)
		}
	}
	if _, err := s.SourceSnapshotGet(ctx, "PoliceVetting", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing snapshot: %v", err)
	}
}

func testEventDedupe(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if ok, err := s.EventProcessed(ctx, "/hr", "evt-1"); ok || err != nil {
		t.Fatalf("unseen event: %v %v", ok, err)
	}
	for i := 0; i < 2; i++ {
		if err := s.EventMarkProcessed(ctx, "/hr", "evt-1", T0); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := s.EventProcessed(ctx, "/hr", "evt-1"); !ok {
		t.Fatal("processed event not found")
	}
	if ok, _ := s.EventProcessed(ctx, "/other", "evt-1"); ok {
		t.Fatal("event ids are per source")
	}
}

func testSettings(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if _, err := s.BusinessUnitGet(ctx, "bu-x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown BU: %v", err)
	}
	if err := s.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "Sydney", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	if bu, err := s.BusinessUnitGet(ctx, "bu-1"); err != nil || bu.TimeZoneID != "Australia/Sydney" {
		t.Fatalf("BU: %+v %v", bu, err)
	}
	rec := store.ReminderSettingRecord{Guid: "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", BusinessUnitID: "bu-1", SourceType: "PoliceVetting", TriggerType: "DateBased", IsActive: true, Body: `{}`, Version: 1, UpdatedOn: T0}
	if err := s.ReminderSettingUpsert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.IsActive, rec.Version = false, 2
	if err := s.ReminderSettingUpsert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReminderSettingGet(ctx, rec.Guid)
	if err != nil || got.IsActive || got.Version != 2 || !got.UpdatedOn.Equal(T0) {
		t.Fatalf("setting: %+v %v", got, err)
	}
	list, err := s.ReminderSettingListBySource(ctx, "bu-1", "PoliceVetting")
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list, _ := s.ReminderSettingListBySource(ctx, "bu-2", "PoliceVetting"); len(list) != 0 {
		t.Fatal("settings leak across business units")
	}
}
