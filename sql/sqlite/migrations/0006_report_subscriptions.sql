-- +goose Up
-- Report subscriptions (docs/architecture.md#report-subscriptions): the subscriptions, the registry of their runs
-- (StorageRunKeyHash → SchedulerKey, period, who asked), the one-owner guard
-- ReportRunOwnership, rollout modes, and indexes for the automation-activity report.
-- Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE ReportSubscription (
    Guid           TEXT    NOT NULL PRIMARY KEY,
    BusinessUnitId TEXT    NOT NULL,
    ReportType     TEXT    NOT NULL,
    Status         TEXT    NOT NULL CHECK (Status IN ('Active','Paused','Deleted')),
    Body           TEXT    NOT NULL,
    Version        INTEGER NOT NULL,
    CreatedOn      INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL
);
CREATE INDEX IX_ReportSubscription_BusinessUnit ON ReportSubscription (BusinessUnitId, Guid);

CREATE TABLE ReportRun (
    Id               INTEGER PRIMARY KEY AUTOINCREMENT,
    RunKeyHash       TEXT    NOT NULL UNIQUE,
    SchedulerKey     TEXT    NOT NULL UNIQUE,
    SubscriptionGuid TEXT    NOT NULL,
    BusinessUnitId   TEXT    NOT NULL,
    RunKind          TEXT    NOT NULL CHECK (RunKind IN ('Scheduled','Manual','SupportRetry')),
    OwnershipKey     TEXT    NOT NULL,
    PeriodStart      INTEGER NOT NULL,
    PeriodEnd        INTEGER NOT NULL,
    RequestedBy      TEXT    NULL,
    Reason           TEXT    NULL,
    CreatedOn        INTEGER NOT NULL
);
CREATE INDEX IX_ReportRun_Subscription ON ReportRun (SubscriptionGuid, Id);

CREATE TABLE ReportRunOwnership (
    SchedulerKey     TEXT    NOT NULL PRIMARY KEY,
    SubscriptionGuid TEXT    NOT NULL,
    RunKind          TEXT    NOT NULL CHECK (RunKind IN ('Scheduled','Manual','SupportRetry')),
    OwnerType        TEXT    NOT NULL CHECK (OwnerType IN ('OldScheduler','AutomationScheduler')),
    OwnerVersion     INTEGER NOT NULL,
    Status           TEXT    NOT NULL CHECK (Status IN ('Owned','DeliveryCreated','Cancelled')),
    CoordinatesJson  TEXT    NULL,
    Version          INTEGER NOT NULL,
    CreatedOn        INTEGER NOT NULL,
    UpdatedOn        INTEGER NOT NULL
);
CREATE INDEX IX_ReportRunOwnership_Subscription ON ReportRunOwnership (SubscriptionGuid, SchedulerKey);

CREATE TABLE ReportRollout (
    ScopeType TEXT    NOT NULL CHECK (ScopeType IN ('BusinessUnit','Subscription')),
    ScopeId   TEXT    NOT NULL,
    Mode      TEXT    NOT NULL,
    Version   INTEGER NOT NULL,
    UpdatedOn INTEGER NOT NULL,
    UpdatedBy TEXT    NULL,
    PRIMARY KEY (ScopeType, ScopeId)
);

-- The automation-activity report reads one business unit's writes in a period.
CREATE INDEX IX_NotificationJob_Activity ON NotificationJob (BusinessUnitId, UpdatedOn);
CREATE INDEX IX_AutomationScheduler_Activity ON AutomationScheduler (BusinessUnitId, UpdatedOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
