-- +goose Up
-- A campaign's executions, newest first (docs/campaigns.md#http-api, the console's campaign
-- page): the list seeks (BusinessUnitId, CampaignId) and reads Id descending from the
-- cursor, so a page costs its own rows however many executions the unit has.
CREATE INDEX IX_CampaignExecution_Campaign ON CampaignExecution (BusinessUnitId, CampaignId, Id);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
