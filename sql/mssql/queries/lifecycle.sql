-- Reminder lifecycle (SQL Server). Same names, parameters and result columns as
-- sql/sqlite/queries/lifecycle.sql. A scope is @AllUnits (1 = every business unit) or the
-- JSON array @UnitsJson of ids (OPENJSON needs compatibility level 130+, Azure SQL's default).
-- Inserts that must not overwrite are guarded by NOT EXISTS with UPDLOCK + HOLDLOCK (see
-- reminder.sql); the adapter reads RowsAffected to tell "inserted" from "already there".

-- name: BusinessUnitInsert :exec
INSERT INTO dbo.BusinessUnit (Id, Name, TimeZoneId, TimeZoneIdGiven, RolesJson, Version, UpdatedOn, UpdatedBy)
SELECT @Id, @Name, @TimeZoneId, @TimeZoneIdGiven, @RolesJson, 1, @UpdatedOn, @UpdatedBy
WHERE NOT EXISTS (SELECT 1 FROM dbo.BusinessUnit WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Id = @Id);

-- name: BusinessUnitGetRecord :one
SELECT Id, Name, TimeZoneId, TimeZoneIdGiven, RolesJson, Version, UpdatedOn
FROM dbo.BusinessUnit WHERE Id = @Id;

-- name: BusinessUnitUpdate :exec
UPDATE dbo.BusinessUnit
SET Name = @Name, TimeZoneId = @TimeZoneId, TimeZoneIdGiven = @TimeZoneIdGiven, RolesJson = @RolesJson,
    Version = Version + 1, UpdatedOn = @UpdatedOn, UpdatedBy = @UpdatedBy
WHERE Id = @Id AND Version = @ExpectedVersion;

-- name: BusinessUnitList :many
SELECT TOP (@Limit) Id, Name, TimeZoneId, TimeZoneIdGiven, RolesJson, Version, UpdatedOn
FROM dbo.BusinessUnit
WHERE (@AllUnits = 1 OR Id IN (SELECT CAST(value AS nvarchar(100)) FROM OPENJSON(@UnitsJson)))
  AND Id > @AfterId
ORDER BY Id;

-- name: ReminderSettingInsert :exec
INSERT INTO dbo.ReminderSetting (Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn, UpdatedBy)
SELECT @Guid, @BusinessUnitId, @SourceType, @TriggerType, @IsActive, @Body, @Version, @UpdatedOn, @UpdatedBy
WHERE NOT EXISTS (SELECT 1 FROM dbo.ReminderSetting WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Guid = @Guid);

-- name: ReminderSettingUpdate :exec
UPDATE dbo.ReminderSetting
SET BusinessUnitId = @BusinessUnitId, SourceType = @SourceType, TriggerType = @TriggerType,
    IsActive = @IsActive, Body = @Body, Version = @Version, UpdatedOn = @UpdatedOn, UpdatedBy = @UpdatedBy
WHERE Guid = @Guid AND Version = @ExpectedVersion;

-- name: ReminderSettingList :many
SELECT TOP (@Limit) Guid, BusinessUnitId, SourceType, TriggerType, IsActive, Body, Version, UpdatedOn
FROM dbo.ReminderSetting
WHERE (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(value AS nvarchar(100)) FROM OPENJSON(@UnitsJson)))
  AND (@BusinessUnitId = N'' OR BusinessUnitId = @BusinessUnitId)
  AND (@SourceType = N'' OR SourceType = @SourceType)
  AND (@IsActive < 0 OR IsActive = @IsActive)
  AND Guid > @AfterGuid
ORDER BY Guid;

-- name: ReminderSettingListPairs :many
SELECT TOP (@Limit) BusinessUnitId, SourceType
FROM dbo.ReminderSetting
WHERE IsActive = 1
  AND (BusinessUnitId > @AfterBusinessUnitId
       OR (BusinessUnitId = @AfterBusinessUnitId AND SourceType > @AfterSourceType))
GROUP BY BusinessUnitId, SourceType
ORDER BY BusinessUnitId, SourceType;

-- name: SourceSnapshotList :many
-- Keyset page by (UpdatedOn, EntityGuid) through IX_SourceSnapshot_Changed. @HasAfter = 0
-- starts at @ChangedSince.
SELECT TOP (@Limit) EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn
FROM dbo.SourceSnapshot
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType
  AND UpdatedOn >= @ChangedSince
  AND (@HasAfter = 0 OR UpdatedOn > @AfterUpdatedOn OR (UpdatedOn = @AfterUpdatedOn AND EntityGuid > @AfterGuid))
  AND (@IncludeDeleted = 1 OR IsDeleted = 0)
ORDER BY UpdatedOn, EntityGuid;

-- name: SchedulerListBySetting :many
SELECT TOP (@Limit) Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE SettingGuid = @SettingGuid AND Id > @AfterId AND Status IN (N'Pending', N'Failed')
ORDER BY Id;

-- name: SchedulerListFuturePending :many
SELECT TOP (@Limit) Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE Id > @AfterId AND Status = N'Pending' AND ScheduledOn > @Now
ORDER BY Id;

-- name: ThresholdEdgeGet :one
SELECT SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel, IsMet, EdgeCount, Revision, UpdatedOn
FROM dbo.ThresholdEdgeState
WHERE SettingGuid = @SettingGuid AND SourceEntityType = @SourceEntityType
  AND SourceEntityGuid = @SourceEntityGuid AND ThresholdLevel = @Level;

-- name: ThresholdEdgeGetForUpdate :one
-- The read of ThresholdEdgeApply's read-then-write transaction: UPDLOCK + HOLDLOCK hold the
-- row (or the key range of a missing one) until the transaction ends, so two concurrent
-- applies of one level serialise.
SELECT SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel, IsMet, EdgeCount, Revision, UpdatedOn
FROM dbo.ThresholdEdgeState WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE SettingGuid = @SettingGuid AND SourceEntityType = @SourceEntityType
  AND SourceEntityGuid = @SourceEntityGuid AND ThresholdLevel = @Level;

-- name: ThresholdEdgeInsert :exec
INSERT INTO dbo.ThresholdEdgeState (SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel, IsMet, EdgeCount, Revision, UpdatedOn)
VALUES (@SettingGuid, @SourceEntityType, @SourceEntityGuid, @Level, @IsMet, @EdgeCount, @Revision, @UpdatedOn);

-- name: ThresholdEdgeUpdate :exec
-- Only a newer revision changes the state.
UPDATE dbo.ThresholdEdgeState
SET IsMet = @IsMet, EdgeCount = @EdgeCount, Revision = @Revision, UpdatedOn = @UpdatedOn
WHERE SettingGuid = @SettingGuid AND SourceEntityType = @SourceEntityType
  AND SourceEntityGuid = @SourceEntityGuid AND ThresholdLevel = @Level AND Revision < @Revision;

-- name: ReconcileStateGet :one
SELECT SweepKey, Generation, DoneGeneration, WatermarkOn, PassHighOn, CursorPosition, Marker, Version, UpdatedOn
FROM dbo.ReconciliationState WHERE SweepKey = @SweepKey;

-- name: ReconcileStateInsert :exec
INSERT INTO dbo.ReconciliationState (SweepKey, Generation, DoneGeneration, WatermarkOn, PassHighOn, CursorPosition, Marker, Version, UpdatedOn)
SELECT @SweepKey, @Generation, @DoneGeneration, @WatermarkOn, @PassHighOn, @Position, @Marker, 1, @UpdatedOn
WHERE NOT EXISTS (SELECT 1 FROM dbo.ReconciliationState WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE SweepKey = @SweepKey);

-- name: ReconcileStateUpdate :exec
UPDATE dbo.ReconciliationState
SET Generation = @Generation, DoneGeneration = @DoneGeneration, WatermarkOn = @WatermarkOn,
    PassHighOn = @PassHighOn, CursorPosition = @Position, Marker = @Marker,
    Version = Version + 1, UpdatedOn = @UpdatedOn
WHERE SweepKey = @SweepKey AND Version = @Version;

-- name: ReconcileStateRequest :exec
-- Upsert, race-safe as BusinessUnitUpsert in reminder.sql.
INSERT INTO dbo.ReconciliationState (SweepKey, Generation, DoneGeneration, Version, UpdatedOn)
SELECT @SweepKey, 1, 0, 1, @UpdatedOn
WHERE NOT EXISTS (SELECT 1 FROM dbo.ReconciliationState WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE SweepKey = @SweepKey);
IF @@ROWCOUNT = 0
    UPDATE dbo.ReconciliationState
    SET Generation = Generation + 1, CursorPosition = NULL, PassHighOn = NULL,
        Version = Version + 1, UpdatedOn = @UpdatedOn
    WHERE SweepKey = @SweepKey;

-- name: ReconcileStateListRequested :many
SELECT TOP (@Limit) SweepKey, Generation, DoneGeneration, WatermarkOn, PassHighOn, CursorPosition, Marker, Version, UpdatedOn
FROM dbo.ReconciliationState
WHERE Generation > DoneGeneration AND LEFT(SweepKey, LEN(@Prefix)) = @Prefix
ORDER BY UpdatedOn, SweepKey;
