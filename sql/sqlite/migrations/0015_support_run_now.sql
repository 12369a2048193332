-- +goose Up
-- Run now and the console (docs/console.md). The support audit records a
-- fifth action, 'RunNow'. SQLite cannot change a CHECK constraint in place, so SupportAudit
-- is rebuilt with the same columns, rows and index; nothing references it.
CREATE TABLE SupportAudit_0015 (
    Id                INTEGER PRIMARY KEY AUTOINCREMENT,
    SchedulerId       INTEGER NOT NULL,
    SchedulerKey      TEXT    NOT NULL,
    BusinessUnitId    TEXT    NOT NULL,
    Action            TEXT    NOT NULL CHECK (Action IN ('Release','RetryNow','SupportRetry','Cancel','RunNow')),
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
INSERT INTO SupportAudit_0015 (Id, SchedulerId, SchedulerKey, BusinessUnitId, Action, Operator, Reason, StatusBefore,
    StatusAfter, VersionBefore, VersionAfter, RetrySchedulerKey, DueOn, BatchId, CreatedOn)
SELECT Id, SchedulerId, SchedulerKey, BusinessUnitId, Action, Operator, Reason, StatusBefore,
    StatusAfter, VersionBefore, VersionAfter, RetrySchedulerKey, DueOn, BatchId, CreatedOn
FROM SupportAudit;
DROP TABLE SupportAudit;
ALTER TABLE SupportAudit_0015 RENAME TO SupportAudit;
CREATE INDEX IX_SupportAudit_Scheduler ON SupportAudit (SchedulerId, Id);

-- The console's throughput chart (shared/support Throughput): deliveries by the minute of
-- their last change, a bounded range seek; covering, so no table rows are read.
CREATE INDEX IX_NotificationJob_Updated ON NotificationJob (UpdatedOn, Status, BusinessUnitId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
