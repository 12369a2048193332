package app_test

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
)

// The composition root gives the campaign worker the same recipient gate as the delivery
// dispatcher (docs/campaigns.md#providers): a NOTIFICATION_* action is held by the
// recipient's preferences and quiet hours (TestNotificationActionGated, shared/campaignbudget,
// holds the rule).
func TestCampaignWorkerHasTheRecipientGate(t *testing.T) {
	t.Parallel()
	rt := apptest.Open(t, nil, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), app.Options{Seed: 1})
	if rt.Preferences == nil || rt.Campaign.Worker.Gate != rt.Preferences || rt.Dispatcher.Gate != rt.Preferences {
		t.Fatalf("campaign worker gate %v, dispatcher gate %v, preferences %v: want the one preference service in both",
			rt.Campaign.Worker.Gate, rt.Dispatcher.Gate, rt.Preferences)
	}
}
