package support

import (
	"testing"

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
