-- +goose Up
-- Support API (shared/support, docs/architecture.md#support-actions, docs/operations.md#support-api): the audit of operators' actions, the
-- pace of bulk hold releases, the latest ignored (older-revision) event per source for the
-- explain endpoint, and the indexes the support find and metrics queries seek on.
-- Instants are INTEGER milliseconds since the Unix epoch, UTC.

-- One row per operator action on one scheduler row (release, retry now, support retry,
-- cancel): who, why, and the row's status and Version before and after.
CREATE TABLE SupportAudit (
    Id                INTEGER PRIMARY KEY AUTOINCREMENT,
    SchedulerId       INTEGER NOT NULL,
    SchedulerKey      TEXT    NOT NULL,
    BusinessUnitId    TEXT    NOT NULL,
    Action            TEXT    NOT NULL CHECK (Action IN ('Release','RetryNow','SupportRetry','Cancel')),
    Operator          TEXT    NOT NULL,
    Reason            TEXT    NOT NULL,
    StatusBefore      TEXT    NOT NULL,
    StatusAfter       TEXT    NOT NULL,
    VersionBefore     INTEGER NOT NULL,
    VersionAfter      INTEGER NOT NULL,
    RetrySchedulerKey TEXT    NULL,
    DueOn             INTEGER NULL,
    BatchId           TEXT    NULL,
    CreatedOn         INTEGER NOT NULL
);
CREATE INDEX IX_SupportAudit_Scheduler ON SupportAudit (SchedulerId, Id);

-- The pace of bulk releases: NextSlotOn is the earliest instant the next paced batch may
-- become due, shared by every release so concurrent releases never add up past their rate.
CREATE TABLE SupportReleasePace (
    Name       TEXT    NOT NULL PRIMARY KEY,
    NextSlotOn INTEGER NOT NULL
);

-- The most recent event of a source that was ignored because its revision was older than
-- the stored snapshot's (one row per source; explain shows it).
CREATE TABLE SourceStaleEvent (
    EntityType     TEXT    NOT NULL,
    EntityGuid     TEXT    NOT NULL,
    EventId        TEXT    NOT NULL,
    Revision       INTEGER NOT NULL,
    StoredRevision INTEGER NOT NULL,
    StoredEventId  TEXT    NOT NULL,
    ReceivedOn     INTEGER NOT NULL,
    PRIMARY KEY (EntityType, EntityGuid)
);

-- Find by business unit (newest first) and by status (newest first); by status and business
-- unit uses IX_AutomationScheduler_Status (Status, BusinessUnitId, then the rowid).
CREATE INDEX IX_AutomationScheduler_BusinessUnit ON AutomationScheduler (BusinessUnitId, Id);
CREATE INDEX IX_AutomationScheduler_StatusId ON AutomationScheduler (Status, Id);
-- Find by scheduledOn range, in schedule order.
CREATE INDEX IX_AutomationScheduler_ScheduledOn ON AutomationScheduler (ScheduledOn, Id);
-- Rows on support hold (few by nature), in Id order: find, bulk release, metrics by reason.
CREATE INDEX IX_AutomationScheduler_Hold ON AutomationScheduler (Id)
    WHERE IsOnSupportHold = 1;
-- Metrics: deactivations of the last 24 hours by reason.
CREATE INDEX IX_AutomationScheduler_Deactivated ON AutomationScheduler (UpdatedOn, ReasonCode, BusinessUnitId)
    WHERE Status = 'Deactivated';
-- Metrics: deliveries whose outcome is UNKNOWN (status 'Unknown', docs/architecture.md#unknown-outcomes).
CREATE INDEX IX_NotificationJob_UnknownAll ON NotificationJob (BusinessUnitId)
    WHERE Status = 'Unknown';

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
