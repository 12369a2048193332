package support

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/store"
)

// A test send's delivery shows as a test in support (its SchedulerKey's mark); others do not.
func TestDeliveryViewShowsATestSend(t *testing.T) {
	t.Parallel()
	if v := deliveryView(store.NotificationJob{SchedulerKey: "test-send:20261001T090000.000Z-0011223344556677", Recipient: "linh@example.test"}); !v.Test {
		t.Fatalf("a test send: %+v", v)
	}
	for _, k := range []string{"0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:Test:src-1:expiresOn:2026-10-31:1", "noti:crm:evt-1", "report:abc", "test-sender:x"} {
		if v := deliveryView(store.NotificationJob{SchedulerKey: k}); v.Test {
			t.Errorf("%s shows as a test", k)
		}
	}
}

// A delivery's view carries the recipient gate's decision in its own member (the console's
// row page shows it in its own column): the preference that skipped it, or the quiet-hours
// wait, masked; nothing for a delivery the gate let pass, nor for a wait for the channel's
// limits or a retry, which are not the gate's.
func TestDeliveryViewCarriesTheGateDecision(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		status    store.NotificationStatus
		lastError string
		want      string
	}{
		{"skipped by an opt-out", store.NotificationSkipped, "opted out of marketing sms messages (sms-stop by +61412345678 on 2026-10-01T09:00:00Z)",
			"Skipped: opted out of marketing sms messages (sms-stop by " + logmask.String("+61412345678") + " on 2026-10-01T09:00:00Z)"},
		{"waiting for quiet hours", store.NotificationQueued, "waiting for quiet hours to end at 2026-10-02 08:00 (Australia/Sydney)",
			"Waiting for quiet hours to end at 2026-10-02 08:00 (Australia/Sydney)"},
		{"waiting for the channel's limits", store.NotificationQueued, "the channel's provider is at its concurrency or rate limit: nothing was sent", ""},
		{"a retry", store.NotificationQueued, "connection reset", ""},
		{"sent", store.NotificationSent, "", ""},
	} {
		d := deliveryView(store.NotificationJob{DeliveryKey: "dlv_1", Channel: "sms", Recipient: "+61412345678", Status: c.status, LastError: c.lastError})
		if d.Decision != c.want {
			t.Errorf("%s: decision %q, want %q", c.name, d.Decision, c.want)
		}
		if strings.Contains(d.Decision, "+61412345678") {
			t.Errorf("%s: the decision shows the number unmasked: %q", c.name, d.Decision)
		}
	}
}
