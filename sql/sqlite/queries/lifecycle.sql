-- Reminder lifecycle (SQLite): managed business units and settings, paging for settings
-- propagation and reconciliation, threshold edge state, sweep progress.
-- Same names, parameters and result columns as sql/mssql/queries/lifecycle.sql.
-- A scope is @AllUnits (1 = every business unit) or the JSON array @UnitsJson of ids.

-- name: BusinessUnitInsert :exec
INSERT INTO BusinessUnit (Id, Name, TimeZoneId, TimeZoneIdGiven, RolesJson, Version, UpdatedOn, UpdatedBy)
VALUES (@Id, @Name, @TimeZoneId, @TimeZoneIdGiven, @RolesJson, 1, @UpdatedOn, @UpdatedBy)
ON CONFLICT (Id) DO NOTHING;

-- name: BusinessUnitGetRecord :one
SELECT Id, Name, TimeZoneId, TimeZoneIdGiven, RolesJson, Version, UpdatedOn
FROM BusinessUnit WHERE Id = @Id;

-- name: BusinessUnitUpdate :exec
UPDATE BusinessUnit
SET Name = @Name, TimeZoneId = @TimeZoneId, TimeZoneIdGiven = @TimeZoneIdGiven, RolesJson = @RolesJson,
    Version = Version + 1, UpdatedOn = @UpdatedOn, UpdatedBy = @UpdatedBy
WHERE Id = @Id AND Version = @ExpectedVersion;

-- name: BusinessUnitList :many
SELECT Id, Name, TimeZoneId, TimeZoneIdGiven, RolesJson, Version, UpdatedOn
FROM BusinessUnit
WHERE (@AllUnits = 1 OR Id IN (SELECT value FROM json_each(@UnitsJson)))
  AND Id > @AfterId
ORDER BY Id
LIMIT @Limit;

-- name: ReminderSettingInsert :exec
INSERT INTO ReminderSetting (Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn, UpdatedBy)
VALUES (@Guid, @BusinessUnitId, @SourceType, @TriggerType, @IsActive, @Body, @Version, @UpdatedOn, @UpdatedBy)
ON CONFLICT (Guid) DO NOTHING;

-- name: ReminderSettingUpdate :exec
UPDATE ReminderSetting
SET BusinessUnitId = @BusinessUnitId, SourceType = @SourceType, TriggerType = @TriggerType,
    IsActive = @IsActive, Body = @Body, Version = @Version, UpdatedOn = @UpdatedOn, UpdatedBy = @UpdatedBy
WHERE Guid = @Guid AND Version = @ExpectedVersion;

-- name: ReminderSettingList :many
SELECT Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn
FROM ReminderSetting
WHERE (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@UnitsJson)))
  AND (@BusinessUnitId = '' OR BusinessUnitId = @BusinessUnitId)
  AND (@SourceType = '' OR SourceType = @SourceType)
  AND (@IsActive < 0 OR IsActive = @IsActive)
  AND Guid > @AfterGuid
ORDER BY Guid
LIMIT @Limit;

-- name: ReminderSettingListPairs :many
SELECT BusinessUnitId, SourceType
FROM ReminderSetting
WHERE IsActive = 1
  AND (BusinessUnitId > @AfterBusinessUnitId
       OR (BusinessUnitId = @AfterBusinessUnitId AND SourceType > @AfterSourceType))
GROUP BY BusinessUnitId, SourceType
ORDER BY BusinessUnitId, SourceType
LIMIT @Limit;

-- name: SourceSnapshotList :many
-- Keyset page by (UpdatedOn, EntityGuid) through IX_SourceSnapshot_Changed. @HasAfter = 0
-- starts at @ChangedSince.
SELECT EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn
FROM SourceSnapshot
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType
  AND UpdatedOn >= @ChangedSince
  AND (@HasAfter = 0 OR UpdatedOn > @AfterUpdatedOn OR (UpdatedOn = @AfterUpdatedOn AND EntityGuid > @AfterGuid))
  AND (@IncludeDeleted = 1 OR IsDeleted = 0)
ORDER BY UpdatedOn, EntityGuid
LIMIT @Limit;

-- name: SchedulerListBySetting :many
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler
WHERE SettingGuid = @SettingGuid AND Id > @AfterId AND Status IN ('Pending', 'Failed')
ORDER BY Id
LIMIT @Limit;

-- name: SchedulerListFuturePending :many
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler
WHERE Id > @AfterId AND Status = 'Pending' AND ScheduledOn > @Now
ORDER BY Id
LIMIT @Limit;

-- name: ThresholdEdgeGet :one
SELECT SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel, IsMet, EdgeCount, Revision, UpdatedOn
FROM ThresholdEdgeState
WHERE SettingGuid = @SettingGuid AND SourceEntityType = @SourceEntityType
  AND SourceEntityGuid = @SourceEntityGuid AND ThresholdLevel = @Level;

-- name: ThresholdEdgeGetForUpdate :one
-- Same as ThresholdEdgeGet: SQLite transactions here are BEGIN IMMEDIATE (write lock held).
SELECT SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel, IsMet, EdgeCount, Revision, UpdatedOn
FROM ThresholdEdgeState
WHERE SettingGuid = @SettingGuid AND SourceEntityType = @SourceEntityType
  AND SourceEntityGuid = @SourceEntityGuid AND ThresholdLevel = @Level;

-- name: ThresholdEdgeInsert :exec
INSERT INTO ThresholdEdgeState (SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel, IsMet, EdgeCount, Revision, UpdatedOn)
VALUES (@SettingGuid, @SourceEntityType, @SourceEntityGuid, @Level, @IsMet, @EdgeCount, @Revision, @UpdatedOn);

-- name: ThresholdEdgeUpdate :exec
-- Only a newer revision changes the state.
UPDATE ThresholdEdgeState
SET IsMet = @IsMet, EdgeCount = @EdgeCount, Revision = @Revision, UpdatedOn = @UpdatedOn
WHERE SettingGuid = @SettingGuid AND SourceEntityType = @SourceEntityType
  AND SourceEntityGuid = @SourceEntityGuid AND ThresholdLevel = @Level AND Revision < @Revision;

-- name: ReconcileStateGet :one
SELECT SweepKey, Generation, DoneGeneration, WatermarkOn, PassHighOn, CursorPosition, Marker, Version, UpdatedOn
FROM ReconciliationState WHERE SweepKey = @SweepKey;

-- name: ReconcileStateInsert :exec
INSERT INTO ReconciliationState (SweepKey, Generation, DoneGeneration, WatermarkOn, PassHighOn, CursorPosition, Marker, Version, UpdatedOn)
VALUES (@SweepKey, @Generation, @DoneGeneration, @WatermarkOn, @PassHighOn, @Position, @Marker, 1, @UpdatedOn)
ON CONFLICT (SweepKey) DO NOTHING;

-- name: ReconcileStateUpdate :exec
UPDATE ReconciliationState
SET Generation = @Generation, DoneGeneration = @DoneGeneration, WatermarkOn = @WatermarkOn,
    PassHighOn = @PassHighOn, CursorPosition = @Position, Marker = @Marker,
    Version = Version + 1, UpdatedOn = @UpdatedOn
WHERE SweepKey = @SweepKey AND Version = @Version;

-- name: ReconcileStateRequest :exec
INSERT INTO ReconciliationState (SweepKey, Generation, DoneGeneration, Version, UpdatedOn)
VALUES (@SweepKey, 1, 0, 1, @UpdatedOn)
ON CONFLICT (SweepKey) DO UPDATE SET Generation = Generation + 1, CursorPosition = NULL, PassHighOn = NULL,
    Version = Version + 1, UpdatedOn = excluded.UpdatedOn;

-- name: ReconcileStateListRequested :many
SELECT SweepKey, Generation, DoneGeneration, WatermarkOn, PassHighOn, CursorPosition, Marker, Version, UpdatedOn
FROM ReconciliationState
WHERE Generation > DoneGeneration AND substr(SweepKey, 1, length(@Prefix)) = @Prefix
ORDER BY UpdatedOn, SweepKey
LIMIT @Limit;
