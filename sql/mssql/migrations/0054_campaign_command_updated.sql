-- +goose Up
-- The overview's campaign-command counts per minute; the same index as
-- sql/sqlite/migrations/0054_campaign_command_updated.sql (docs/console.md#overview).
CREATE NONCLUSTERED INDEX IX_CampaignCommand_Updated ON dbo.CampaignCommand (UpdatedOn, Status, BusinessUnitId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
