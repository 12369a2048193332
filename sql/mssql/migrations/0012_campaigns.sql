-- +goose Up
-- Campaign executions and commands, and the outbox relay's lease; the same tables as
-- sql/sqlite/migrations/0012_campaigns.sql (docs/campaigns.md). Conventions: see 0001_initial.sql.
CREATE TABLE dbo.Campaign (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Name           nvarchar(200) NOT NULL,
    Status         nvarchar(20)  NOT NULL CONSTRAINT CK_Campaign_Status CHECK (Status IN ('ACTIVE', 'PAUSED', 'STOPPED')),
    RunId          nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    DefinitionJson nvarchar(max) NOT NULL,
    Version        bigint        NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL,
    CONSTRAINT PK_Campaign PRIMARY KEY CLUSTERED (BusinessUnitId, CampaignId)
);

CREATE TABLE dbo.CampaignTrigger (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EventType      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CONSTRAINT PK_CampaignTrigger PRIMARY KEY CLUSTERED (BusinessUnitId, EventType, CampaignId)
);

CREATE TABLE dbo.CampaignExecution (
    Id             bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_CampaignExecution PRIMARY KEY CLUSTERED,
    ExecutionId    nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_CampaignExecution_ExecutionId UNIQUE,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    RunId          nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    RecipientId    nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    SourceEventId  nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    LocalDate      char(10)      NOT NULL,
    Status         nvarchar(20)  NOT NULL CONSTRAINT CK_CampaignExecution_Status CHECK (Status IN ('RUNNING', 'COMPLETED', 'CANCELLED')),
    CurrentIndex   int           NOT NULL,
    DefinitionJson nvarchar(max) NOT NULL,
    Version        bigint        NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL
);

CREATE TABLE dbo.CampaignCommand (
    Id               bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_CampaignCommand PRIMARY KEY CLUSTERED,
    CommandId        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_CampaignCommand_CommandId UNIQUE,
    EffectKey        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ExecutionId      nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId   nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId       nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    RecipientId      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ActionIndex      int           NOT NULL,
    ActionKey        nvarchar(64)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    ActionType       nvarchar(64)  NOT NULL,
    Provider         nvarchar(64)  NOT NULL,
    LocalDate        char(10)      NOT NULL,
    ParamsJson       nvarchar(max) NULL,
    Status           nvarchar(20)  NOT NULL CONSTRAINT CK_CampaignCommand_Status CHECK (Status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'CANCELLED', 'SKIPPED')),
    LeaseExpiresOn   datetime2(3)  NULL,
    AttemptCount     int           NOT NULL CONSTRAINT DF_CampaignCommand_AttemptCount DEFAULT 0,
    RetryCount       int           NOT NULL CONSTRAINT DF_CampaignCommand_RetryCount DEFAULT 0,
    NextAttemptOn    datetime2(3)  NULL,
    ProviderRef      nvarchar(400) NULL,
    ResultJson       nvarchar(max) NULL,
    LastError        nvarchar(max) NULL,
    ResolvedBy       nvarchar(200) NULL,
    ResolutionReason nvarchar(1000) NULL,
    Revision         bigint        NOT NULL,
    Version          bigint        NOT NULL,
    CreatedOn        datetime2(3)  NOT NULL,
    UpdatedOn        datetime2(3)  NOT NULL,
    CONSTRAINT UQ_CampaignCommand_Effect UNIQUE (BusinessUnitId, EffectKey),
    CONSTRAINT UQ_CampaignCommand_Step UNIQUE (ExecutionId, ActionIndex)
);
CREATE NONCLUSTERED INDEX IX_CampaignCommand_Due ON dbo.CampaignCommand (Status, NextAttemptOn);
CREATE NONCLUSTERED INDEX IX_CampaignCommand_Lease ON dbo.CampaignCommand (Status, LeaseExpiresOn);

CREATE TABLE dbo.CampaignCommandProjection (
    CommandId      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_CampaignCommandProjection PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    LocalDate      char(10)      NOT NULL,
    Status         nvarchar(20)  NOT NULL,
    Revision       bigint        NOT NULL
);
CREATE NONCLUSTERED INDEX IX_CampaignCommandProjection_Day ON dbo.CampaignCommandProjection (BusinessUnitId, CampaignId, LocalDate);

CREATE TABLE dbo.CampaignProjectionState (
    Id      int          NOT NULL CONSTRAINT PK_CampaignProjectionState PRIMARY KEY CONSTRAINT CK_CampaignProjectionState_Id CHECK (Id = 1),
    FreshTo datetime2(3) NULL
);

ALTER TABLE dbo.Outbox ADD LeaseUntil datetime2(3) NULL, ClaimToken nvarchar(100) NULL, RetryAt datetime2(3) NULL;
CREATE NONCLUSTERED INDEX IX_Outbox_Published ON dbo.Outbox (PublishedOn) WHERE PublishedOn IS NOT NULL;
CREATE NONCLUSTERED INDEX IX_ProcessedEvent_ProcessedOn ON dbo.ProcessedEvent (ProcessedOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
