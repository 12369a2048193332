package reminder_test

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// A support-retry row (the support API's re-send of a completed occurrence) is revalidated
// as the occurrence it extends: it sends again under new delivery keys, survives events that
// keep the occurrence and is deactivated when the occurrence goes.
func TestSupportRetryRowRevalidatesAsItsOccurrence(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.mustProcess(t, event("evt-1", 1, alice))
	orig, err := f.st.SchedulerGetByKey(ctx, mustKey(t, "2026-10-31", 7))
	if err != nil {
		t.Fatal(err)
	}
	// Complete the original (due 2026-10-24 09:00 Sydney = 2026-10-23T22:00Z).
	due := utc("2026-10-23T22:00:00Z")
	claimed, err := f.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: due, Lease: time.Minute, Limit: 10})
	if err != nil || len(claimed) != 2 { // the 30-day one (2026-10-01) is due too
		t.Fatalf("claimed %d %v", len(claimed), err)
	}
	var row automation.SchedulerRow
	for _, c := range claimed {
		if c.SchedulerKey == orig.SchedulerKey {
			row = c
		}
	}
	out, err := f.h.Execute(ctx, row, due)
	if err != nil || len(out.Deliveries) != 1 {
		t.Fatalf("original: %+v %v", out, err)
	}
	if err := f.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: row.ID, Token: row.Version, Now: due, Deliveries: out.Deliveries, Outbox: out.Outbox}); err != nil {
		t.Fatal(err)
	}
	done, _ := f.st.SchedulerGetByKey(ctx, orig.SchedulerKey)

	// Support retries it two days later.
	now := due.Add(48 * time.Hour)
	c := automation.Candidate{AutomationType: done.AutomationType, TriggerType: done.TriggerType,
		SchedulerKey: automation.SupportRetryKey(done.SchedulerKey, done.Version), InputHash: done.InputHash, SettingGuid: done.SettingGuid,
		SourceEntityType: done.SourceEntityType, SourceEntityGuid: done.SourceEntityGuid, BusinessUnitID: done.BusinessUnitID,
		ScheduledOn: now, ScheduledLocalDate: done.ScheduledLocalDate, ScheduledLocalTime: done.ScheduledLocalTime, TimeZoneID: done.TimeZoneID}
	if _, err := f.st.SupportSchedulerAct(ctx, store.SupportActParams{ID: done.ID, Version: done.Version, Action: store.SupportRetry,
		Operator: "ops", Reason: "resend", Now: now, RetryCandidate: &c}); err != nil {
		t.Fatal(err)
	}
	// An event that keeps the occurrence (new address only) leaves the retry row Pending.
	f.clock.Set(now)
	f.mustProcess(t, event("evt-2", 2, with(alice, "staffEmail", "alice.new@example.test")))
	retry, err := f.st.SchedulerGetByKey(ctx, c.SchedulerKey)
	if err != nil || retry.Status != automation.StatusPending {
		t.Fatalf("retry row after an unrelated change: %+v %v", retry, err)
	}
	claimed, err = f.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: now, Lease: time.Minute, Limit: 10})
	if err != nil || len(claimed) != 1 || claimed[0].SchedulerKey != c.SchedulerKey {
		t.Fatalf("claimed %v %v", claimed, err)
	}
	out2, err := f.h.Execute(ctx, claimed[0], now)
	if err != nil || out2.Deactivate != "" || len(out2.Deliveries) != 1 {
		t.Fatalf("retry execution: %+v %v", out2, err)
	}
	if out2.Deliveries[0].DeliveryKey == out.Deliveries[0].DeliveryKey ||
		out2.Deliveries[0].DeliveryKey != delivery.Key(c.SchedulerKey, "log", "alice.new@example.test") {
		t.Fatalf("the retry must use a new delivery key: %s vs %s", out2.Deliveries[0].DeliveryKey, out.Deliveries[0].DeliveryKey)
	}

	// A second retry row, then the date moves: the occurrence goes, and its retry with it.
	if err := f.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: claimed[0].ID, Token: claimed[0].Version, Now: now}); err != nil {
		t.Fatal(err)
	}
	done, _ = f.st.SchedulerGetByKey(ctx, orig.SchedulerKey)
	c.SchedulerKey = automation.SupportRetryKey(done.SchedulerKey, done.Version)
	if _, err := f.st.SupportSchedulerAct(ctx, store.SupportActParams{ID: done.ID, Version: done.Version, Action: store.SupportRetry,
		Operator: "ops", Reason: "again", Now: now, RetryCandidate: &c}); err != nil {
		t.Fatal(err)
	}
	f.mustProcess(t, event("evt-3", 3, with(alice, "expiresOn", "2027-01-31")))
	second, _ := f.st.SchedulerGetByKey(ctx, c.SchedulerKey)
	if second.Status != automation.StatusDeactivated || second.ReasonCode != automation.ReasonSuperseded {
		t.Fatalf("retry row of an occurrence that went away: %s %s", second.Status, second.ReasonCode)
	}
}

func mustKey(t *testing.T, target string, off int) string {
	t.Helper()
	k, err := automation.ReminderDateKey("0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", "PoliceVetting", "e-1", "expiresOn", target, off)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A support retry of a completed threshold row is executed as its occurrence too: it sends
// again under new delivery keys while the condition holds, and is deactivated when it does not.
func TestSupportRetryOfAThresholdRow(t *testing.T) {
	t.Parallel()
	f := classFixture(t, reminder.OncePerThreshold, "[80]")
	ctx := context.Background()
	f.mustProcess(t, classEvent("e1", 1, 9, 10))
	row, out := f.sendDue(t, 2)
	done, _ := f.st.SchedulerGetByKey(ctx, row.SchedulerKey)
	retry := func(version int64) automation.SchedulerRow {
		t.Helper()
		now := f.clock.Now()
		c := automation.Candidate{AutomationType: done.AutomationType, TriggerType: done.TriggerType,
			SchedulerKey: automation.SupportRetryKey(done.SchedulerKey, version), InputHash: done.InputHash, SettingGuid: done.SettingGuid,
			SourceEntityType: done.SourceEntityType, SourceEntityGuid: done.SourceEntityGuid, BusinessUnitID: done.BusinessUnitID,
			ScheduledOn: now, ScheduledLocalDate: done.ScheduledLocalDate, ScheduledLocalTime: done.ScheduledLocalTime, TimeZoneID: done.TimeZoneID}
		cur, _ := f.st.SchedulerGetByKey(ctx, done.SchedulerKey)
		if _, err := f.st.SupportSchedulerAct(ctx, store.SupportActParams{ID: cur.ID, Version: cur.Version, Action: store.SupportRetry,
			Operator: "ops", Reason: "resend", Now: now, RetryCandidate: &c}); err != nil {
			t.Fatal(err)
		}
		claimed, err := f.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: now, Lease: time.Minute, Limit: 10})
		if err != nil || len(claimed) != 1 || claimed[0].SchedulerKey != c.SchedulerKey {
			t.Fatalf("claimed %v %v", claimed, err)
		}
		return claimed[0]
	}
	f.clock.Advance(time.Hour)
	r1 := retry(done.Version)
	out1, err := f.h.Execute(ctx, r1, f.clock.Now())
	if err != nil || out1.Deactivate != "" || len(out1.Deliveries) != 2 || out1.Deliveries[0].DeliveryKey == out.Deliveries[0].DeliveryKey {
		t.Fatalf("retry while the condition holds: %+v %v", out1, err)
	}
	if err := f.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r1.ID, Token: r1.Version, Now: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	// The class empties; a second retry finds the condition gone.
	f.mustProcess(t, classEvent("e2", 2, 2, 10))
	f.clock.Advance(time.Hour)
	done, _ = f.st.SchedulerGetByKey(ctx, done.SchedulerKey)
	r2 := retry(done.Version)
	out2, err := f.h.Execute(ctx, r2, f.clock.Now())
	if err != nil || out2.Deactivate != automation.ReasonConditionNoLongerMet {
		t.Fatalf("retry after the condition fell: %+v %v", out2, err)
	}
}
