-- +goose Up
-- Action facts carry the run and the recipient (seed 002's campaign_action_event: campaign,
-- run, recipient), so reports can tell a re-run from the first run and show results per
-- recipient (docs/campaigns.md#facts). A command records its execution's RunId; the
-- projection keeps both. Rows from before get them from their execution (commands) and their
-- command (projection rows); a projection row whose command is gone keeps ''.
ALTER TABLE CampaignCommand ADD COLUMN RunId TEXT NOT NULL DEFAULT '';
UPDATE CampaignCommand SET RunId = COALESCE((SELECT e.RunId FROM CampaignExecution e WHERE e.ExecutionId = CampaignCommand.ExecutionId), '');
ALTER TABLE CampaignCommandProjection ADD COLUMN RunId TEXT NOT NULL DEFAULT '';
ALTER TABLE CampaignCommandProjection ADD COLUMN RecipientId TEXT NOT NULL DEFAULT '';
UPDATE CampaignCommandProjection SET
    RunId = COALESCE((SELECT c.RunId FROM CampaignCommand c WHERE c.CommandId = CampaignCommandProjection.CommandId), ''),
    RecipientId = COALESCE((SELECT c.RecipientId FROM CampaignCommand c WHERE c.CommandId = CampaignCommandProjection.CommandId), '');

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
