-- +goose Up
-- Budgets in the campaign worker (docs/budgets.md#in-the-worker). A command whose paid action
-- found too little budget or billing balance waits in a new, never-final status,
-- 'WAITING_BUDGET'; the same change as sql/sqlite/migrations/0016_budget_integration.sql.
ALTER TABLE dbo.CampaignCommand DROP CONSTRAINT CK_CampaignCommand_Status;
ALTER TABLE dbo.CampaignCommand ADD CONSTRAINT CK_CampaignCommand_Status
    CHECK (Status IN (N'QUEUED', N'RUNNING', N'SUCCEEDED', N'FAILED', N'UNKNOWN', N'CANCELLED', N'SKIPPED', N'WAITING_BUDGET'));

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
