-- +goose Up
-- SQL Server schema of the support API; the same tables, columns and indexes as
-- sql/sqlite/migrations/0005_support.sql (conventions: see 0001_initial.sql).

-- One row per operator action on one scheduler row (release, retry now, support retry,
-- cancel): who, why, and the row's status and Version before and after.
CREATE TABLE dbo.SupportAudit (
    Id                bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_SupportAudit PRIMARY KEY CLUSTERED,
    SchedulerId       bigint         NOT NULL,
    SchedulerKey      nvarchar(400)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId    nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    Action            nvarchar(20)   NOT NULL
        CONSTRAINT CK_SupportAudit_Action CHECK (Action IN (N'Release', N'RetryNow', N'SupportRetry', N'Cancel')),
    Operator          nvarchar(200)  NOT NULL,
    Reason            nvarchar(1000) NOT NULL,
    StatusBefore      nvarchar(20)   NOT NULL,
    StatusAfter       nvarchar(20)   NOT NULL,
    VersionBefore     bigint         NOT NULL,
    VersionAfter      bigint         NOT NULL,
    RetrySchedulerKey nvarchar(400)  COLLATE Latin1_General_100_BIN2 NULL,
    DueOn             datetime2(3)   NULL,
    BatchId           nvarchar(100)  COLLATE Latin1_General_100_BIN2 NULL,
    CreatedOn         datetime2(3)   NOT NULL
);
CREATE NONCLUSTERED INDEX IX_SupportAudit_Scheduler ON dbo.SupportAudit (SchedulerId, Id);

-- The pace of bulk releases: NextSlotOn is the earliest instant the next paced batch may
-- become due, shared by every release so concurrent releases never add up past their rate.
CREATE TABLE dbo.SupportReleasePace (
    Name       nvarchar(50) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_SupportReleasePace PRIMARY KEY CLUSTERED,
    NextSlotOn datetime2(3) NOT NULL
);

-- The most recent event of a source that was ignored because its revision was older than
-- the stored snapshot's (one row per source; explain shows it).
CREATE TABLE dbo.SourceStaleEvent (
    EntityType     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityGuid     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EventId        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Revision       bigint        NOT NULL,
    StoredRevision bigint        NOT NULL,
    StoredEventId  nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ReceivedOn     datetime2(3)  NOT NULL,
    CONSTRAINT PK_SourceStaleEvent PRIMARY KEY CLUSTERED (EntityType, EntityGuid)
);

-- Find by business unit (newest first) and by status (newest first); by status and business
-- unit uses IX_AutomationScheduler_Status (the clustered key Id is part of every
-- nonclustered key, so equal prefixes are in Id order).
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_BusinessUnit ON dbo.AutomationScheduler (BusinessUnitId, Id);
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_StatusId ON dbo.AutomationScheduler (Status, Id);
-- Find by scheduledOn range, in schedule order.
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_ScheduledOn ON dbo.AutomationScheduler (ScheduledOn, Id);
-- Rows on support hold (few by nature), in Id order: find, bulk release, metrics by reason.
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Hold ON dbo.AutomationScheduler (Id)
    INCLUDE (BusinessUnitId, FailureReasonCode, Status)
    WHERE IsOnSupportHold = 1;
-- Metrics: deactivations of the last 24 hours by reason.
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Deactivated ON dbo.AutomationScheduler (UpdatedOn)
    INCLUDE (ReasonCode, BusinessUnitId)
    WHERE Status = N'Deactivated';
-- Metrics: deliveries whose outcome is UNKNOWN (status 'Unknown', docs/architecture.md#unknown-outcomes).
CREATE NONCLUSTERED INDEX IX_NotificationJob_UnknownAll ON dbo.NotificationJob (BusinessUnitId)
    WHERE Status = N'Unknown';

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
