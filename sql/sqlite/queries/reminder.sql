-- Business units, reminder settings, source snapshots, processed events (SQLite).

-- name: BusinessUnitUpsert :exec
INSERT INTO BusinessUnit (Id, Name, TimeZoneId) VALUES (@Id, @Name, @TimeZoneId)
ON CONFLICT (Id) DO UPDATE SET Name = excluded.Name, TimeZoneId = excluded.TimeZoneId;

-- name: BusinessUnitGet :one
SELECT Id, Name, TimeZoneId FROM BusinessUnit WHERE Id = @Id;

-- name: ReminderSettingUpsert :exec
INSERT INTO ReminderSetting (Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn)
VALUES (@Guid, @BusinessUnitId, @SourceType, @TriggerType, @IsActive, @Body, @Version, @UpdatedOn)
ON CONFLICT (Guid) DO UPDATE SET BusinessUnitId = excluded.BusinessUnitId,
    SourceType = excluded.SourceType, TriggerType = excluded.TriggerType,
    IsActive = excluded.IsActive, Body = excluded.Body, Version = excluded.Version,
    UpdatedOn = excluded.UpdatedOn;

-- name: ReminderSettingGet :one
SELECT Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn
FROM ReminderSetting WHERE Guid = @Guid;

-- name: ReminderSettingListBySource :many
SELECT Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn
FROM ReminderSetting WHERE BusinessUnitId = @BusinessUnitId AND SourceType = @SourceType
ORDER BY Guid;

-- name: SourceSnapshotGet :one
SELECT EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn
FROM SourceSnapshot WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid;

-- name: SourceSnapshotGetForUpdate :one
-- Same as SourceSnapshotGet: SQLite transactions here are BEGIN IMMEDIATE, so the write lock is
-- already held.
SELECT EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn
FROM SourceSnapshot WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid;

-- name: SourceSnapshotInsert :exec
INSERT INTO SourceSnapshot (EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn)
VALUES (@EntityType, @EntityGuid, @BusinessUnitId, @Revision, @IsDeleted, @DataJson, @LastEventId, @UpdatedOn);

-- name: SourceSnapshotUpdate :exec
-- Only a newer revision overwrites (out-of-order events are ignored).
UPDATE SourceSnapshot
SET BusinessUnitId = @BusinessUnitId, Revision = @Revision, IsDeleted = @IsDeleted,
    DataJson = @DataJson, LastEventId = @LastEventId, UpdatedOn = @UpdatedOn
WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid AND Revision < @Revision;

-- name: EventProcessedGet :one
SELECT COUNT(*) FROM ProcessedEvent WHERE EventSource = @EventSource AND EventId = @EventId;

-- name: EventMarkProcessed :exec
INSERT INTO ProcessedEvent (EventSource, EventId, ProcessedOn) VALUES (@EventSource, @EventId, @Now)
ON CONFLICT (EventSource, EventId) DO NOTHING;
