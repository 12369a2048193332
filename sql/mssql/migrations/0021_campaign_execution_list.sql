-- +goose Up
-- A campaign's executions, newest first (docs/campaigns.md#http-api, the console's campaign
-- page); the same index as sql/sqlite/migrations/0021_campaign_execution_list.sql: a seek of
-- (BusinessUnitId, CampaignId) read backwards from the cursor, then a key lookup per row of
-- the page (at most 200).
CREATE NONCLUSTERED INDEX IX_CampaignExecution_Campaign ON dbo.CampaignExecution (BusinessUnitId, CampaignId, Id);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
