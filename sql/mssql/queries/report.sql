-- Report subscriptions, run registry, ReportRunOwnership, rollout and activity (SQL Server).
-- Same names, parameters and result columns as sql/sqlite/queries/report.sql. "Insert unless
-- present" statements guard the insert with an UPDLOCK, HOLDLOCK existence check (see
-- delivery.sql), read-then-write transactions read with UPDLOCK, HOLDLOCK.

-- name: ReportSubscriptionInsert :exec
INSERT INTO dbo.ReportSubscription (Guid, BusinessUnitId, ReportType, Status, Body, Version, CreatedOn, UpdatedOn, UpdatedBy)
SELECT @Guid, @BusinessUnitId, @ReportType, @Status, @Body, 1, @Now, @Now, @UpdatedBy
WHERE NOT EXISTS (SELECT 1 FROM dbo.ReportSubscription WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Guid = @Guid);

-- name: ReportSubscriptionUpdate :exec
UPDATE dbo.ReportSubscription
SET ReportType = @ReportType, Status = @Status, Body = @Body,
    Version = @ExpectedVersion + 1, UpdatedOn = @Now, UpdatedBy = @UpdatedBy
WHERE Guid = @Guid AND Version = @ExpectedVersion;

-- name: ReportSubscriptionGet :one
SELECT Guid, BusinessUnitId, ReportType, Status, Body, Version, CreatedOn, UpdatedOn
FROM dbo.ReportSubscription WHERE Guid = @Guid;

-- name: ReportSubscriptionList :many
SELECT TOP (@Limit) Guid, BusinessUnitId, ReportType, Status, Body, Version, CreatedOn, UpdatedOn
FROM dbo.ReportSubscription
WHERE Guid > @AfterGuid AND Status <> N'Deleted'
  AND (@BusinessUnitId = N'' OR BusinessUnitId = @BusinessUnitId)
ORDER BY Guid;

-- name: ReportRunInsert :exec
INSERT INTO dbo.ReportRun (RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind,
    OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn)
SELECT @RunKeyHash, @SchedulerKey, @SubscriptionGuid, @BusinessUnitId, @RunKind,
    @OwnershipKey, @PeriodStart, @PeriodEnd, @RequestedBy, @Reason, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.ReportRun WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE SchedulerKey = @SchedulerKey);

-- name: ReportRunGetByHash :one
SELECT Id, RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind, OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn
FROM dbo.ReportRun WHERE RunKeyHash = @RunKeyHash;

-- name: ReportRunGetByKey :one
SELECT Id, RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind, OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn
FROM dbo.ReportRun WHERE SchedulerKey = @SchedulerKey;

-- name: ReportRunList :many
SELECT TOP (@Limit) Id, RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind, OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn
FROM dbo.ReportRun
WHERE SubscriptionGuid = @SubscriptionGuid AND (@BeforeId = 0 OR Id < @BeforeId)
ORDER BY Id DESC;

-- name: ReportSchedulerListOpen :many
SELECT TOP (@Limit) Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE SourceEntityType = N'ReportSubscription' AND SourceEntityGuid = @SubscriptionGuid
  AND AutomationType = N'ReportSubscription' AND Status IN (N'Pending', N'Processing', N'Failed')
ORDER BY Id;

-- name: ReportSchedulerListFailed :many
-- The failed-run queue: Failed rows, and rows on support hold that have not ended.
SELECT TOP (@Limit) Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler
WHERE AutomationType = N'ReportSubscription' AND Id > @AfterId
  AND (Status = N'Failed' OR (IsOnSupportHold = 1 AND Status IN (N'Pending', N'Processing')))
  AND (@BusinessUnitId = N'' OR BusinessUnitId = @BusinessUnitId)
ORDER BY Id;

-- name: ReportOwnershipGet :one
SELECT SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status, CoordinatesJson, Version, CreatedOn, UpdatedOn
FROM dbo.ReportRunOwnership WHERE SchedulerKey = @SchedulerKey;

-- name: ReportOwnershipGetForUpdate :one
-- First statement of an acquire: UPDLOCK + HOLDLOCK serialise two acquirers of one key (for a
-- missing key, a key-range lock), so the second sees the first's row (Conflict/Reacquired)
-- instead of failing on the primary key.
SELECT SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status, CoordinatesJson, Version, CreatedOn, UpdatedOn
FROM dbo.ReportRunOwnership WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE SchedulerKey = @SchedulerKey;

-- name: ReportOwnershipInsert :exec
INSERT INTO dbo.ReportRunOwnership (SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status,
    Version, CreatedOn, UpdatedOn)
VALUES (@SchedulerKey, @SubscriptionGuid, @RunKind, @Owner, 1, N'Owned', 1, @Now, @Now);

-- name: ReportOwnershipTakeOver :exec
UPDATE dbo.ReportRunOwnership
SET OwnerType = @Owner, OwnerVersion = OwnerVersion + 1, Status = N'Owned', CoordinatesJson = NULL,
    RunKind = @RunKind, Version = Version + 1, UpdatedOn = @Now
WHERE SchedulerKey = @SchedulerKey AND Version = @Version AND Status = N'Cancelled';

-- name: ReportOwnershipMarkDeliveryCreated :exec
UPDATE dbo.ReportRunOwnership
SET Status = N'DeliveryCreated', CoordinatesJson = @CoordinatesJson, Version = Version + 1, UpdatedOn = @Now
WHERE SchedulerKey = @SchedulerKey AND OwnerType = @Owner AND OwnerVersion = @OwnerVersion AND Status = N'Owned';

-- name: ReportOwnershipRelease :exec
UPDATE dbo.ReportRunOwnership
SET Status = N'Cancelled', Version = Version + 1, UpdatedOn = @Now
WHERE SchedulerKey = @SchedulerKey AND OwnerType = @Owner AND OwnerVersion = @OwnerVersion AND Status = N'Owned';

-- name: ReportOwnershipReleaseAll :exec
-- Bounded: at most @Limit rows per call.
UPDATE TOP (@Limit) dbo.ReportRunOwnership
SET Status = N'Cancelled', Version = Version + 1, UpdatedOn = @Now
WHERE SubscriptionGuid = @SubscriptionGuid AND OwnerType = @Owner AND Status = N'Owned'
  AND ((RunKind = N'Scheduled' AND @Scheduled = 1) OR (RunKind = N'Manual' AND @Manual = 1)
       OR (RunKind = N'SupportRetry' AND @SupportRetry = 1));

-- name: ReportOwnershipList :many
SELECT TOP (@Limit) SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status, CoordinatesJson, Version, CreatedOn, UpdatedOn
FROM dbo.ReportRunOwnership
WHERE SubscriptionGuid = @SubscriptionGuid AND SchedulerKey > @AfterKey
ORDER BY SchedulerKey;

-- name: ReportRolloutGet :one
SELECT ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy
FROM dbo.ReportRollout WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutGetForUpdate :one
SELECT ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy
FROM dbo.ReportRollout WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutInsert :exec
INSERT INTO dbo.ReportRollout (ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy)
VALUES (@ScopeType, @ScopeId, @Mode, 1, @Now, @UpdatedBy);

-- name: ReportRolloutUpdate :exec
UPDATE dbo.ReportRollout SET Mode = @Mode, Version = Version + 1, UpdatedOn = @Now, UpdatedBy = @UpdatedBy
WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutDelete :exec
DELETE FROM dbo.ReportRollout WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutList :many
SELECT TOP (@Limit) ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy
FROM dbo.ReportRollout
WHERE ScopeType > @AfterScopeType OR (ScopeType = @AfterScopeType AND ScopeId > @AfterScopeId)
ORDER BY ScopeType, ScopeId;

-- name: ReportActivityDeliveries :many
-- Jobs that finished in [From, To): a Sent job's UpdatedOn is its SentOn.
SELECT TOP (@Limit) s.AutomationType, COALESCE(s.SettingGuid, N'') AS SettingGuid,
       SUM(CASE WHEN n.Status = N'Sent' THEN 1 ELSE 0 END) AS Sent,
       SUM(CASE WHEN n.Status = N'Failed' THEN 1 ELSE 0 END) AS Failed
FROM dbo.NotificationJob n
JOIN dbo.AutomationScheduler s ON s.SchedulerKey = n.SchedulerKey
WHERE n.BusinessUnitId = @BusinessUnitId AND n.UpdatedOn >= @From AND n.UpdatedOn < @To
  AND n.Status IN (N'Sent', N'Failed')
  AND n.Status IN (N'Sent', N'Failed', N'Unknown') -- the filtered index's predicate (migration 0029)
GROUP BY s.AutomationType, COALESCE(s.SettingGuid, N'')
ORDER BY s.AutomationType, COALESCE(s.SettingGuid, N'');

-- name: ReportActivityRuns :many
SELECT TOP (@Limit) AutomationType, COALESCE(SettingGuid, N'') AS SettingGuid,
       SUM(CASE WHEN Status = N'Failed' THEN 1 ELSE 0 END) AS RunsFailed,
       SUM(CASE WHEN IsOnSupportHold = 1 THEN 1 ELSE 0 END) AS RunsOnHold
FROM dbo.AutomationScheduler
WHERE BusinessUnitId = @BusinessUnitId AND UpdatedOn >= @From AND UpdatedOn < @To
  AND (Status = N'Failed' OR IsOnSupportHold = 1)
GROUP BY AutomationType, COALESCE(SettingGuid, N'')
ORDER BY AutomationType, COALESCE(SettingGuid, N'');
