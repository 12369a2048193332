-- +goose Up
-- Report subscriptions; the same tables as sql/sqlite/migrations/0006_report_subscriptions.sql.
-- Conventions: see 0001_initial.sql.
CREATE TABLE dbo.ReportSubscription (
    Guid           nvarchar(36)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_ReportSubscription PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ReportType     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Status         nvarchar(20)  NOT NULL
        CONSTRAINT CK_ReportSubscription_Status CHECK (Status IN (N'Active', N'Paused', N'Deleted')),
    Body           nvarchar(max) NOT NULL,
    Version        bigint        NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL
);
CREATE NONCLUSTERED INDEX IX_ReportSubscription_BusinessUnit ON dbo.ReportSubscription (BusinessUnitId, Guid);

CREATE TABLE dbo.ReportRun (
    Id               bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_ReportRun PRIMARY KEY CLUSTERED,
    RunKeyHash       nvarchar(64)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_ReportRun_RunKeyHash UNIQUE,
    SchedulerKey     nvarchar(400) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_ReportRun_SchedulerKey UNIQUE,
    SubscriptionGuid nvarchar(36)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId   nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    RunKind          nvarchar(20)  NOT NULL
        CONSTRAINT CK_ReportRun_RunKind CHECK (RunKind IN (N'Scheduled', N'Manual', N'SupportRetry')),
    OwnershipKey     nvarchar(400) COLLATE Latin1_General_100_BIN2 NOT NULL,
    PeriodStart      datetime2(3)  NOT NULL,
    PeriodEnd        datetime2(3)  NOT NULL,
    RequestedBy      nvarchar(200) NULL,
    Reason           nvarchar(500) NULL,
    CreatedOn        datetime2(3)  NOT NULL
);
CREATE NONCLUSTERED INDEX IX_ReportRun_Subscription ON dbo.ReportRun (SubscriptionGuid, Id);

CREATE TABLE dbo.ReportRunOwnership (
    SchedulerKey     nvarchar(400) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_ReportRunOwnership PRIMARY KEY CLUSTERED,
    SubscriptionGuid nvarchar(36)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    RunKind          nvarchar(20)  NOT NULL
        CONSTRAINT CK_ReportRunOwnership_RunKind CHECK (RunKind IN (N'Scheduled', N'Manual', N'SupportRetry')),
    OwnerType        nvarchar(30)  NOT NULL
        CONSTRAINT CK_ReportRunOwnership_OwnerType CHECK (OwnerType IN (N'OldScheduler', N'AutomationScheduler')),
    OwnerVersion     bigint        NOT NULL,
    Status           nvarchar(20)  NOT NULL
        CONSTRAINT CK_ReportRunOwnership_Status CHECK (Status IN (N'Owned', N'DeliveryCreated', N'Cancelled')),
    CoordinatesJson  nvarchar(max) NULL,
    Version          bigint        NOT NULL,
    CreatedOn        datetime2(3)  NOT NULL,
    UpdatedOn        datetime2(3)  NOT NULL
);
CREATE NONCLUSTERED INDEX IX_ReportRunOwnership_Subscription ON dbo.ReportRunOwnership (SubscriptionGuid, SchedulerKey);

CREATE TABLE dbo.ReportRollout (
    ScopeType nvarchar(20)  COLLATE Latin1_General_100_BIN2 NOT NULL
        CONSTRAINT CK_ReportRollout_ScopeType CHECK (ScopeType IN (N'BusinessUnit', N'Subscription')),
    ScopeId   nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Mode      nvarchar(30)  NOT NULL,
    Version   bigint        NOT NULL,
    UpdatedOn datetime2(3)  NOT NULL,
    UpdatedBy nvarchar(200) NULL,
    CONSTRAINT PK_ReportRollout PRIMARY KEY CLUSTERED (ScopeType, ScopeId)
);

-- The automation-activity report reads one business unit's writes in a period.
CREATE NONCLUSTERED INDEX IX_NotificationJob_Activity ON dbo.NotificationJob (BusinessUnitId, UpdatedOn)
    INCLUDE (SchedulerKey, Status, SentOn);
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Activity ON dbo.AutomationScheduler (BusinessUnitId, UpdatedOn)
    INCLUDE (AutomationType, SettingGuid, Status, IsOnSupportHold);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
