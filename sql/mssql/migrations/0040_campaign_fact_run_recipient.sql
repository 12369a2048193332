-- +goose Up
-- Action facts carry the run and the recipient, as on SQLite
-- (sql/sqlite/migrations/0040_campaign_fact_run_recipient.sql; docs/campaigns.md#facts). The
-- NOT NULL columns with a constant default are metadata-only on Azure SQL; the backfills
-- then write each existing row once (commands from their execution, projection rows from
-- their command; a projection row whose command is gone keeps N'').
ALTER TABLE dbo.CampaignCommand ADD RunId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT DF_CampaignCommand_RunId DEFAULT N'';
UPDATE c SET c.RunId = e.RunId FROM dbo.CampaignCommand c JOIN dbo.CampaignExecution e ON e.ExecutionId = c.ExecutionId;
ALTER TABLE dbo.CampaignCommandProjection ADD RunId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT DF_CampaignCommandProjection_RunId DEFAULT N'';
ALTER TABLE dbo.CampaignCommandProjection ADD RecipientId nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT DF_CampaignCommandProjection_RecipientId DEFAULT N'';
UPDATE p SET p.RunId = c.RunId, p.RecipientId = c.RecipientId FROM dbo.CampaignCommandProjection p JOIN dbo.CampaignCommand c ON c.CommandId = p.CommandId;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
