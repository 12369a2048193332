-- +goose Up
-- SQL Server: the same delivery schema as sql/sqlite/migrations/0004_delivery.sql (commands
-- with EffectKey and Revision, backoff/hold on the send claim, the Unknown status and its
-- manual resolution, versioned templates, the revision-aware fact projection). Each
-- statement runs as its own batch, so a column added here can be used by the next one.

ALTER TABLE dbo.NotificationJob ADD
    EffectKey        nvarchar(200) COLLATE Latin1_General_100_BIN2 NULL,
    LocalDate        char(10)      NULL,
    RetryCount       int           NOT NULL CONSTRAINT DF_NotificationJob_RetryCount DEFAULT 0,
    NextAttemptOn    datetime2(3)  NULL,
    IsOnSupportHold  bit           NOT NULL CONSTRAINT DF_NotificationJob_IsOnSupportHold DEFAULT 0,
    TemplateVersion  bigint        NULL,
    Revision         bigint        NOT NULL CONSTRAINT DF_NotificationJob_Revision DEFAULT 1,
    ResolvedBy       nvarchar(200) NULL,
    ResolutionReason nvarchar(1000) NULL,
    ResolvedOn       datetime2(3)  NULL;

UPDATE dbo.NotificationJob SET EffectKey = DeliveryKey, LocalDate = CONVERT(char(10), CreatedOn, 23);

ALTER TABLE dbo.NotificationJob ALTER COLUMN EffectKey nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL;

ALTER TABLE dbo.NotificationJob ALTER COLUMN LocalDate char(10) NOT NULL;

ALTER TABLE dbo.NotificationJob ADD CONSTRAINT UQ_NotificationJob_EffectKey UNIQUE (BusinessUnitId, EffectKey);

ALTER TABLE dbo.NotificationJob DROP CONSTRAINT CK_NotificationJob_Status;

ALTER TABLE dbo.NotificationJob ADD CONSTRAINT CK_NotificationJob_Status
    CHECK (Status IN (N'Queued', N'Sending', N'Sent', N'Failed', N'Unknown'));

-- The dispatch sweep: retries and lookups whose time came, send claims whose lease expired.
CREATE NONCLUSTERED INDEX IX_NotificationJob_NextAttempt ON dbo.NotificationJob (NextAttemptOn)
    WHERE Status IN (N'Queued', N'Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0;

CREATE NONCLUSTERED INDEX IX_NotificationJob_Lease ON dbo.NotificationJob (ProcessingLeaseExpiresOn)
    WHERE Status = N'Sending';

-- The manual-resolution queue, per business unit.
CREATE NONCLUSTERED INDEX IX_NotificationJob_Unknown ON dbo.NotificationJob (BusinessUnitId, Id)
    WHERE Status = N'Unknown' AND NextAttemptOn IS NULL;

CREATE NONCLUSTERED INDEX IX_NotificationJob_Unsent ON dbo.NotificationJob (Id)
    WHERE Status IN (N'Queued', N'Sending');

-- Templates: one row per (key, business unit, version); BusinessUnitId N'' is the default.
CREATE TABLE dbo.NotificationTemplate (
    TemplateKey    nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Version        bigint        NOT NULL,
    Subject        nvarchar(max) NOT NULL,
    TextBody       nvarchar(max) NOT NULL,
    HtmlBody       nvarchar(max) NOT NULL,
    CreatedBy      nvarchar(200) NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    CONSTRAINT PK_NotificationTemplate PRIMARY KEY CLUSTERED (TemplateKey, BusinessUnitId, Version)
);

-- The reporting projection of delivery facts: the highest revision per command.
CREATE TABLE dbo.DeliveryProjection (
    CommandId      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_DeliveryProjection PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    LocalDate      char(10)      NOT NULL,
    Channel        nvarchar(50)  NOT NULL,
    Status         nvarchar(20)  NOT NULL,
    Revision       bigint        NOT NULL,
    EventId        nvarchar(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
    OccurredOn     datetime2(3)  NOT NULL,
    AppliedOn      datetime2(3)  NOT NULL
);

CREATE NONCLUSTERED INDEX IX_DeliveryProjection_Day ON dbo.DeliveryProjection (BusinessUnitId, LocalDate, Status);

-- How fresh the projection is: the newest fact instant it has applied.
CREATE TABLE dbo.DeliveryProjectionState (
    Name      nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_DeliveryProjectionState PRIMARY KEY CLUSTERED,
    FreshTo   datetime2(3)  NOT NULL,
    UpdatedOn datetime2(3)  NOT NULL
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
