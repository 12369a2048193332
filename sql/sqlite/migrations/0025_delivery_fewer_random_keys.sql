-- +goose Up
-- Two random-key index entries fewer per delivery (docs/performance.md, "Two random-key
-- indexes fewer per delivery"). A 1000-row completion inserted each new job into four
-- indexes whose keys arrive in no useful order: DeliveryKey, (BusinessUnitId, EffectKey),
-- SchedulerKey, and the outbox's MessageId. Each such insert dirties a different leaf page,
-- which the commit writes to the log and the checkpoint writes again.
--
-- 1. IX_NotificationJob_SchedulerKey (88-byte text keys) becomes IX_NotificationJob_SchedulerId
--    on the new integer column SchedulerId: the Id of the AutomationScheduler row with the
--    job's SchedulerKey (scheduler rows are never deleted and their key is unique, so it
--    never changes). The completion's rows arrive in Id order, so the index grows at its
--    end. A job whose key had no scheduler row when it was written keeps SchedulerId NULL
--    and is found by IX_NotificationJob_SchedulerKeyUnlinked, which holds only those.
-- 2. The effect's uniqueness per business unit (docs/architecture.md#commands): a job whose
--    EffectKey is its own DeliveryKey (every reminder delivery) is already unique by its
--    DeliveryKey, so the unique index UX_NotificationJob_Effect holds only jobs whose effect
--    is another key. The inserts (NotificationInsert, NotificationInsertMany) check the one
--    case neither index sees: a job whose effect is the delivery key of another job of its
--    unit, in either order.
--
-- SQLite cannot drop a table's UNIQUE constraint in place: NotificationJob is rebuilt with
-- every row, Id and its AUTOINCREMENT sequence; nothing references it.
CREATE TABLE NotificationJob_0025 (
    Id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    DeliveryKey              TEXT    NOT NULL UNIQUE,
    EffectKey                TEXT    NOT NULL,
    SchedulerKey             TEXT    NOT NULL,
    SchedulerId              INTEGER NULL,
    BusinessUnitId           TEXT    NOT NULL,
    Channel                  TEXT    NOT NULL,
    Recipient                TEXT    NOT NULL,
    Template                 TEXT    NOT NULL,
    PayloadJson              TEXT    NOT NULL,
    LocalDate                TEXT    NOT NULL,
    Status                   TEXT    NOT NULL CHECK (Status IN ('Queued','Sending','Sent','Failed','Unknown')),
    ProcessingLeaseExpiresOn INTEGER NULL,
    AttemptCount             INTEGER NOT NULL DEFAULT 0,
    RetryCount               INTEGER NOT NULL DEFAULT 0,
    NextAttemptOn            INTEGER NULL,
    IsOnSupportHold          INTEGER NOT NULL DEFAULT 0,
    ProviderReference        TEXT    NULL,
    LastError                TEXT    NULL,
    TemplateVersion          INTEGER NULL,
    Revision                 INTEGER NOT NULL DEFAULT 1,
    ResolvedBy               TEXT    NULL,
    ResolutionReason         TEXT    NULL,
    ResolvedOn               INTEGER NULL,
    Version                  INTEGER NOT NULL DEFAULT 1,
    CreatedOn                INTEGER NOT NULL,
    UpdatedOn                INTEGER NOT NULL,
    SentOn                   INTEGER NULL
);
INSERT INTO NotificationJob_0025 (Id, DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel,
    Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount,
    NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy,
    ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn)
SELECT n.Id, n.DeliveryKey, n.EffectKey, n.SchedulerKey,
    (SELECT s.Id FROM AutomationScheduler s WHERE s.SchedulerKey = n.SchedulerKey), n.BusinessUnitId, n.Channel,
    n.Recipient, n.Template, n.PayloadJson, n.LocalDate, n.Status, n.ProcessingLeaseExpiresOn, n.AttemptCount, n.RetryCount,
    n.NextAttemptOn, n.IsOnSupportHold, n.ProviderReference, n.LastError, n.TemplateVersion, n.Revision, n.ResolvedBy,
    n.ResolutionReason, n.ResolvedOn, n.Version, n.CreatedOn, n.UpdatedOn, n.SentOn
FROM NotificationJob n ORDER BY n.Id;
-- The old table's sequence, not the highest Id copied: an Id is never handed out twice.
DELETE FROM sqlite_sequence WHERE name = 'NotificationJob_0025';
INSERT INTO sqlite_sequence (name, seq) SELECT 'NotificationJob_0025', seq FROM sqlite_sequence WHERE name = 'NotificationJob';
DROP TABLE NotificationJob;
ALTER TABLE NotificationJob_0025 RENAME TO NotificationJob;

CREATE UNIQUE INDEX UX_NotificationJob_Effect ON NotificationJob (BusinessUnitId, EffectKey)
    WHERE EffectKey <> DeliveryKey;
CREATE INDEX IX_NotificationJob_SchedulerId ON NotificationJob (SchedulerId);
CREATE INDEX IX_NotificationJob_SchedulerKeyUnlinked ON NotificationJob (SchedulerKey)
    WHERE SchedulerId IS NULL;
-- The indexes of the table before, unchanged (0004, 0005, 0015).
CREATE INDEX IX_NotificationJob_NextAttempt ON NotificationJob (NextAttemptOn)
    WHERE Status IN ('Queued','Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0;
CREATE INDEX IX_NotificationJob_Lease ON NotificationJob (ProcessingLeaseExpiresOn)
    WHERE Status = 'Sending';
CREATE INDEX IX_NotificationJob_Unknown ON NotificationJob (BusinessUnitId, Id)
    WHERE Status = 'Unknown' AND NextAttemptOn IS NULL;
CREATE INDEX IX_NotificationJob_UnknownAll ON NotificationJob (BusinessUnitId)
    WHERE Status = 'Unknown';
CREATE INDEX IX_NotificationJob_Unsent ON NotificationJob (Id)
    WHERE Status IN ('Queued','Sending');
CREATE INDEX IX_NotificationJob_Updated ON NotificationJob (UpdatedOn, Status, BusinessUnitId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
