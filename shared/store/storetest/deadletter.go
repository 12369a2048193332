package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// runDeadLetterAudit checks store.DeadLetterAuditStore (docs/operations.md#dead-letters).
func runDeadLetterAudit(t *testing.T, open Opener) {
	t.Run("OneActionPerDeadLetter", func(t *testing.T) { testDeadLetterAuditOnce(t, open) })
	t.Run("PaceCountAndScopedList", func(t *testing.T) { testDeadLetterAuditList(t, open) })
	t.Run("TakeOverOnlyAStaleAction", func(t *testing.T) { testDeadLetterAuditTakeOver(t, open) })
}

// An action recorded before the stale bound (its process died before the bus call) is
// replaced by the caller's, once: a second take-over of the now fresh action, a take-over
// of a fresh action and one of no action write nothing.
func testDeadLetterAuditTakeOver(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	died := dlAudit("e1", store.DeadLetterRequeue, "bu-1", T0)
	if err := s.DeadLetterAuditInsert(ctx, died); err != nil {
		t.Fatal(err)
	}
	later := dlAudit("e1", store.DeadLetterDiscard, "bu-1", T0.Add(10*time.Minute))
	later.Operator, later.Reason, later.BatchID = "linh", "poison message", "batch-9"
	if ok, err := s.DeadLetterAuditTakeOver(ctx, later, T0); err != nil || ok {
		t.Fatalf("take-over of an action recorded at the bound: %v %v, want false", ok, err)
	}
	if got, _ := s.DeadLetterAuditGet(ctx, "e1"); got != died {
		t.Fatalf("a refused take-over wrote %+v", got)
	}
	if ok, err := s.DeadLetterAuditTakeOver(ctx, later, T0.Add(5*time.Minute)); err != nil || !ok {
		t.Fatalf("take-over of a stale action: %v %v, want true", ok, err)
	}
	if got, err := s.DeadLetterAuditGet(ctx, "e1"); err != nil || got != later {
		t.Fatalf("after the take-over: %+v %v, want %+v", got, err, later)
	}
	again := later
	again.Operator, again.ActedOn = "an", T0.Add(11*time.Minute)
	if ok, err := s.DeadLetterAuditTakeOver(ctx, again, T0.Add(5*time.Minute)); err != nil || ok {
		t.Fatalf("a second take-over of the same stale action: %v %v, want false", ok, err)
	}
	if ok, err := s.DeadLetterAuditTakeOver(ctx, dlAudit("nope", store.DeadLetterRequeue, "bu-1", T0), T0.Add(time.Hour)); err != nil || ok {
		t.Fatalf("take-over of no action: %v %v, want false", ok, err)
	}
}

func dlAudit(etag string, action store.DeadLetterAction, bu string, on time.Time) store.DeadLetterAudit {
	return store.DeadLetterAudit{ETag: etag, Action: action, DeadLetterID: "7", Destination: "tracking", MessageID: "m-" + etag,
		BusinessUnitID: bu, Operator: "jane", Reason: "unit created", ActedOn: on}
}

// A dead letter is acted on once: a second action on its ETag (the same or another) is
// ErrConflict and changes nothing; a deleted action (the bus refused it) frees the ETag.
func testDeadLetterAuditOnce(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	a := dlAudit("e1", store.DeadLetterRequeue, "bu-1", T0)
	a.BatchID = "batch-1"
	if err := s.DeadLetterAuditInsert(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.DeadLetterAuditInsert(ctx, dlAudit("e1", store.DeadLetterDiscard, "bu-1", T0.Add(time.Second))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second action on the same dead letter: %v, want ErrConflict", err)
	}
	got, err := s.DeadLetterAuditGet(ctx, "e1")
	if err != nil || got != a {
		t.Fatalf("get: %+v %v, want %+v", got, err, a)
	}
	if _, err := s.DeadLetterAuditGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown etag: %v", err)
	}
	if err := s.DeadLetterAuditDelete(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeadLetterAuditInsert(ctx, dlAudit("e1", store.DeadLetterDiscard, "bu-1", T0.Add(time.Second))); err != nil {
		t.Fatalf("after the delete: %v", err)
	}
	if err := s.DeadLetterAuditInsert(ctx, store.DeadLetterAudit{ETag: "e2", Action: "Replay", Operator: "jane"}); err == nil {
		t.Fatal("an unknown action was recorded")
	}
}

// The pace counts one kind of action since an instant; the list is newest first, bounded,
// and scoped (an action on a unit-less dead letter only for a scope of every unit).
func testDeadLetterAuditList(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	for i, bu := range []string{"bu-1", "bu-2", "", "bu-1"} {
		action := store.DeadLetterRequeue
		if i == 1 {
			action = store.DeadLetterDiscard
		}
		if err := s.DeadLetterAuditInsert(ctx, dlAudit(fmt.Sprintf("e%d", i), action, bu, T0.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeadLetterAuditCount(ctx, store.DeadLetterRequeue, T0.Add(2*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("requeues after T0+2m: %d %v, want 1 (the one at T0+3m; the one at T0+2m is not after it)", n, err)
	}
	etags := func(sc automation.Scope, limit int) string {
		return listed(t, " ", func(a store.DeadLetterAudit) string { return a.ETag })(s.DeadLetterAuditList(ctx, store.DeadLetterAuditListParams{Scope: sc, Limit: limit}))
	}
	if got := etags(automation.AllBusinessUnits(), 10); got != "e3 e2 e1 e0 " {
		t.Fatalf("every unit: %q", got)
	}
	if got := etags(automation.AllBusinessUnits(), 2); got != "e3 e2 " {
		t.Fatalf("limit 2: %q", got)
	}
	if got := etags(automation.BusinessUnits("bu-1"), 10); got != "e3 e0 " {
		t.Fatalf("bu-1: %q", got)
	}
	if _, err := s.DeadLetterAuditList(ctx, store.DeadLetterAuditListParams{Scope: automation.AllBusinessUnits(), Limit: store.MaxDeadLetterAuditList + 1}); err == nil {
		t.Fatal("an unbounded list was answered")
	}
}
