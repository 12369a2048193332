-- Support API queries (SQL Server). Same names, parameters and result columns as
-- sql/sqlite/queries/support.sql; see that file for what each query is for.
-- The finders (SupportSchedulerFind*) are expanded, when the store opens, from
-- support_find.sql.tmpl.

-- name: SupportSchedulerGetById :one
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler WHERE Id = @Id;

-- name: SupportSchedulerGetByGuid :one
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler WHERE Guid = @Guid;

-- name: SupportSchedulerRelease :one
UPDATE dbo.AutomationScheduler
SET IsOnSupportHold = 0,
    Status = CASE WHEN Status = N'Failed' THEN N'Pending' ELSE Status END,
    NextRetryOn = CASE WHEN Status IN (N'Failed', N'Pending') THEN @NextRetryOn ELSE NextRetryOn END,
    Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
WHERE Id = @Id AND Version = @Version AND IsOnSupportHold = 1;

-- name: SupportSchedulerRetryNow :one
UPDATE dbo.AutomationScheduler
SET Status = N'Pending', IsOnSupportHold = 0, NextRetryOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
WHERE Id = @Id AND Version = @Version AND Status IN (N'Failed', N'Pending');

-- name: SupportSchedulerRunNow :one
-- Run now (the operator's trigger): a Pending row not on hold becomes due at once; its local
-- intent and key stay, so revalidation judges the same occurrence.
UPDATE dbo.AutomationScheduler
SET ScheduledOn = CASE WHEN ScheduledOn > @Now THEN @Now ELSE ScheduledOn END, NextRetryOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
WHERE Id = @Id AND Version = @Version AND Status = N'Pending' AND IsOnSupportHold = 0;

-- name: SupportSchedulerCancel :one
UPDATE dbo.AutomationScheduler
SET Status = N'Cancelled', ReasonCode = N'SupportCancelled', IsOnSupportHold = 0, NextRetryOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
WHERE Id = @Id AND Version = @Version AND Status IN (N'Pending', N'Failed', N'Deactivated');

-- name: SupportSchedulerTouch :one
-- The Version moves on (a second retry needs a fresh read); UpdatedOn stays: it says when the
-- row ended (history, "deactivated in the last 24 hours").
UPDATE dbo.AutomationScheduler
SET Version = Version + 1
OUTPUT inserted.Id, inserted.Guid, inserted.AutomationType, inserted.TriggerType, inserted.SchedulerKey, inserted.SettingGuid, inserted.SourceEntityType, inserted.SourceEntityGuid, inserted.BusinessUnitId, inserted.ScheduledOn, inserted.ScheduledLocalDate, inserted.ScheduledLocalTime, inserted.TimeZoneId, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.RetryCount, inserted.NextRetryOn, inserted.FailureReasonCode, inserted.ReasonCode, inserted.IsOnSupportHold, inserted.InputHash, inserted.ConflictInputHash, inserted.DispatchResultJson, inserted.TraceBlobName, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.CompletedOn, inserted.TraceParent
WHERE Id = @Id AND Version = @Version AND Status IN (N'Completed', N'Deactivated', N'Cancelled');

-- name: SupportSchedulerListHeld :many
-- UPDLOCK: the rows stay locked until the batch's release commits.
SELECT TOP (@Limit) Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM dbo.AutomationScheduler WITH (UPDLOCK, ROWLOCK)
WHERE IsOnSupportHold = 1 AND Id > @AfterId
  AND (@SourceEntityType IS NULL OR (SourceEntityType = @SourceEntityType AND SourceEntityGuid = @SourceEntityGuid))
  AND (@BusinessUnitId IS NULL OR BusinessUnitId = @BusinessUnitId)
  AND (@Status IS NULL OR Status = @Status)
  AND (@FailureReasonCode IS NULL OR FailureReasonCode = @FailureReasonCode)
  AND (@ScheduledFrom IS NULL OR ScheduledOn >= @ScheduledFrom)
  AND (@ScheduledTo IS NULL OR ScheduledOn < @ScheduledTo)
  AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))
ORDER BY Id
OPTION (RECOMPILE);

-- name: SupportReleasePaceGetForUpdate :one
-- UPDLOCK + HOLDLOCK: concurrent bulk releases take their slots one after the other.
SELECT NextSlotOn FROM dbo.SupportReleasePace WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Name = @Name;

-- name: SupportReleasePaceSet :exec
UPDATE dbo.SupportReleasePace SET NextSlotOn = @NextSlotOn WHERE Name = @Name;
IF @@ROWCOUNT = 0 INSERT INTO dbo.SupportReleasePace (Name, NextSlotOn) VALUES (@Name, @NextSlotOn);

-- name: SupportAuditInsert :one
INSERT INTO dbo.SupportAudit (SchedulerId, SchedulerKey, BusinessUnitId, Action, Operator, Reason,
    StatusBefore, StatusAfter, VersionBefore, VersionAfter, RetrySchedulerKey, DueOn, BatchId, CreatedOn)
OUTPUT inserted.Id
VALUES (@SchedulerId, @SchedulerKey, @BusinessUnitId, @Action, @Operator, @Reason,
    @StatusBefore, @StatusAfter, @VersionBefore, @VersionAfter, @RetrySchedulerKey, @DueOn, @BatchId, @Now);

-- name: SupportAuditListByScheduler :many
SELECT TOP (@Limit) Id, SchedulerId, SchedulerKey, BusinessUnitId, Action, Operator, Reason, StatusBefore, StatusAfter, VersionBefore, VersionAfter, RetrySchedulerKey, DueOn, BatchId, CreatedOn
FROM dbo.SupportAudit
WHERE SchedulerId IN (SELECT CAST(i.value AS bigint) FROM OPENJSON(@SchedulerIds) AS i)
ORDER BY SchedulerId, Id;

-- name: SupportNotificationListByKey :many
-- The jobs with SchedulerKey @SchedulerKey: those linked to its scheduler row
-- (IX_NotificationJob_SchedulerId) and those written before the row existed
-- (IX_NotificationJob_SchedulerKeyUnlinked, SchedulerId NULL; migration 0025).
SELECT TOP (@Limit) Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM (SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
      FROM dbo.NotificationJob
      WHERE SchedulerId = (SELECT Id FROM dbo.AutomationScheduler WHERE SchedulerKey = @SchedulerKey) AND SchedulerKey = @SchedulerKey
      UNION ALL
      SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
      FROM dbo.NotificationJob
      WHERE SchedulerId IS NULL AND SchedulerKey = @SchedulerKey) AS j
ORDER BY Id;

-- name: SourceStaleEventUpsert :exec
-- Runs inside SourceSnapshotApply's transaction, after its UPDLOCK, HOLDLOCK read of the
-- snapshot, so two writers of one source are already serialised.
UPDATE dbo.SourceStaleEvent SET EventId = @EventId, Revision = @Revision, StoredRevision = @StoredRevision,
    StoredEventId = @StoredEventId, ReceivedOn = @ReceivedOn
WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid;
IF @@ROWCOUNT = 0 INSERT INTO dbo.SourceStaleEvent (EntityType, EntityGuid, EventId, Revision, StoredRevision, StoredEventId, ReceivedOn)
    VALUES (@EntityType, @EntityGuid, @EventId, @Revision, @StoredRevision, @StoredEventId, @ReceivedOn);

-- name: SourceStaleEventGet :one
SELECT EntityType, EntityGuid, EventId, Revision, StoredRevision, StoredEventId, ReceivedOn
FROM dbo.SourceStaleEvent WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid;

-- name: SupportMetricsPendingDue :one
SELECT COUNT(*) FROM (SELECT TOP (@Cap) 1 AS x FROM dbo.AutomationScheduler WHERE Status = N'Pending' AND IsOnSupportHold = 0 AND ScheduledOn <= @Now
      AND (NextRetryOn IS NULL OR NextRetryOn <= @Now)
      AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d;

-- name: SupportMetricsOldestDue :one
-- The earliest instant a due row became due: its NextRetryOn when a backoff or a paced release
-- put it later than its ScheduledOn; over the same (at most @Cap) rows as
-- SupportMetricsPendingDue, in ScheduledOn order (IX_AutomationScheduler_Due).
SELECT MIN(CASE WHEN NextRetryOn > ScheduledOn THEN NextRetryOn ELSE ScheduledOn END) FROM (
    SELECT TOP (@Cap) ScheduledOn, NextRetryOn FROM dbo.AutomationScheduler
    WHERE Status = N'Pending' AND IsOnSupportHold = 0 AND ScheduledOn <= @Now
      AND (NextRetryOn IS NULL OR NextRetryOn <= @Now)
      AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))
    ORDER BY ScheduledOn, Id) AS d;

-- name: SupportMetricsProcessing :one
SELECT COUNT(*) FROM (SELECT TOP (@Cap) 1 AS x FROM dbo.AutomationScheduler WHERE Status = N'Processing' AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d;

-- name: SupportMetricsExpiredLeases :one
SELECT COUNT(*) FROM (SELECT TOP (@Cap) 1 AS x FROM dbo.AutomationScheduler WHERE Status = N'Processing' AND ProcessingLeaseExpiresOn <= @Now AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d;

-- name: SupportMetricsFailed :one
SELECT COUNT(*) FROM (SELECT TOP (@Cap) 1 AS x FROM dbo.AutomationScheduler WHERE Status = N'Failed' AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d;

-- name: SupportMetricsHeldByReason :many
SELECT r, COUNT(*) FROM (SELECT TOP (@Cap) COALESCE(FailureReasonCode, N'') AS r FROM dbo.AutomationScheduler
    WHERE IsOnSupportHold = 1 AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d
GROUP BY r;

-- name: SupportMetricsDeactivatedSince :many
SELECT r, COUNT(*) FROM (SELECT TOP (@Cap) COALESCE(ReasonCode, N'') AS r FROM dbo.AutomationScheduler
    WHERE Status = N'Deactivated' AND UpdatedOn >= @Since AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d
GROUP BY r;

-- name: SupportMetricsOutboxUnsent :one
SELECT COUNT(*) FROM (SELECT TOP (@Cap) 1 AS x FROM dbo.Outbox WHERE PublishedOn IS NULL) AS d;

-- name: SupportMetricsOutboxOldest :one
SELECT CreatedOn FROM dbo.Outbox WHERE PublishedOn IS NULL ORDER BY Id
OFFSET 0 ROWS FETCH NEXT 1 ROWS ONLY;

-- name: SupportMetricsUnknownDeliveries :one
SELECT COUNT(*) FROM (SELECT TOP (@Cap) 1 AS x FROM dbo.NotificationJob WHERE Status = N'Unknown' AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d;

-- name: SupportMetricsHeldReservations :one
-- Budget reservations HELD, at most @Cap, with the oldest one's CreatedOn over those rows:
-- campaign by campaign (CampaignBudget, one row per campaign with a budget), a seek of
-- IX_BudgetReservation_Campaign (BusinessUnitId, CampaignId, Status) in each.
SELECT COUNT(*), MIN(CreatedOn) FROM (SELECT TOP (@Cap) r.CreatedOn FROM dbo.CampaignBudget AS b
      JOIN dbo.BudgetReservation AS r ON r.BusinessUnitId = b.BusinessUnitId AND r.CampaignId = b.CampaignId AND r.Status = N'HELD'
      WHERE (@AllUnits = 1 OR b.BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d;

-- name: SupportMetricsFeesWithStatus :one
-- Fee transfers with @Status, at most @Cap (IX_FeeTransfer_Status: a seek on Status).
SELECT COUNT(*) FROM (SELECT TOP (@Cap) 1 AS x FROM dbo.FeeTransfer WHERE Status = @Status
      AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS d;

-- name: SupportThroughput :many
-- Deliveries that reached Sent, Failed or Unknown per minute of their last change and
-- channel, over a bounded window (IX_NotificationJob_Updated: a range seek on UpdatedOn,
-- covering since migration 0064 included Channel).
SELECT b.Minute, b.Status, b.Channel, COUNT(*) AS N
FROM (SELECT DATEADD(minute, DATEDIFF(minute, CAST('2000-01-01' AS datetime2(3)), UpdatedOn), CAST('2000-01-01' AS datetime2(3))) AS Minute, Status, Channel
      FROM dbo.NotificationJob WITH (INDEX (IX_NotificationJob_Updated))
      WHERE UpdatedOn >= @Since AND UpdatedOn < @Until AND Status IN (N'Sent', N'Failed', N'Unknown')
        AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS b
GROUP BY b.Minute, b.Status, b.Channel
ORDER BY b.Minute, b.Status, b.Channel;

-- name: MetricsSamplePut :exec
-- One sample of the console's metrics history; a second sample of the same unit and minute
-- (another instance) is ignored.
INSERT INTO dbo.MetricsSample (BusinessUnitId, SampledOn, PendingDue, OldestDueAgeSeconds, OnHold, OutboxUnsent, OutboxOldestAgeSeconds)
SELECT @BusinessUnitId, @SampledOn, @PendingDue, @OldestDueAgeSeconds, @OnHold, @OutboxUnsent, @OutboxOldestAgeSeconds
WHERE NOT EXISTS (SELECT 1 FROM dbo.MetricsSample WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE BusinessUnitId = @BusinessUnitId AND SampledOn = @SampledOn);

-- name: MetricsSampleSeries :many
-- The platform row for a scope of every unit, else the scope's units added up per instant.
SELECT TOP (@Limit) SampledOn, SUM(PendingDue), MAX(OldestDueAgeSeconds), SUM(OnHold), MAX(OutboxUnsent), MAX(OutboxOldestAgeSeconds)
FROM dbo.MetricsSample
WHERE SampledOn >= @Since
  AND ((@AllUnits = 1 AND BusinessUnitId = N'*') OR (@AllUnits = 0 AND BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u)))
GROUP BY SampledOn
ORDER BY SampledOn;

-- name: MetricsSamplePurge :exec
-- Up to @Limit samples taken before @Before (the retention's start).
DELETE TOP (@Limit) FROM dbo.MetricsSample WHERE SampledOn < @Before;

-- name: SupportCommandThroughput :many
-- Campaign commands that reached SUCCEEDED, FAILED or UNKNOWN per minute of their last change,
-- over a bounded window (IX_CampaignCommand_Updated: a range seek on UpdatedOn, covering).
SELECT b.Minute, b.Status, COUNT(*) AS N
FROM (SELECT DATEADD(minute, DATEDIFF(minute, CAST('2000-01-01' AS datetime2(3)), UpdatedOn), CAST('2000-01-01' AS datetime2(3))) AS Minute, Status
      FROM dbo.CampaignCommand WITH (INDEX (IX_CampaignCommand_Updated))
      WHERE UpdatedOn >= @Since AND UpdatedOn < @Until AND Status IN (N'SUCCEEDED', N'FAILED', N'UNKNOWN')
        AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))) AS b
GROUP BY b.Minute, b.Status
ORDER BY b.Minute, b.Status;

-- name: MetricsCountAdd :exec
-- Adds @N to one persisted counter (the sampler's flush of a process's counts); UPDLOCK,
-- HOLDLOCK serialises two instances adding the same minute and key, so neither insert fails.
UPDATE dbo.MetricsCount WITH (UPDLOCK, HOLDLOCK, FORCESEEK) SET N = N + @N
WHERE MinuteOn = @MinuteOn AND Flow = @Flow AND BusinessUnitId = @BusinessUnitId AND Label = @Label AND Outcome = @Outcome;
IF @@ROWCOUNT = 0 INSERT INTO dbo.MetricsCount (MinuteOn, Flow, BusinessUnitId, Label, Outcome, N)
    VALUES (@MinuteOn, @Flow, @BusinessUnitId, @Label, @Outcome, @N);

-- name: MetricsCountFlushInsert :exec
-- The ledger row of one flush (migration 0072), first in the flush's transaction: no row
-- affected means the flush was already applied (a retry after an ambiguous commit), and the
-- store adds nothing. UPDLOCK, HOLDLOCK keeps a concurrent twin from failing on the key.
INSERT INTO dbo.MetricsCountFlush (MinuteOn, FlushId)
SELECT @MinuteOn, @FlushId
WHERE NOT EXISTS (SELECT 1 FROM dbo.MetricsCountFlush WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE MinuteOn = @MinuteOn AND FlushId = @FlushId);

-- name: MetricsCountFlushPurge :exec
-- Up to @Limit flush ledger rows of minutes before @Before (with MetricsCountPurge).
DELETE TOP (@Limit) FROM dbo.MetricsCountFlush WHERE MinuteOn < @Before;

-- name: MetricsCountSeries :many
-- One flow's counts per minute and outcome over a bounded window, for the scope's units; a
-- range seek on the clustered key's leading MinuteOn.
SELECT MinuteOn, Outcome, SUM(N) AS N
FROM dbo.MetricsCount
WHERE MinuteOn >= @Since AND MinuteOn < @Until AND Flow = @Flow
  AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u))
GROUP BY MinuteOn, Outcome
ORDER BY MinuteOn, Outcome;

-- name: MetricsCountPurge :exec
-- Up to @Limit counters of minutes before @Before (the retention's start).
DELETE TOP (@Limit) FROM dbo.MetricsCount WHERE MinuteOn < @Before;
