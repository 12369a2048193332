-- +goose Up
-- SQL Server schema; the same tables, columns, keys and indexes as sql/sqlite/migrations/0001_initial.sql.
--
-- Conventions (see sql/mssql/mssql.go):
--   * Instants are datetime2(3), UTC by convention (never datetimeoffset, never the server
--     clock: "now" is always a query parameter). The adapter sends them as datetime2 too, so
--     no comparison converts a column.
--   * Identifiers and keys that code compares for equality use the Latin1_General_100_BIN2
--     collation: exact, case-sensitive matching and ordering like SQLite's BINARY, whatever
--     the database default (often case-insensitive) is. Note that SQL Server still ignores
--     trailing spaces when comparing; the keys never end in one.
--   * Flags are bit; the adapter passes 0/1 integers. Ids are bigint IDENTITY.
--   * No triggers on these tables: queries return rows with OUTPUT (without INTO), which
--     SQL Server rejects on a table with an enabled trigger.
--   * Filtered indexes need ANSI_NULLS, ANSI_PADDING, ANSI_WARNINGS, ARITHABORT,
--     CONCAT_NULL_YIELDS_NULL and QUOTED_IDENTIFIER ON (NUMERIC_ROUNDABORT OFF) in every
--     session that writes these tables; go-mssqldb sessions have them. Scripts run through
--     sqlcmd must pass -I (QUOTED_IDENTIFIER ON).

CREATE TABLE dbo.AutomationScheduler (
    Id                       bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_AutomationScheduler PRIMARY KEY CLUSTERED,
    Guid                     nvarchar(36)   COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_AutomationScheduler_Guid UNIQUE,
    AutomationType           nvarchar(50)   NOT NULL,
    TriggerType              nvarchar(50)   NOT NULL,
    -- 400 characters = 800 bytes, under the 1,700-byte nonclustered key limit. Longer keys are
    -- shortened with a stable hash suffix before they get here (automation.ShortenKey).
    SchedulerKey             nvarchar(400)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_AutomationScheduler_SchedulerKey UNIQUE,
    SettingGuid              nvarchar(100)  COLLATE Latin1_General_100_BIN2 NULL,
    SourceEntityType         nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    SourceEntityGuid         nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId           nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    ScheduledOn              datetime2(3)   NOT NULL,
    ScheduledLocalDate       nvarchar(10)   NOT NULL,
    ScheduledLocalTime       nvarchar(16)   NOT NULL,
    TimeZoneId               nvarchar(64)   NOT NULL,
    Status                   nvarchar(20)   NOT NULL
        CONSTRAINT CK_AutomationScheduler_Status CHECK (Status IN (N'Pending', N'Processing', N'Completed', N'Failed', N'Deactivated', N'Cancelled')),
    ProcessingLeaseExpiresOn datetime2(3)   NULL,
    RetryCount               int            NOT NULL CONSTRAINT DF_AutomationScheduler_RetryCount DEFAULT 0,
    NextRetryOn              datetime2(3)   NULL,
    FailureReasonCode        nvarchar(100)  NULL,
    ReasonCode               nvarchar(100)  NULL,
    IsOnSupportHold          bit            NOT NULL CONSTRAINT DF_AutomationScheduler_IsOnSupportHold DEFAULT 0,
    InputHash                nvarchar(128)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    ConflictInputHash        nvarchar(128)  COLLATE Latin1_General_100_BIN2 NULL,
    DispatchResultJson       nvarchar(max)  NULL,
    TraceBlobName            nvarchar(1024) NULL,
    Version                  bigint         NOT NULL CONSTRAINT DF_AutomationScheduler_Version DEFAULT 1,
    CreatedOn                datetime2(3)   NOT NULL,
    UpdatedOn                datetime2(3)   NOT NULL,
    CompletedOn              datetime2(3)   NULL
);
-- The claim query (SchedulerClaimDue): Pending, not on hold, ordered by ScheduledOn, Id. The
-- query repeats the filter as literals so the optimizer can match this index; ScheduledOn
-- leads so "ScheduledOn <= @Now" is a range seek, and NextRetryOn is included so the retry
-- predicate needs no lookup.
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Due ON dbo.AutomationScheduler (ScheduledOn, Id)
    INCLUDE (NextRetryOn)
    WHERE Status = N'Pending' AND IsOnSupportHold = 0;
-- Stale-lease rescue (SchedulerListExpiredLeases) and the lease part of SchedulerNextWakeUp.
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Lease ON dbo.AutomationScheduler (ProcessingLeaseExpiresOn)
    WHERE Status = N'Processing';
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Source ON dbo.AutomationScheduler (SourceEntityType, SourceEntityGuid);
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Status ON dbo.AutomationScheduler (Status, BusinessUnitId);

CREATE TABLE dbo.NotificationJob (
    Id                       bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_NotificationJob PRIMARY KEY CLUSTERED,
    DeliveryKey              nvarchar(200)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_NotificationJob_DeliveryKey UNIQUE,
    SchedulerKey             nvarchar(400)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId           nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    Channel                  nvarchar(50)   NOT NULL,
    Recipient                nvarchar(320)  NOT NULL,
    Template                 nvarchar(200)  NOT NULL,
    PayloadJson              nvarchar(max)  NOT NULL,
    Status                   nvarchar(20)   NOT NULL
        CONSTRAINT CK_NotificationJob_Status CHECK (Status IN (N'Queued', N'Sending', N'Sent', N'Failed')),
    ProcessingLeaseExpiresOn datetime2(3)   NULL,
    AttemptCount             int            NOT NULL CONSTRAINT DF_NotificationJob_AttemptCount DEFAULT 0,
    ProviderReference        nvarchar(400)  NULL,
    LastError                nvarchar(max)  NULL,
    Version                  bigint         NOT NULL CONSTRAINT DF_NotificationJob_Version DEFAULT 1,
    CreatedOn                datetime2(3)   NOT NULL,
    UpdatedOn                datetime2(3)   NOT NULL,
    SentOn                   datetime2(3)   NULL
);
CREATE NONCLUSTERED INDEX IX_NotificationJob_SchedulerKey ON dbo.NotificationJob (SchedulerKey);

CREATE TABLE dbo.Outbox (
    Id          bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_Outbox PRIMARY KEY CLUSTERED,
    MessageId   nvarchar(200)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_Outbox_MessageId UNIQUE,
    Destination nvarchar(260)  NOT NULL,
    SessionId   nvarchar(128)  NULL,
    Body        varbinary(max) NOT NULL,
    CreatedOn   datetime2(3)   NOT NULL,
    PublishedOn datetime2(3)   NULL,
    Attempts    int            NOT NULL CONSTRAINT DF_Outbox_Attempts DEFAULT 0
);
CREATE NONCLUSTERED INDEX IX_Outbox_Unpublished ON dbo.Outbox (Id) WHERE PublishedOn IS NULL;

CREATE TABLE dbo.BusinessUnit (
    Id         nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_BusinessUnit PRIMARY KEY CLUSTERED,
    Name       nvarchar(200) NOT NULL,
    TimeZoneId nvarchar(64)  NOT NULL
);

CREATE TABLE dbo.ReminderSetting (
    Guid           nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_ReminderSetting PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    SourceType     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    TriggerType    nvarchar(50)  NOT NULL,
    IsActive       bit           NOT NULL,
    Body           nvarchar(max) NOT NULL,
    Version        bigint        NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL
);
CREATE NONCLUSTERED INDEX IX_ReminderSetting_Source ON dbo.ReminderSetting (BusinessUnitId, SourceType);

CREATE TABLE dbo.SourceSnapshot (
    EntityType     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityGuid     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Revision       bigint        NOT NULL,
    IsDeleted      bit           NOT NULL,
    DataJson       nvarchar(max) NOT NULL,
    LastEventId    nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL,
    CONSTRAINT PK_SourceSnapshot PRIMARY KEY CLUSTERED (EntityType, EntityGuid)
);

-- Clustered key: 2 x 200 characters = 800 bytes, under the 900-byte clustered key limit.
CREATE TABLE dbo.ProcessedEvent (
    EventSource nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EventId     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ProcessedOn datetime2(3)  NOT NULL,
    CONSTRAINT PK_ProcessedEvent PRIMARY KEY CLUSTERED (EventSource, EventId)
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
