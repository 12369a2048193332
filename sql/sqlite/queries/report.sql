-- Report subscriptions, run registry, ReportRunOwnership, rollout and activity (SQLite).
-- Same names as sql/mssql/queries/report.sql. "now" is always a parameter.

-- name: ReportSubscriptionInsert :exec
-- RowsAffected 0: the Guid exists (ErrConflict).
INSERT INTO ReportSubscription (Guid, BusinessUnitId, ReportType, Status, Body, Version, CreatedOn, UpdatedOn, UpdatedBy)
VALUES (@Guid, @BusinessUnitId, @ReportType, @Status, @Body, 1, @Now, @Now, @UpdatedBy)
ON CONFLICT (Guid) DO NOTHING;

-- name: ReportSubscriptionUpdate :exec
UPDATE ReportSubscription
SET ReportType = @ReportType, Status = @Status, Body = @Body,
    Version = @ExpectedVersion + 1, UpdatedOn = @Now, UpdatedBy = @UpdatedBy
WHERE Guid = @Guid AND Version = @ExpectedVersion;

-- name: ReportSubscriptionGet :one
SELECT Guid, BusinessUnitId, ReportType, Status, Body, Version, CreatedOn, UpdatedOn
FROM ReportSubscription WHERE Guid = @Guid;

-- name: ReportSubscriptionList :many
SELECT Guid, BusinessUnitId, ReportType, Status, Body, Version, CreatedOn, UpdatedOn
FROM ReportSubscription
WHERE Guid > @AfterGuid AND Status <> 'Deleted'
  AND (@BusinessUnitId = '' OR BusinessUnitId = @BusinessUnitId)
ORDER BY Guid
LIMIT @Limit;

-- name: ReportRunInsert :exec
-- An existing SchedulerKey is left alone (RowsAffected 0); another key with the same
-- RunKeyHash fails on the unique index.
INSERT INTO ReportRun (RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind,
    OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn)
VALUES (@RunKeyHash, @SchedulerKey, @SubscriptionGuid, @BusinessUnitId, @RunKind,
    @OwnershipKey, @PeriodStart, @PeriodEnd, @RequestedBy, @Reason, @Now)
ON CONFLICT (SchedulerKey) DO NOTHING;

-- name: ReportRunGetByHash :one
SELECT Id, RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind, OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn
FROM ReportRun WHERE RunKeyHash = @RunKeyHash;

-- name: ReportRunGetByKey :one
SELECT Id, RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind, OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn
FROM ReportRun WHERE SchedulerKey = @SchedulerKey;

-- name: ReportRunList :many
SELECT Id, RunKeyHash, SchedulerKey, SubscriptionGuid, BusinessUnitId, RunKind, OwnershipKey, PeriodStart, PeriodEnd, RequestedBy, Reason, CreatedOn
FROM ReportRun
WHERE SubscriptionGuid = @SubscriptionGuid AND (@BeforeId = 0 OR Id < @BeforeId)
ORDER BY Id DESC
LIMIT @Limit;

-- name: ReportSchedulerListOpen :many
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler
WHERE SourceEntityType = 'ReportSubscription' AND SourceEntityGuid = @SubscriptionGuid
  AND AutomationType = 'ReportSubscription' AND Status IN ('Pending', 'Processing', 'Failed')
ORDER BY Id
LIMIT @Limit;

-- name: ReportSchedulerListFailed :many
-- The failed-run queue: Failed rows, and rows on support hold that have not ended.
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler
WHERE AutomationType = 'ReportSubscription' AND Id > @AfterId
  AND (Status = 'Failed' OR (IsOnSupportHold = 1 AND Status IN ('Pending', 'Processing')))
  AND (@BusinessUnitId = '' OR BusinessUnitId = @BusinessUnitId)
ORDER BY Id
LIMIT @Limit;

-- name: ReportOwnershipGet :one
SELECT SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status, CoordinatesJson, Version, CreatedOn, UpdatedOn
FROM ReportRunOwnership WHERE SchedulerKey = @SchedulerKey;

-- name: ReportOwnershipGetForUpdate :one
-- Same as ReportOwnershipGet: SQLite transactions here are BEGIN IMMEDIATE (write lock held).
SELECT SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status, CoordinatesJson, Version, CreatedOn, UpdatedOn
FROM ReportRunOwnership WHERE SchedulerKey = @SchedulerKey;

-- name: ReportOwnershipInsert :exec
INSERT INTO ReportRunOwnership (SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status,
    Version, CreatedOn, UpdatedOn)
VALUES (@SchedulerKey, @SubscriptionGuid, @RunKind, @Owner, 1, 'Owned', 1, @Now, @Now);

-- name: ReportOwnershipTakeOver :exec
-- A Cancelled row changes hands: OwnerVersion+1 fences the previous owner.
UPDATE ReportRunOwnership
SET OwnerType = @Owner, OwnerVersion = OwnerVersion + 1, Status = 'Owned', CoordinatesJson = NULL,
    RunKind = @RunKind, Version = Version + 1, UpdatedOn = @Now
WHERE SchedulerKey = @SchedulerKey AND Version = @Version AND Status = 'Cancelled';

-- name: ReportOwnershipMarkDeliveryCreated :exec
UPDATE ReportRunOwnership
SET Status = 'DeliveryCreated', CoordinatesJson = @CoordinatesJson, Version = Version + 1, UpdatedOn = @Now
WHERE SchedulerKey = @SchedulerKey AND OwnerType = @Owner AND OwnerVersion = @OwnerVersion AND Status = 'Owned';

-- name: ReportOwnershipRelease :exec
UPDATE ReportRunOwnership
SET Status = 'Cancelled', Version = Version + 1, UpdatedOn = @Now
WHERE SchedulerKey = @SchedulerKey AND OwnerType = @Owner AND OwnerVersion = @OwnerVersion AND Status = 'Owned';

-- name: ReportOwnershipReleaseAll :exec
-- Bounded: at most @Limit rows per call.
UPDATE ReportRunOwnership
SET Status = 'Cancelled', Version = Version + 1, UpdatedOn = @Now
WHERE SchedulerKey IN (
    SELECT SchedulerKey FROM ReportRunOwnership
    WHERE SubscriptionGuid = @SubscriptionGuid AND OwnerType = @Owner AND Status = 'Owned'
      AND ((RunKind = 'Scheduled' AND @Scheduled = 1) OR (RunKind = 'Manual' AND @Manual = 1)
           OR (RunKind = 'SupportRetry' AND @SupportRetry = 1))
    ORDER BY SchedulerKey
    LIMIT @Limit);

-- name: ReportOwnershipList :many
SELECT SchedulerKey, SubscriptionGuid, RunKind, OwnerType, OwnerVersion, Status, CoordinatesJson, Version, CreatedOn, UpdatedOn
FROM ReportRunOwnership
WHERE SubscriptionGuid = @SubscriptionGuid AND SchedulerKey > @AfterKey
ORDER BY SchedulerKey
LIMIT @Limit;

-- name: ReportRolloutGet :one
SELECT ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy
FROM ReportRollout WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutGetForUpdate :one
SELECT ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy
FROM ReportRollout WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutInsert :exec
INSERT INTO ReportRollout (ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy)
VALUES (@ScopeType, @ScopeId, @Mode, 1, @Now, @UpdatedBy);

-- name: ReportRolloutUpdate :exec
UPDATE ReportRollout SET Mode = @Mode, Version = Version + 1, UpdatedOn = @Now, UpdatedBy = @UpdatedBy
WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutDelete :exec
DELETE FROM ReportRollout WHERE ScopeType = @ScopeType AND ScopeId = @ScopeId;

-- name: ReportRolloutList :many
SELECT ScopeType, ScopeId, Mode, Version, UpdatedOn, UpdatedBy
FROM ReportRollout
WHERE ScopeType > @AfterScopeType OR (ScopeType = @AfterScopeType AND ScopeId > @AfterScopeId)
ORDER BY ScopeType, ScopeId
LIMIT @Limit;

-- name: ReportActivityDeliveries :many
-- Jobs that finished in [From, To): a Sent job's UpdatedOn is its SentOn. A range seek of
-- IX_NotificationJob_Updated on the period; the unit and status are filtered from the
-- index's own columns before a job's row is read (INDEXED BY: before migration 0025 SQLite
-- preferred to seek the unit on the (BusinessUnitId, EffectKey) unique index and read every
-- job of the unit; the hint keeps the period seek whatever other index a unit may get).
SELECT s.AutomationType, COALESCE(s.SettingGuid, '') AS SettingGuid,
       SUM(CASE WHEN n.Status = 'Sent' THEN 1 ELSE 0 END) AS Sent,
       SUM(CASE WHEN n.Status = 'Failed' THEN 1 ELSE 0 END) AS Failed
FROM NotificationJob n INDEXED BY IX_NotificationJob_Updated
JOIN AutomationScheduler s ON s.SchedulerKey = n.SchedulerKey
WHERE n.BusinessUnitId = @BusinessUnitId AND n.UpdatedOn >= @From AND n.UpdatedOn < @To
  AND n.Status IN ('Sent', 'Failed')
  AND n.Status IN ('Sent', 'Failed', 'Unknown') -- the partial index's WHERE, for SQLite to use it (migration 0029)
GROUP BY s.AutomationType, COALESCE(s.SettingGuid, '')
ORDER BY s.AutomationType, COALESCE(s.SettingGuid, '')
LIMIT @Limit;

-- name: ReportActivityRuns :many
-- Runs that failed or went on hold in [From, To): a seek of the partial
-- IX_AutomationScheduler_Activity, which holds only such rows; the WHERE repeats its
-- disjunction verbatim, which is what lets SQLite use it.
SELECT AutomationType, COALESCE(SettingGuid, '') AS SettingGuid,
       SUM(CASE WHEN Status = 'Failed' THEN 1 ELSE 0 END) AS RunsFailed,
       SUM(CASE WHEN IsOnSupportHold = 1 THEN 1 ELSE 0 END) AS RunsOnHold
FROM AutomationScheduler
WHERE BusinessUnitId = @BusinessUnitId AND UpdatedOn >= @From AND UpdatedOn < @To
  AND (Status = 'Failed' OR IsOnSupportHold = 1)
GROUP BY AutomationType, COALESCE(SettingGuid, '')
ORDER BY AutomationType, COALESCE(SettingGuid, '')
LIMIT @Limit;
