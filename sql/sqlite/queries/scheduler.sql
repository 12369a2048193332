-- AutomationScheduler queries (SQLite). Same names as sql/mssql/queries/scheduler.sql.
-- Parameters are named (@Name); "now" is always a parameter.

-- name: SchedulerGetByKey :one
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler WHERE SchedulerKey = @SchedulerKey;

-- name: SchedulerGetByKeys :many
-- The rows of up to store.MaxBatch keys (@Keys: a JSON array of strings) in one statement,
-- so one read transaction: SchedulerEnsure's first look, on the pool (docs/performance.md,
-- "The herd's scheduler side"). A key without a row returns nothing; a
-- seek of the SchedulerKey unique index per key.
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler WHERE SchedulerKey IN (SELECT value FROM json_each(@Keys));

-- name: SchedulerGetByKeyForUpdate :one
-- Same as SchedulerGetByKey: SQLite transactions here are BEGIN IMMEDIATE, so the write lock is
-- already held.
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler WHERE SchedulerKey = @SchedulerKey;

-- name: SchedulerInsert :one
INSERT INTO AutomationScheduler (Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid,
    SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate,
    ScheduledLocalTime, TimeZoneId, Status, ReasonCode, InputHash, Version, CreatedOn, UpdatedOn, TraceParent)
VALUES (@Guid, @AutomationType, @TriggerType, @SchedulerKey, @SettingGuid,
    @SourceEntityType, @SourceEntityGuid, @BusinessUnitId, @ScheduledOn, @ScheduledLocalDate,
    @ScheduledLocalTime, @TimeZoneId, @Status, @ReasonCode, @InputHash, 1, @Now, @Now, @TraceParent)
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SchedulerReschedule :one
-- Updated (Pending) or Reactivated (Failed/Deactivated/Cancelled): same key and InputHash.
-- Keeps RetryCount, diagnostics and dispatch coordinates.
UPDATE AutomationScheduler
SET Status = 'Pending', ReasonCode = NULL, NextRetryOn = NULL,
    ScheduledOn = @ScheduledOn, ScheduledLocalDate = @ScheduledLocalDate,
    ScheduledLocalTime = @ScheduledLocalTime, TimeZoneId = @TimeZoneId,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SchedulerHoldConflict :one
UPDATE AutomationScheduler
SET IsOnSupportHold = 1, ConflictInputHash = @ConflictInputHash,
    FailureReasonCode = 'InputHashConflict', Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SchedulerListBySource :many
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler
WHERE SourceEntityType = @SourceEntityType AND SourceEntityGuid = @SourceEntityGuid
ORDER BY Id
LIMIT @Limit;

-- name: SchedulerClaimDue :many
-- Set-based claim: one statement claims the batch; SQLite serialises writers, so no two
-- claimers can take the same row. The new Version is each row's token.
UPDATE AutomationScheduler
SET Status = 'Processing', ProcessingLeaseExpiresOn = @LeaseExpiresOn,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id IN (
    -- INDEXED BY: without statistics SQLite prefers an equality seek on Status and then
    -- sorts every Pending row; the partial index walks due rows in order and stops at @Limit.
    SELECT Id FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Due
    WHERE Status = 'Pending' AND IsOnSupportHold = 0 AND ScheduledOn <= @Now
      AND (NextRetryOn IS NULL OR NextRetryOn <= @Now)
    ORDER BY ScheduledOn, Id
    LIMIT @Limit)
  AND Status = 'Pending'
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SchedulerComplete :exec
UPDATE AutomationScheduler
SET Status = 'Completed', ProcessingLeaseExpiresOn = NULL, NextRetryOn = NULL,
    DispatchResultJson = @DispatchResultJson, CompletedOn = @Now,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status = 'Processing';

-- name: SchedulerCompleteMany :many
-- SchedulerComplete for many rows in one statement (the completion's fenced step,
-- docs/performance.md), expanded as NotificationInsertMany: each row (@Id, @Token, its
-- DispatchResultJson, its @Now) completes its scheduler row when that row is still
-- Processing at Version @Token, seeking the primary key per VALUES row. RETURNING lists the
-- rows it completed (Id, the new Version); a row it does not list was stale. The caller
-- sends each (Id, Token) once: of two VALUES rows that match one target row, SQLite applies
-- one. (VALUES columns are column1, …; every parameter is in the row tuple, as this dialect
-- binds rows by position.)
UPDATE AutomationScheduler
SET Status = 'Completed', ProcessingLeaseExpiresOn = NULL, NextRetryOn = NULL,
    DispatchResultJson = v.column3, CompletedOn = v.column4,
    Version = AutomationScheduler.Version + 1, UpdatedOn = v.column4
FROM (VALUES /*row*/(@Id, @Token, @DispatchResultJson, @Now)/*end*/) AS v
WHERE AutomationScheduler.Id = v.column1 AND AutomationScheduler.Version = v.column2
  AND AutomationScheduler.Status = 'Processing'
RETURNING Id, Version;

-- name: SchedulerFail :exec
UPDATE AutomationScheduler
SET Status = CASE WHEN @Hold = 1 THEN 'Failed' ELSE 'Pending' END,
    IsOnSupportHold = CASE WHEN @Hold = 1 THEN 1 ELSE IsOnSupportHold END,
    RetryCount = RetryCount + 1,
    NextRetryOn = CASE WHEN @Hold = 1 THEN NULL ELSE @NextRetryOn END,
    FailureReasonCode = @FailureReasonCode,
    TraceBlobName = COALESCE(@TraceBlobName, TraceBlobName),
    ProcessingLeaseExpiresOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status = 'Processing';

-- name: SchedulerDeactivate :exec
UPDATE AutomationScheduler
SET Status = 'Deactivated', ReasonCode = @ReasonCode, ProcessingLeaseExpiresOn = NULL,
    NextRetryOn = NULL, Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status IN ('Pending', 'Processing', 'Failed');

-- name: SchedulerListExpiredLeases :many
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Lease
WHERE Status = 'Processing' AND ProcessingLeaseExpiresOn <= @Now
ORDER BY ProcessingLeaseExpiresOn, Id
LIMIT @Limit;

-- name: SchedulerNextWakeUp :one
-- Two index searches (TestNextWakeUpSeeks): the first entry of IX_AutomationScheduler_NextWakeUp
-- (the CASE is that index's expression, verbatim) and the first of IX_AutomationScheduler_Lease.
-- One row; NULL when nothing is pending or processing.
SELECT MIN(t) FROM (
    SELECT MIN(CASE WHEN NextRetryOn IS NOT NULL AND NextRetryOn > ScheduledOn THEN NextRetryOn ELSE ScheduledOn END) AS t
    FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_NextWakeUp
    WHERE Status = 'Pending' AND IsOnSupportHold = 0
    UNION ALL
    SELECT MIN(ProcessingLeaseExpiresOn) AS t
    FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Lease WHERE Status = 'Processing'
) AS w;

-- name: SchedulerCountByStatus :many
SELECT Status, COUNT(*) FROM AutomationScheduler GROUP BY Status;
