-- Support API queries (SQLite). Same names as sql/mssql/queries/support.sql.
-- Parameters are named (@Name); "now" is always a parameter.
--
-- The finders (SupportSchedulerFind*) are expanded, when the store opens, from
-- support_find.sql.tmpl. sql/sqlite/support_plan_test.go checks every plan.

-- name: SupportSchedulerGetById :one
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler WHERE Id = @Id;

-- name: SupportSchedulerGetByGuid :one
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler WHERE Guid = @Guid;

-- name: SupportSchedulerRelease :one
-- Release a support hold: the hold is cleared, a Failed row becomes Pending again (RetryCount
-- kept: a release buys one more attempt), and a Pending row is due at max(ScheduledOn,
-- @NextRetryOn) (NULL: at once; a paced release staggers it). Guarded by the Version read.
UPDATE AutomationScheduler
SET IsOnSupportHold = 0,
    Status = CASE WHEN Status = 'Failed' THEN 'Pending' ELSE Status END,
    NextRetryOn = CASE WHEN Status IN ('Failed', 'Pending') THEN @NextRetryOn ELSE NextRetryOn END,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version AND IsOnSupportHold = 1
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SupportSchedulerRetryNow :one
-- Retry now: a Failed row, or a Pending row waiting on backoff or hold, becomes due at once.
UPDATE AutomationScheduler
SET Status = 'Pending', IsOnSupportHold = 0, NextRetryOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version AND Status IN ('Failed', 'Pending')
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SupportSchedulerRunNow :one
-- Run now (the operator's trigger): a Pending row not on hold becomes due at once; its local
-- intent and key stay, so revalidation judges the same occurrence.
UPDATE AutomationScheduler
SET ScheduledOn = MIN(ScheduledOn, @Now), NextRetryOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version AND Status = 'Pending' AND IsOnSupportHold = 0
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SupportSchedulerCancel :one
-- Cancel by support: never sent; ensure leaves it Cancelled while its InputHash is unchanged
-- (automation.DecideEnsure).
UPDATE AutomationScheduler
SET Status = 'Cancelled', ReasonCode = 'SupportCancelled', IsOnSupportHold = 0, NextRetryOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version AND Status IN ('Pending', 'Failed', 'Deactivated')
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SupportSchedulerTouch :one
-- A support retry of a row that ended (Completed, Deactivated, Cancelled): the row itself is
-- unchanged but its Version moves on, so a second retry needs a fresh read (If-Match).
-- UpdatedOn stays: it says when the row ended (history, "deactivated in the last 24 hours");
-- the retry itself is in SupportAudit.
UPDATE AutomationScheduler
SET Version = Version + 1
WHERE Id = @Id AND Version = @Version AND Status IN ('Completed', 'Deactivated', 'Cancelled')
RETURNING Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent;

-- name: SupportSchedulerListHeld :many
-- Rows on hold matching a bulk release's filter, by Id, after @AfterId.
SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent
FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Hold
WHERE IsOnSupportHold = 1 AND Id > @AfterId
  AND (@SourceEntityType IS NULL OR (SourceEntityType = @SourceEntityType AND SourceEntityGuid = @SourceEntityGuid))
  AND (@BusinessUnitId IS NULL OR BusinessUnitId = @BusinessUnitId)
  AND (@Status IS NULL OR Status = @Status)
  AND (@FailureReasonCode IS NULL OR FailureReasonCode = @FailureReasonCode)
  AND (@ScheduledFrom IS NULL OR ScheduledOn >= @ScheduledFrom)
  AND (@ScheduledTo IS NULL OR ScheduledOn < @ScheduledTo)
  AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units)))
ORDER BY Id
LIMIT @Limit;

-- name: SupportReleasePaceGetForUpdate :one
-- Transactions are BEGIN IMMEDIATE: the write lock is already held.
SELECT NextSlotOn FROM SupportReleasePace WHERE Name = @Name;

-- name: SupportReleasePaceSet :exec
INSERT INTO SupportReleasePace (Name, NextSlotOn) VALUES (@Name, @NextSlotOn)
ON CONFLICT (Name) DO UPDATE SET NextSlotOn = excluded.NextSlotOn;

-- name: SupportAuditInsert :one
INSERT INTO SupportAudit (SchedulerId, SchedulerKey, BusinessUnitId, Action, Operator, Reason,
    StatusBefore, StatusAfter, VersionBefore, VersionAfter, RetrySchedulerKey, DueOn, BatchId, CreatedOn)
VALUES (@SchedulerId, @SchedulerKey, @BusinessUnitId, @Action, @Operator, @Reason,
    @StatusBefore, @StatusAfter, @VersionBefore, @VersionAfter, @RetrySchedulerKey, @DueOn, @BatchId, @Now)
RETURNING Id;

-- name: SupportAuditListByScheduler :many
-- The audit of the rows whose Ids are in the JSON array @SchedulerIds, by row then Id.
SELECT Id, SchedulerId, SchedulerKey, BusinessUnitId, Action, Operator, Reason, StatusBefore, StatusAfter, VersionBefore, VersionAfter, RetrySchedulerKey, DueOn, BatchId, CreatedOn
FROM SupportAudit
WHERE SchedulerId IN (SELECT value FROM json_each(@SchedulerIds))
ORDER BY SchedulerId, Id
LIMIT @Limit;

-- name: SupportNotificationListByKey :many
-- The jobs with SchedulerKey @SchedulerKey: those linked to its scheduler row
-- (IX_NotificationJob_SchedulerId) and those written before the row existed
-- (IX_NotificationJob_SchedulerKeyUnlinked, SchedulerId NULL; migration 0025).
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM (SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
      FROM NotificationJob
      WHERE SchedulerId = (SELECT Id FROM AutomationScheduler WHERE SchedulerKey = @SchedulerKey) AND SchedulerKey = @SchedulerKey
      UNION ALL
      SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
      FROM NotificationJob
      WHERE SchedulerId IS NULL AND SchedulerKey = @SchedulerKey)
ORDER BY Id
LIMIT @Limit;

-- name: SourceStaleEventUpsert :exec
-- Written by SourceSnapshotApply when it ignores an older revision (in its transaction).
INSERT INTO SourceStaleEvent (EntityType, EntityGuid, EventId, Revision, StoredRevision, StoredEventId, ReceivedOn)
VALUES (@EntityType, @EntityGuid, @EventId, @Revision, @StoredRevision, @StoredEventId, @ReceivedOn)
ON CONFLICT (EntityType, EntityGuid) DO UPDATE SET EventId = excluded.EventId, Revision = excluded.Revision,
    StoredRevision = excluded.StoredRevision, StoredEventId = excluded.StoredEventId, ReceivedOn = excluded.ReceivedOn;

-- name: SourceStaleEventGet :one
SELECT EntityType, EntityGuid, EventId, Revision, StoredRevision, StoredEventId, ReceivedOn
FROM SourceStaleEvent WHERE EntityType = @EntityType AND EntityGuid = @EntityGuid;

-- Metrics: every count reads at most @Cap rows (the caller reports "at least @Cap"), each
-- through an index that holds only the rows it counts or a seek on its leading column.

-- name: SupportMetricsPendingDue :one
-- IX_AutomationScheduler_Due (ScheduledOn <= @Now).
SELECT COUNT(*) FROM (SELECT 1 AS x FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Due WHERE Status = 'Pending' AND IsOnSupportHold = 0 AND ScheduledOn <= @Now
      AND (NextRetryOn IS NULL OR NextRetryOn <= @Now)
      AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d;

-- name: SupportMetricsOldestDue :one
-- The earliest instant a due row became due: its NextRetryOn when a backoff or a paced release
-- put it later than its ScheduledOn. Read over the same (at most @Cap) rows as
-- SupportMetricsPendingDue, in ScheduledOn order (IX_AutomationScheduler_Due).
SELECT MIN(CASE WHEN NextRetryOn > ScheduledOn THEN NextRetryOn ELSE ScheduledOn END) FROM (
    SELECT ScheduledOn, NextRetryOn FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Due
    WHERE Status = 'Pending' AND IsOnSupportHold = 0 AND ScheduledOn <= @Now
      AND (NextRetryOn IS NULL OR NextRetryOn <= @Now)
      AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units)))
    ORDER BY ScheduledOn, Id
    LIMIT @Cap) AS d;

-- name: SupportMetricsProcessing :one
-- IX_AutomationScheduler_Lease.
SELECT COUNT(*) FROM (SELECT 1 AS x FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Lease WHERE Status = 'Processing' AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d;

-- name: SupportMetricsExpiredLeases :one
-- IX_AutomationScheduler_Lease.
SELECT COUNT(*) FROM (SELECT 1 AS x FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Lease WHERE Status = 'Processing' AND ProcessingLeaseExpiresOn <= @Now AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d;

-- name: SupportMetricsFailed :one
-- IX_AutomationScheduler_StatusId.
SELECT COUNT(*) FROM (SELECT 1 AS x FROM AutomationScheduler WHERE Status = 'Failed' AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d;

-- name: SupportMetricsHeldByReason :many
-- Rows on support hold by FailureReasonCode (IX_AutomationScheduler_Hold).
SELECT r, COUNT(*) FROM (SELECT COALESCE(FailureReasonCode, '') AS r FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Hold
    WHERE IsOnSupportHold = 1 AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d
GROUP BY r;

-- name: SupportMetricsDeactivatedSince :many
-- Rows deactivated (last changed) since @Since by ReasonCode (IX_AutomationScheduler_Deactivated).
SELECT r, COUNT(*) FROM (SELECT COALESCE(ReasonCode, '') AS r FROM AutomationScheduler INDEXED BY IX_AutomationScheduler_Deactivated
    WHERE Status = 'Deactivated' AND UpdatedOn >= @Since AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d
GROUP BY r;

-- name: SupportMetricsOutboxUnsent :one
-- IX_Outbox_Unpublished. The outbox has no business unit: platform-wide only.
SELECT COUNT(*) FROM (SELECT 1 AS x FROM Outbox WHERE PublishedOn IS NULL LIMIT @Cap) AS d;

-- name: SupportMetricsOutboxOldest :one
SELECT CreatedOn FROM Outbox WHERE PublishedOn IS NULL ORDER BY Id
LIMIT 1;

-- name: SupportMetricsUnknownDeliveries :one
-- IX_NotificationJob_UnknownAll: every UNKNOWN delivery, awaiting manual resolution or a provider lookup.
SELECT COUNT(*) FROM (SELECT 1 AS x FROM NotificationJob WHERE Status = 'Unknown' AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d;

-- name: SupportMetricsHeldReservations :one
-- Budget reservations HELD (docs/budgets.md), at most @Cap, with the oldest one's CreatedOn
-- over those rows. No index leads with Status, so the walk goes campaign by campaign: a scan
-- of CampaignBudget (one row per campaign with a budget; every reservation has one) and a
-- seek of IX_BudgetReservation_Campaign (BusinessUnitId, CampaignId, Status) in each.
-- CROSS JOIN keeps CampaignBudget the outer loop (SQLite does not reorder it).
SELECT COUNT(*), MIN(CreatedOn) FROM (SELECT r.CreatedOn FROM CampaignBudget AS b
      CROSS JOIN BudgetReservation AS r INDEXED BY IX_BudgetReservation_Campaign
      WHERE r.BusinessUnitId = b.BusinessUnitId AND r.CampaignId = b.CampaignId AND r.Status = 'HELD'
        AND (@AllUnits = 1 OR b.BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d;

-- name: SupportMetricsFeesWithStatus :one
-- Fee transfers with @Status, at most @Cap (IX_FeeTransfer_Status: a seek on Status).
SELECT COUNT(*) FROM (SELECT 1 AS x FROM FeeTransfer INDEXED BY IX_FeeTransfer_Status WHERE Status = @Status
      AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))) LIMIT @Cap) AS d;

-- name: SupportThroughput :many
-- Deliveries that reached Sent, Failed or Unknown per minute of their last change and
-- channel, over a bounded window (IX_NotificationJob_Updated: a range seek on UpdatedOn,
-- covering since migration 0064 added Channel; the status term is the partial index's
-- WHERE, migration 0029).
SELECT b.Minute, b.Status, b.Channel, COUNT(*) AS N
FROM (SELECT (UpdatedOn / 60000) * 60000 AS Minute, Status, Channel
      FROM NotificationJob INDEXED BY IX_NotificationJob_Updated
      WHERE UpdatedOn >= @Since AND UpdatedOn < @Until AND Status IN ('Sent', 'Failed', 'Unknown')
        AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units)))) AS b
GROUP BY b.Minute, b.Status, b.Channel
ORDER BY b.Minute, b.Status, b.Channel;

-- name: MetricsSamplePut :exec
-- One sample of the console's metrics history; a second sample of the same unit and minute
-- (another instance) is ignored.
INSERT INTO MetricsSample (BusinessUnitId, SampledOn, PendingDue, OldestDueAgeSeconds, OnHold, OutboxUnsent, OutboxOldestAgeSeconds)
VALUES (@BusinessUnitId, @SampledOn, @PendingDue, @OldestDueAgeSeconds, @OnHold, @OutboxUnsent, @OutboxOldestAgeSeconds)
ON CONFLICT (BusinessUnitId, SampledOn) DO NOTHING;

-- name: MetricsSampleSeries :many
-- The platform row for a scope of every unit, else the scope's units added up per instant.
SELECT SampledOn, SUM(PendingDue), MAX(OldestDueAgeSeconds), SUM(OnHold), MAX(OutboxUnsent), MAX(OutboxOldestAgeSeconds)
FROM MetricsSample
WHERE SampledOn >= @Since
  AND ((@AllUnits = 1 AND BusinessUnitId = '*') OR (@AllUnits = 0 AND BusinessUnitId IN (SELECT value FROM json_each(@Units))))
GROUP BY SampledOn
ORDER BY SampledOn
LIMIT @Limit;

-- name: MetricsSamplePurge :exec
-- Up to @Limit samples taken before @Before (the retention's start).
DELETE FROM MetricsSample
WHERE (BusinessUnitId, SampledOn) IN (
    SELECT BusinessUnitId, SampledOn FROM MetricsSample WHERE SampledOn < @Before LIMIT @Limit);

-- name: SupportCommandThroughput :many
-- Campaign commands that reached SUCCEEDED, FAILED or UNKNOWN per minute of their last change,
-- over a bounded window (IX_CampaignCommand_Updated: a range seek on UpdatedOn, covering).
SELECT b.Minute, b.Status, COUNT(*) AS N
FROM (SELECT (UpdatedOn / 60000) * 60000 AS Minute, Status
      FROM CampaignCommand INDEXED BY IX_CampaignCommand_Updated
      WHERE UpdatedOn >= @Since AND UpdatedOn < @Until AND Status IN ('SUCCEEDED', 'FAILED', 'UNKNOWN')
        AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units)))) AS b
GROUP BY b.Minute, b.Status
ORDER BY b.Minute, b.Status;

-- name: MetricsCountAdd :exec
-- Adds @N to one persisted counter (the sampler's flush of a process's counts); a second
-- instance adding the same minute and key adds to the same row.
INSERT INTO MetricsCount (MinuteOn, Flow, BusinessUnitId, Label, Outcome, N)
VALUES (@MinuteOn, @Flow, @BusinessUnitId, @Label, @Outcome, @N)
ON CONFLICT (MinuteOn, Flow, BusinessUnitId, Label, Outcome) DO UPDATE SET N = N + excluded.N;

-- name: MetricsCountFlushInsert :exec
-- The ledger row of one flush (migration 0072), first in the flush's transaction: no row
-- affected means the flush was already applied (a retry after an ambiguous commit), and the
-- store adds nothing.
INSERT INTO MetricsCountFlush (MinuteOn, FlushId) VALUES (@MinuteOn, @FlushId)
ON CONFLICT (MinuteOn, FlushId) DO NOTHING;

-- name: MetricsCountFlushPurge :exec
-- Up to @Limit flush ledger rows of minutes before @Before (with MetricsCountPurge).
DELETE FROM MetricsCountFlush WHERE (MinuteOn, FlushId) IN (
    SELECT MinuteOn, FlushId FROM MetricsCountFlush WHERE MinuteOn < @Before LIMIT @Limit);

-- name: MetricsCountSeries :many
-- One flow's counts per minute and outcome over a bounded window, for the scope's units (a
-- scope of every unit also reads the '' unit: counts whose unit was unknown); a range seek on
-- the key's leading MinuteOn.
SELECT MinuteOn, Outcome, SUM(N) AS N
FROM MetricsCount
WHERE MinuteOn >= @Since AND MinuteOn < @Until AND Flow = @Flow
  AND (@AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units)))
GROUP BY MinuteOn, Outcome
ORDER BY MinuteOn, Outcome;

-- name: MetricsCountPurge :exec
-- Up to @Limit counters of minutes before @Before (the retention's start).
DELETE FROM MetricsCount WHERE (MinuteOn, Flow, BusinessUnitId, Label, Outcome) IN (
    SELECT MinuteOn, Flow, BusinessUnitId, Label, Outcome FROM MetricsCount WHERE MinuteOn < @Before LIMIT @Limit);
