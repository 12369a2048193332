-- Business units, reminder settings, source snapshots, processed events (SQL Server).
-- Same names, parameters and result columns as sql/sqlite/queries/reminder.sql.
--
-- Upserts are "guarded insert, then update if the insert found the row": the INSERT's
-- existence check holds an UPDLOCK + HOLDLOCK key-range lock until the insert is done, so
-- exactly one of two concurrent first writers inserts and the other updates. Each statement
-- is atomic on its own, so this is race-safe with or without an enclosing transaction. (The
-- reverse order, UPDATE WITH (SERIALIZABLE) then INSERT when @@ROWCOUNT = 0, is only safe
-- inside an explicit transaction: in autocommit the range lock ends with the UPDATE and two
-- callers can both reach the INSERT.) MERGE WITH (HOLDLOCK) would also be correct; plain
-- statements are easier to review.

-- name: BusinessUnitUpsert :exec
INSERT INTO dbo.BusinessUnit (Id, Name, TimeZoneId)
SELECT @Id, @Name, @TimeZoneId
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.BusinessUnit WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Id = @Id);
IF @@ROWCOUNT = 0
    UPDATE dbo.BusinessUnit SET Name = @Name, TimeZoneId = @TimeZoneId WHERE Id = @Id;

-- name: BusinessUnitGet :one
SELECT Id, Name, TimeZoneId FROM dbo.BusinessUnit WHERE Id = @Id;

-- name: ReminderSettingUpsert :exec
INSERT INTO dbo.ReminderSetting (Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn)
SELECT @Guid, @BusinessUnitId, @SourceType, @TriggerType, @IsActive, @Body, @Version, @UpdatedOn
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.ReminderSetting WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Guid = @Guid);
IF @@ROWCOUNT = 0
    UPDATE dbo.ReminderSetting
    SET BusinessUnitId = @BusinessUnitId, SourceType = @SourceType, TriggerType = @TriggerType,
        IsActive = @IsActive, Body = @Body, Version = @Version, UpdatedOn = @UpdatedOn
    WHERE Guid = @Guid;

-- name: ReminderSettingGet :one
SELECT Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn
FROM dbo.ReminderSetting WHERE Guid = @Guid;

-- name: ReminderSettingListBySource :many
SELECT Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn
FROM dbo.ReminderSetting WHERE BusinessUnitId = @BusinessUnitId AND SourceType = @SourceType
ORDER BY Guid;

-- name: SourceSnapshotGetForUpdate :one
-- Also the read of SourceSnapshotApply's read-then-write transaction: UPDLOCK + HOLDLOCK
-- keep the row (or, for a new entity, the key range) locked until that transaction ends,
-- so two concurrent applies of one entity serialise instead of both inserting (duplicate
-- key) or both updating from the same stale read. Outside a transaction the locks last
-- for this statement only.
SELECT EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn
FROM dbo.SourceSnapshot WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid;

-- name: SourceSnapshotGet :one
-- A plain read (no locks); the ensure/apply transactions use SourceSnapshotGetForUpdate.
SELECT EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn
FROM dbo.SourceSnapshot
WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid;

-- name: SourceSnapshotInsert :exec
INSERT INTO dbo.SourceSnapshot (EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn)
VALUES (@EntityType, @EntityGuid, @BusinessUnitId, @Revision, @IsDeleted, @DataJson, @LastEventId, @UpdatedOn);

-- name: SourceSnapshotUpdate :exec
-- Only a newer revision overwrites (out-of-order events are ignored).
UPDATE dbo.SourceSnapshot
SET BusinessUnitId = @BusinessUnitId, Revision = @Revision, IsDeleted = @IsDeleted,
    DataJson = @DataJson, LastEventId = @LastEventId, UpdatedOn = @UpdatedOn
WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid AND Revision < @Revision;

-- name: EventProcessedGet :one
SELECT COUNT(*) FROM dbo.ProcessedEvent WHERE EventSource = @EventSource AND EventId = @EventId;

-- name: EventMarkProcessed :exec
-- Idempotent; race-safe as NotificationInsert.
INSERT INTO dbo.ProcessedEvent (EventSource, EventId, ProcessedOn)
SELECT @EventSource, @EventId, @Now
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.ProcessedEvent WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
    WHERE EventSource = @EventSource AND EventId = @EventId);
