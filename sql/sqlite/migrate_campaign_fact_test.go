package sqlite_test

import (
	"context"
	"testing"
)

// Migration 0040 gives every command its execution's RunId and every projection row its
// command's RunId and RecipientId (docs/campaigns.md#facts); a projection row whose command
// is gone keeps the empty string.
func TestCampaignFactMigrationBackfillsRunAndRecipient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := upgradeFrom(t, 30, seedRows(t,
		`INSERT INTO CampaignExecution (ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn)
		 VALUES ('cx-1', 'bu-1', 'c1', 'run-7', 'cust-1', 'evt-1', '2026-10-01', 'COMPLETED', 0, '{}', 1, 0, 0)`,
		`INSERT INTO CampaignCommand (CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, Status, AttemptCount, RetryCount, Revision, Version, CreatedOn, UpdatedOn)
		 VALUES ('cx-1:0:a', 'ce-1', 'cx-1', 'bu-1', 'c1', 'cust-1', 0, 'a', 'TOP_UP', 'sim', '2026-10-01', 'SUCCEEDED', 1, 0, 3, 3, 0, 0)`,
		`INSERT INTO CampaignCommandProjection (CommandId, BusinessUnitId, CampaignId, LocalDate, Status, Revision) VALUES ('cx-1:0:a', 'bu-1', 'c1', '2026-10-01', 'SUCCEEDED', 3)`,
		`INSERT INTO CampaignCommandProjection (CommandId, BusinessUnitId, CampaignId, LocalDate, Status, Revision) VALUES ('cx-gone:0:a', 'bu-1', 'c1', '2026-10-01', 'FAILED', 2)`))
	c, err := s.CampaignCommandGet(ctx, "cx-1:0:a")
	if err != nil || c.RunID != "run-7" || c.RecipientID != "cust-1" {
		t.Fatalf("migrated command %+v %v", c, err)
	}
	for id, want := range map[string][2]string{"cx-1:0:a": {"run-7", "cust-1"}, "cx-gone:0:a": {"", ""}} {
		var run, rcpt string
		if err := s.DB().QueryRow(`SELECT RunId, RecipientId FROM CampaignCommandProjection WHERE CommandId = ?`, id).Scan(&run, &rcpt); err != nil || run != want[0] || rcpt != want[1] {
			t.Fatalf("projection row %s: run %q recipient %q %v, want %v", id, run, rcpt, err, want)
		}
	}
}
