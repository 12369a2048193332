package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// testOperatorAudit checks that the audited writes insert their OperatorAudit row in their own
// transaction and only when they write (docs/security.md#audit, issue 37 item 7): a roll-out
// delete, a unit's quiet-hours delete, an ownership acquire; a refused write (an invalid audit
// row, nothing to delete, a conflicting acquire) records nothing and changes nothing.
func testOperatorAudit(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	audit := func(action, target string, at time.Time) *store.OperatorAudit {
		return &store.OperatorAudit{At: at, BusinessUnitID: "bu-1", Action: action, Target: target, Operator: "key:admin / jane"}
	}
	list := func() []store.OperatorAudit {
		t.Helper()
		got, err := s.OperatorAuditList(ctx, "bu-1", 10)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	// Roll-out delete: an invalid audit refuses the delete, naming the member.
	if _, err := s.ReportRolloutPut(ctx, store.ReportRolloutRecord{ScopeType: store.RolloutBusinessUnit, ScopeID: "bu-1", Mode: "Shadow", UpdatedOn: T0, UpdatedBy: "ops"}); err != nil {
		t.Fatal(err)
	}
	bad := audit(store.AuditRolloutDelete, "BusinessUnit:bu-1", T0)
	bad.Operator = strings.Repeat("o", automation.MaxOperatorBytes+1)
	var ae *automation.Error
	if _, err := s.ReportRolloutDelete(ctx, store.RolloutBusinessUnit, "bu-1", bad); !errors.As(err, &ae) || ae.Field != "OperatorAudit.Operator" {
		t.Fatalf("delete with an oversized operator: %v, want an OperatorAudit.Operator error", err)
	}
	if _, err := s.ReportRolloutGet(ctx, store.RolloutBusinessUnit, "bu-1"); err != nil {
		t.Fatalf("a refused delete removed the mode: %v", err)
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("a refused delete recorded %+v", got)
	}
	at := T0.Add(time.Hour)
	if ok, err := s.ReportRolloutDelete(ctx, store.RolloutBusinessUnit, "bu-1", audit(store.AuditRolloutDelete, "BusinessUnit:bu-1", at)); err != nil || !ok {
		t.Fatalf("delete = %v %v", ok, err)
	}
	got := list()
	if len(got) != 1 || got[0].Action != store.AuditRolloutDelete || got[0].Target != "BusinessUnit:bu-1" || got[0].Operator != "key:admin / jane" ||
		!got[0].At.Equal(at) || got[0].At.Location() != time.UTC || got[0].ID == 0 {
		t.Fatalf("audit after the roll-out delete = %+v", got)
	}

	// A roll-out delete of no mode still records (the API answers 200 removed=false: the
	// operator's rollback was accepted); nothing else changes.
	if ok, err := s.ReportRolloutDelete(ctx, store.RolloutBusinessUnit, "bu-1", audit(store.AuditRolloutDelete, "BusinessUnit:bu-1", at)); err != nil || ok {
		t.Fatalf("delete again = %v %v", ok, err)
	}
	if got := list(); len(got) != 2 {
		t.Fatalf("audit after the second roll-out delete = %+v", got)
	}

	// Quiet-hours delete: none to delete records nothing; a delete records one row.
	if err := s.QuietHoursDelete(ctx, "bu-1", "", audit(store.AuditQuietHoursDelete, "bu-1", at)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of no window: %v", err)
	}
	if got := list(); len(got) != 2 {
		t.Fatalf("a delete of nothing recorded: %+v", got)
	}
	if _, err := s.QuietHoursPut(ctx, store.QuietHoursRow{BusinessUnitID: "bu-1", Start: "21:00", End: "08:00", ChangedBy: "tom", ChangedOn: T0}); err != nil {
		t.Fatal(err)
	}
	if err := s.QuietHoursDelete(ctx, "bu-1", "", audit(store.AuditQuietHoursDelete, "bu-1", at.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if got := list(); len(got) != 3 || got[0].Action != store.AuditQuietHoursDelete || got[0].Target != "bu-1" {
		t.Fatalf("audit after the quiet-hours delete (newest first) = %+v", got)
	}

	// Ownership acquire: the write records; a conflicting acquire (a refusal) does not.
	const key = "report-subscription:" + reportSub + ":scheduled:2026-10-05T21:00:00Z"
	acq := func(owner store.ReportOwnerType) store.ReportOwnershipAcquireResult {
		t.Helper()
		r, err := s.ReportOwnershipAcquire(ctx, store.ReportOwnershipAcquireParams{SchedulerKey: key, SubscriptionGuid: reportSub,
			RunKind: store.ReportRunScheduled, Owner: owner, Now: at, Audit: audit(store.AuditOwnershipAcquire, key, at)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := acq(store.OwnerOldScheduler); r.Outcome != store.OwnershipAcquired {
		t.Fatalf("acquire = %+v", r)
	}
	if got := list(); len(got) != 4 || got[0].Action != store.AuditOwnershipAcquire || got[0].Target != key {
		t.Fatalf("audit after the acquire = %+v", got)
	}
	if r := acq(store.OwnerOldScheduler); r.Outcome != store.OwnershipReacquired {
		t.Fatalf("acquire again = %+v", r)
	}
	if r := acq(store.OwnerAutomationScheduler); r.Outcome != store.OwnershipConflict && r.Outcome != store.OwnershipTakenOver {
		t.Fatalf("acquire by the other owner = %+v", r)
	} else if want := map[bool]int{true: 5, false: 4}[r.Outcome == store.OwnershipTakenOver]; len(list()) != want {
		t.Fatalf("after %s: %d audit rows, want %d", r.Outcome, len(list()), want)
	}
	if _, err := s.OperatorAuditList(ctx, "bu-1", 0); err == nil {
		t.Fatal("limit 0 accepted")
	}
	if got, err := s.OperatorAuditList(ctx, "bu-2", 10); err != nil || len(got) != 0 {
		t.Fatalf("another unit's audit = %+v %v", got, err)
	}
}
