-- +goose Up
-- The audit of a campaign's status changes made by a person; the same table as
-- sql/sqlite/migrations/0055_campaign_audit.sql (docs/console.md#campaigns). Conventions:
-- see 0001_initial.sql.
CREATE TABLE dbo.CampaignAudit (
    Id             bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_CampaignAudit PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    Action         nvarchar(30)   NOT NULL,
    StatusBefore   nvarchar(20)   NOT NULL,
    StatusAfter    nvarchar(20)   NOT NULL,
    VersionBefore  bigint         NOT NULL,
    VersionAfter   bigint         NOT NULL,
    Operator       nvarchar(200)  NOT NULL,
    Reason         nvarchar(2000) NOT NULL,
    CreatedOn      datetime2(3)   NOT NULL
);
CREATE INDEX IX_CampaignAudit_Campaign ON dbo.CampaignAudit (BusinessUnitId, CampaignId, Id);
-- A recipient's executions (the console's activity feed and the executions filter).
CREATE NONCLUSTERED INDEX IX_CampaignExecution_Recipient ON dbo.CampaignExecution (BusinessUnitId, RecipientId, Id);
-- A customer's accepted events (the activity feed). NotificationJob gets no recipient index:
-- it would be a random-key entry on every delivery insert (docs/performance.md).
CREATE NONCLUSTERED INDEX IX_GatewayEvent_Customer ON dbo.GatewayEvent (BusinessUnitId, CustomerId, AcceptedOn, EventId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
