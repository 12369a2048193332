-- +goose Up
-- Campaign executions and commands (docs/campaigns.md), and the outbox relay's lease
-- (docs/campaigns.md#outbox). Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE Campaign (
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    Name           TEXT    NOT NULL,
    Status         TEXT    NOT NULL CHECK (Status IN ('ACTIVE', 'PAUSED', 'STOPPED')),
    RunId          TEXT    NOT NULL,
    DefinitionJson TEXT    NOT NULL,
    Version        INTEGER NOT NULL,
    CreatedOn      INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL,
    PRIMARY KEY (BusinessUnitId, CampaignId)
);

-- One row per (campaign, trigger event type): the dispatcher's lookup by event type.
CREATE TABLE CampaignTrigger (
    BusinessUnitId TEXT NOT NULL,
    EventType      TEXT NOT NULL,
    CampaignId     TEXT NOT NULL,
    PRIMARY KEY (BusinessUnitId, EventType, CampaignId)
);

CREATE TABLE CampaignExecution (
    Id             INTEGER PRIMARY KEY AUTOINCREMENT,
    ExecutionId    TEXT    NOT NULL UNIQUE,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    RunId          TEXT    NOT NULL,
    RecipientId    TEXT    NOT NULL,
    SourceEventId  TEXT    NOT NULL,
    LocalDate      TEXT    NOT NULL,
    Status         TEXT    NOT NULL CHECK (Status IN ('RUNNING', 'COMPLETED', 'CANCELLED')),
    CurrentIndex   INTEGER NOT NULL,
    DefinitionJson TEXT    NOT NULL,
    Version        INTEGER NOT NULL,
    CreatedOn      INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL
);

-- A command per (execution, action index); EffectKey is unique per business unit.
CREATE TABLE CampaignCommand (
    Id               INTEGER PRIMARY KEY AUTOINCREMENT,
    CommandId        TEXT    NOT NULL UNIQUE,
    EffectKey        TEXT    NOT NULL,
    ExecutionId      TEXT    NOT NULL,
    BusinessUnitId   TEXT    NOT NULL,
    CampaignId       TEXT    NOT NULL,
    RecipientId      TEXT    NOT NULL,
    ActionIndex      INTEGER NOT NULL,
    ActionKey        TEXT    NOT NULL,
    ActionType       TEXT    NOT NULL,
    Provider         TEXT    NOT NULL,
    LocalDate        TEXT    NOT NULL,
    ParamsJson       TEXT    NULL,
    Status           TEXT    NOT NULL CHECK (Status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'CANCELLED', 'SKIPPED')),
    LeaseExpiresOn   INTEGER NULL,
    AttemptCount     INTEGER NOT NULL DEFAULT 0,
    RetryCount       INTEGER NOT NULL DEFAULT 0,
    NextAttemptOn    INTEGER NULL,
    ProviderRef      TEXT    NULL,
    ResultJson       TEXT    NULL,
    LastError        TEXT    NULL,
    ResolvedBy       TEXT    NULL,
    ResolutionReason TEXT    NULL,
    Revision         INTEGER NOT NULL,
    Version          INTEGER NOT NULL,
    CreatedOn        INTEGER NOT NULL,
    UpdatedOn        INTEGER NOT NULL,
    CONSTRAINT UQ_CampaignCommand_Effect UNIQUE (BusinessUnitId, EffectKey),
    CONSTRAINT UQ_CampaignCommand_Step UNIQUE (ExecutionId, ActionIndex)
);
CREATE INDEX IX_CampaignCommand_Due ON CampaignCommand (Status, NextAttemptOn);
CREATE INDEX IX_CampaignCommand_Lease ON CampaignCommand (Status, LeaseExpiresOn);

-- The facts' projection: the highest revision seen per command.
CREATE TABLE CampaignCommandProjection (
    CommandId      TEXT    NOT NULL PRIMARY KEY,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    LocalDate      TEXT    NOT NULL,
    Status         TEXT    NOT NULL,
    Revision       INTEGER NOT NULL
);
CREATE INDEX IX_CampaignCommandProjection_Day ON CampaignCommandProjection (BusinessUnitId, CampaignId, LocalDate);

CREATE TABLE CampaignProjectionState (
    Id      INTEGER NOT NULL PRIMARY KEY CHECK (Id = 1),
    FreshTo INTEGER NULL
);

-- The outbox relay's lease: a claimed row has LeaseUntil and ClaimToken; a failed publish
-- sets RetryAt.
ALTER TABLE Outbox ADD COLUMN LeaseUntil INTEGER NULL;
ALTER TABLE Outbox ADD COLUMN ClaimToken TEXT NULL;
ALTER TABLE Outbox ADD COLUMN RetryAt INTEGER NULL;
CREATE INDEX IX_Outbox_Published ON Outbox (PublishedOn) WHERE PublishedOn IS NOT NULL;
CREATE INDEX IX_ProcessedEvent_ProcessedOn ON ProcessedEvent (ProcessedOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
