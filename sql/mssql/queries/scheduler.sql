-- AutomationScheduler queries (SQL Server). Same names, parameters and result columns as
-- sql/sqlite/queries/scheduler.sql. Parameters are named (@Name); "now" is always a parameter.
-- RETURNING in SQLite is OUTPUT inserted.<columns> here (no triggers on the table, see the
-- migration). Status literals are N'...' to match the nvarchar columns and the filtered indexes.

-- name: SchedulerGetByKeyForUpdate :one
-- Also the first statement of every ensure (read, decide, then insert or update in the same
-- transaction). UPDLOCK + HOLDLOCK make that read-then-write safe under concurrency: for an
-- existing row the update lock is held to the end of the transaction, and for a missing key
-- HOLDLOCK (= SERIALIZABLE) holds a key-range lock on the unique SchedulerKey index, so a
-- second ensure of the same key waits at this read until the first commits and then sees
-- its row (Unchanged) instead of failing on the unique index. Without the hints, READ
-- COMMITTED (and READ_COMMITTED_SNAPSHOT, the Azure SQL default, which does not lock at
-- all) releases or never takes the lock. Outside a transaction the locks last for this
-- statement only.
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE SchedulerKey = @SchedulerKey;

-- name: SchedulerGetByKeys :many
-- The rows of up to store.MaxBatch keys (@Keys: a JSON array of strings) in one statement:
-- SchedulerEnsure's first look, a plain read without locks (under READ_COMMITTED_SNAPSHOT one
-- committed state for the statement); the ensure transaction that follows when a key needs
-- a write reads again with SchedulerGetByKeyForUpdate. A seek of UQ_AutomationScheduler_
-- SchedulerKey per key: the keys are cast to the column's type and collation.
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE SchedulerKey IN (SELECT CAST(k.value AS nvarchar(400)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Keys) AS k);

-- name: SchedulerGetByKey :one
-- A plain read (no locks); the ensure/apply transactions use SchedulerGetByKeyForUpdate.
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE SchedulerKey = @SchedulerKey;

-- name: SchedulerInsert :one
INSERT INTO dbo.AutomationScheduler (Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid,
    SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate,
    ScheduledLocalTime, TimeZoneId, Status, ReasonCode, InputHash, Version, CreatedOn, UpdatedOn, TraceParent)
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
VALUES (@Guid, @AutomationType, @TriggerType, @SchedulerKey, @SettingGuid,
    @SourceEntityType, @SourceEntityGuid, @BusinessUnitId, @ScheduledOn, @ScheduledLocalDate,
    @ScheduledLocalTime, @TimeZoneId, @Status, @ReasonCode, @InputHash, 1, @Now, @Now, @TraceParent);

-- name: SchedulerReschedule :one
-- Updated (Pending) or Reactivated (Failed/Deactivated/Cancelled): same key and InputHash.
-- Keeps RetryCount, diagnostics and dispatch coordinates.
UPDATE dbo.AutomationScheduler
SET Status = N'Pending', ReasonCode = NULL, NextRetryOn = NULL,
    ScheduledOn = @ScheduledOn, ScheduledLocalDate = @ScheduledLocalDate,
    ScheduledLocalTime = @ScheduledLocalTime, TimeZoneId = @TimeZoneId,
    Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
WHERE Id = @Id AND Version = @Version;

-- name: SchedulerHoldConflict :one
UPDATE dbo.AutomationScheduler
SET IsOnSupportHold = 1, ConflictInputHash = @ConflictInputHash,
    FailureReasonCode = N'InputHashConflict', Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
WHERE Id = @Id AND Version = @Version;

-- name: SchedulerListBySource :many
SELECT TOP (@Limit) Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE SourceEntityType = @SourceEntityType AND SourceEntityGuid = @SourceEntityGuid
ORDER BY Id;

-- name: SchedulerClaimDue :many
-- Set-based claim: one statement claims the batch, oldest ScheduledOn first. UPDATE TOP takes
-- no ORDER BY, so the ordered TOP is a CTE over the due index (IX_AutomationScheduler_Due)
-- joined back by Id.
--   UPDLOCK   the rows read are update-locked until the claim commits, so two claimers
--             never both take a row; it also makes the read a locking read under
--             READ_COMMITTED_SNAPSHOT (Azure SQL's default), where a plain read would be a
--             versioned read with nothing to skip.
--   READPAST  rows another claimer (or an ensure) holds locked are skipped instead of
--             waited for, so concurrent claimers take disjoint batches without queueing.
--   ROWLOCK   row/key locks, not page locks (READPAST only skips row-level locks).
-- The outer WHERE re-checks Status; the new Version in OUTPUT is each row's token. The
-- adapter sorts the returned rows (OUTPUT order is unspecified).
WITH due AS (
    SELECT TOP (@Limit) Id
    FROM dbo.AutomationScheduler WITH (UPDLOCK, READPAST, ROWLOCK)
    WHERE Status = N'Pending' AND IsOnSupportHold = 0 AND ScheduledOn <= @Now
      AND (NextRetryOn IS NULL OR NextRetryOn <= @Now)
    ORDER BY ScheduledOn, Id
)
UPDATE s
SET Status = N'Processing', ProcessingLeaseExpiresOn = @LeaseExpiresOn,
    Version = s.Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
FROM dbo.AutomationScheduler AS s
INNER JOIN due ON due.Id = s.Id
WHERE s.Status = N'Pending';

-- name: SchedulerComplete :exec
UPDATE dbo.AutomationScheduler
SET Status = N'Completed', ProcessingLeaseExpiresOn = NULL, NextRetryOn = NULL,
    DispatchResultJson = @DispatchResultJson, CompletedOn = @Now,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status = N'Processing';

-- name: SchedulerCompleteMany :many
-- SchedulerComplete for many rows in one statement (the completion's fenced step), the rows
-- in @Rows as NotificationInsertMany (delivery.sql): each row (Id, Token, its
-- DispatchResultJson, its Now) completes its scheduler row when that row is still Processing
-- at Version Token, a clustered index seek per row.
-- OUTPUT lists the rows it completed (Id, the new Version); a row it does not list was
-- stale. The caller sends each (Id, Token) once, so no target row matches two VALUES rows.
UPDATE s
SET Status = N'Completed', ProcessingLeaseExpiresOn = NULL, NextRetryOn = NULL,
    DispatchResultJson = v.j, CompletedOn = v.n,
    Version = s.Version + 1, UpdatedOn = v.n
OUTPUT inserted.Id, inserted.Version
FROM dbo.AutomationScheduler AS s
JOIN OPENJSON(@Rows) WITH (i bigint '$.Id', t bigint '$.Token', j nvarchar(max) '$.DispatchResultJson',
    n datetime2(3) '$.Now') AS v
  ON s.Id = v.i AND s.Version = v.t
WHERE s.Status = N'Processing';

-- name: SchedulerFail :exec
UPDATE dbo.AutomationScheduler
SET Status = CASE WHEN @Hold = 1 THEN N'Failed' ELSE N'Pending' END,
    IsOnSupportHold = CASE WHEN @Hold = 1 THEN CAST(1 AS bit) ELSE IsOnSupportHold END,
    RetryCount = RetryCount + 1,
    NextRetryOn = CASE WHEN @Hold = 1 THEN NULL ELSE @NextRetryOn END,
    FailureReasonCode = @FailureReasonCode,
    TraceBlobName = COALESCE(@TraceBlobName, TraceBlobName),
    ProcessingLeaseExpiresOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status = N'Processing';

-- name: SchedulerDeactivate :exec
UPDATE dbo.AutomationScheduler
SET Status = N'Deactivated', ReasonCode = @ReasonCode, ProcessingLeaseExpiresOn = NULL,
    NextRetryOn = NULL, Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status IN (N'Pending', N'Processing', N'Failed');

-- name: SchedulerListExpiredLeases :many
SELECT TOP (@Limit) Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE Status = N'Processing' AND ProcessingLeaseExpiresOn <= @Now
ORDER BY ProcessingLeaseExpiresOn, Id;

-- name: SchedulerNextWakeUp :one
-- One row; NULL when nothing is pending or processing. Two seeks: the first WakeUpOn of
-- IX_AutomationScheduler_NextWakeUp (Status, IsOnSupportHold, WakeUpOn; WakeUpOn is the computed
-- max(ScheduledOn, NextRetryOn)) and the first lease of the filtered IX_AutomationScheduler_Lease.
SELECT MIN(t) FROM (
    SELECT MIN(WakeUpOn) AS t
    FROM dbo.AutomationScheduler WITH (INDEX (IX_AutomationScheduler_NextWakeUp))
    WHERE Status = N'Pending' AND IsOnSupportHold = 0
    UNION ALL
    SELECT MIN(ProcessingLeaseExpiresOn) AS t
    FROM dbo.AutomationScheduler WHERE Status = N'Processing'
) AS w;

-- name: SchedulerCountByStatus :many
SELECT Status, COUNT(*) FROM dbo.AutomationScheduler GROUP BY Status;
