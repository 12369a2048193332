package support_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

// A Sent row's deliveries that a recipient's preference skipped, or that wait for quiet
// hours, are named in explain with the reason (docs/channels.md#recipient-preferences).
func TestExplainNamesSkippedAndQuietHoursDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	e.unit(t, store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"})
	e.clock.Set(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC))
	e.setting(t, true, "09:00")
	e.event(t, "evt-1", 1, map[string]any{"expiresOn": "2027-03-09", "staffEmail": "zoe.walker@example.test"})
	// The 7-day reminder (2027-03-02 09:00 Sydney) is due; complete it with two deliveries.
	e.clock.Set(time.Date(2027, 3, 1, 22, 30, 0, 0, time.UTC))
	rows, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: e.clock.Now(), Lease: time.Minute, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim: %v %v", rows, err)
	}
	jobs, msgs, err := delivery.Build([]delivery.Request{
		{SchedulerKey: rows[0].SchedulerKey, BusinessUnitID: "bu-syd", Channel: "email", Recipient: "zoe.walker@example.test", Template: "t", Payload: map[string]any{}},
		{SchedulerKey: rows[0].SchedulerKey, BusinessUnitID: "bu-syd", Channel: "sms", Recipient: "+61412345678", Template: "t", Payload: map[string]any{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: rows[0].ID, Token: rows[0].Version, Now: e.clock.Now(), Deliveries: jobs, Outbox: msgs}); err != nil {
		t.Fatal(err)
	}
	finish := func(key string, p store.NotificationFinishParams) {
		t.Helper()
		c, err := e.st.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: key, Now: e.clock.Now(), Lease: time.Minute})
		if err != nil || !c.Claimed {
			t.Fatalf("claim %s: %+v %v", key, c, err)
		}
		p.ID, p.Token, p.Now = c.Job.ID, c.Job.Version, e.clock.Now()
		if err := e.st.NotificationFinish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	until := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
	finish(jobs[0].DeliveryKey, store.NotificationFinishParams{Status: store.NotificationSkipped, Error: "the recipient opted out of marketing email messages (list-unsubscribe, 2027-02-01T00:00:00Z)"})
	finish(jobs[1].DeliveryKey, store.NotificationFinishParams{Status: store.NotificationQueued, NextAttemptOn: &until, Wait: true,
		Error: "waiting for quiet hours to end at 2027-03-02 21:00 (Australia/Sydney)"})
	x := e.explain(t)
	var sent *support.Occurrence
	for i, o := range x.Settings[0].Occurrences {
		if o.Outcome == "Sent" {
			sent = &x.Settings[0].Occurrences[i]
		}
	}
	if sent == nil || len(sent.Deliveries) != 2 {
		t.Fatalf("the Sent occurrence's delivery notes: %+v", sent)
	}
	for _, want := range []string{"The email delivery to z***@example.test: Skipped: the recipient opted out of marketing email messages",
		"The sms delivery to", "Waiting for quiet hours to end at 2027-03-02 21:00 (Australia/Sydney)"} {
		if !strings.Contains(sent.Explanation, want) {
			t.Errorf("explanation lacks %q:\n%s", want, sent.Explanation)
		}
	}
	_ = automation.AllBusinessUnits
}
