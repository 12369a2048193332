package automation_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/automation"
)

func TestReminderOverdueKey(t *testing.T) {
	t.Parallel()
	got, err := automation.ReminderOverdueKey(setG, "PoliceVetting", "S-1", "expiresOn", "2026-10-31")
	if err != nil || got != "reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:PoliceVetting:S-1:expiresOn:2026-10-31:overdue" {
		t.Fatalf("%q %v", got, err)
	}
	for _, bad := range [][]string{{"x", "T", "s", "k", "2026-01-01"}, {setG, "T", "s:1", "k", "2026-01-01"}, {setG, "T", "s", "k", "2026-1-1"}} {
		if _, err := automation.ReminderOverdueKey(bad[0], bad[1], bad[2], bad[3], bad[4]); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}
