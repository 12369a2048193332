-- +goose Up
-- The console's campaign audit and recipient activity (docs/console.md#campaigns,
-- docs/console.md#recipient-activity). The audit of a campaign's status changes made by a person (docs/console.md#campaigns):
-- pause, resume and stop from the console, written in the transaction that saves the
-- campaign (store.CampaignSaveParams.Audit), so the campaign page can say who paused a
-- campaign and why. Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE CampaignAudit (
    Id             INTEGER PRIMARY KEY AUTOINCREMENT,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    Action         TEXT    NOT NULL,
    StatusBefore   TEXT    NOT NULL,
    StatusAfter    TEXT    NOT NULL,
    VersionBefore  INTEGER NOT NULL,
    VersionAfter   INTEGER NOT NULL,
    Operator       TEXT    NOT NULL,
    Reason         TEXT    NOT NULL,
    CreatedOn      INTEGER NOT NULL
);
CREATE INDEX IX_CampaignAudit_Campaign ON CampaignAudit (BusinessUnitId, CampaignId, Id);
-- A recipient's executions (the console's activity feed and the executions filter).
CREATE INDEX IX_CampaignExecution_Recipient ON CampaignExecution (BusinessUnitId, RecipientId, Id);
-- A customer's accepted events (the activity feed). NotificationJob gets no recipient index:
-- it would be a random-key entry on every delivery insert (docs/performance.md).
CREATE INDEX IX_GatewayEvent_Customer ON GatewayEvent (BusinessUnitId, CustomerId, AcceptedOn, EventId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
