package reminder_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/reminder"
)

// A role is expanded into one occurrence's recipients: a role the business-unit API accepts
// must fit in one occurrence.
func TestRoleFitsOneOccurrence(t *testing.T) {
	t.Parallel()
	if businessunit.MaxRoleAddresses > reminder.MaxRecipients {
		t.Fatalf("businessunit.MaxRoleAddresses %d > reminder.MaxRecipients %d", businessunit.MaxRoleAddresses, reminder.MaxRecipients)
	}
}
