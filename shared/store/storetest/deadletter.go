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
		as, err := s.DeadLetterAuditList(ctx, store.DeadLetterAuditListParams{Scope: sc, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var out string
		for _, a := range as {
			out += a.ETag + " "
		}
		return out
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
