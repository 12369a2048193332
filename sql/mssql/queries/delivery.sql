-- NotificationJob and Outbox queries (SQL Server). Same names, parameters and result columns
-- as sql/sqlite/queries/delivery.sql.

-- name: NotificationInsert :exec
-- A redelivered request for the same delivery key, or another command for the same effect
-- (BusinessUnitId, EffectKey), is a no-op (SQLite: ON CONFLICT DO NOTHING). One statement,
-- so it is atomic even outside a transaction: UPDLOCK + HOLDLOCK hold key-range locks on
-- both unique indexes from the existence check to the insert, so two concurrent inserts of
-- one key serialise and the second inserts nothing instead of failing with a duplicate-key
-- error (2627).
-- SchedulerId is the scheduler row with @SchedulerKey (migration 0025): @SchedulerId's own
-- row when its key is that one (a clustered-key seek), else the row found by key, else NULL.
INSERT INTO dbo.NotificationJob (DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, LocalDate, Status, Revision, Version, CreatedOn, UpdatedOn)
SELECT @DeliveryKey, @EffectKey, @SchedulerKey,
    COALESCE((SELECT s.Id FROM dbo.AutomationScheduler s WHERE s.Id = @SchedulerId AND s.SchedulerKey = @SchedulerKey),
             (SELECT s.Id FROM dbo.AutomationScheduler s WHERE s.SchedulerKey = @SchedulerKey)),
    @BusinessUnitId, @Channel, @Recipient,
    @Template, @PayloadJson, @LocalDate, N'Queued', 1, 1, @Now, @Now
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE DeliveryKey = @DeliveryKey)
  AND NOT EXISTS (
    SELECT 1 FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE BusinessUnitId = @BusinessUnitId AND EffectKey = @EffectKey);

-- name: NotificationGetByKey :one
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn
FROM dbo.NotificationJob WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationGetByKeyForUpdate :one
-- The read of the send claim's read-decide-write transaction: UPDLOCK + HOLDLOCK keep the
-- row locked until the transaction ends, so of two concurrent claimers the second waits here
-- and then reads the first one's committed claim (also under READ_COMMITTED_SNAPSHOT).
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn
FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationGetManyForUpdate :many
-- The read of a batch send claim (NotificationClaimMany): the jobs of up to 100 delivery keys
-- in one statement (one parameter per key, far under the 2,100 bound), each an index seek on
-- UQ_NotificationJob_DeliveryKey; UPDLOCK + HOLDLOCK keep them locked until the transaction
-- ends, as NotificationGetByKeyForUpdate does for one key.
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn
FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE DeliveryKey IN (SELECT v.k FROM (VALUES /*row*/(@DeliveryKey)/*end*/) AS v(k));

-- name: NotificationClaim :one
-- The send claim of a job NotificationClaimable decided on, guarded by the Version read.
UPDATE dbo.NotificationJob
SET Status = N'Sending', ProcessingLeaseExpiresOn = @LeaseExpiresOn,
    AttemptCount = AttemptCount + 1, Revision = @Revision, Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.EffectKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.LocalDate, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.RetryCount, inserted.NextAttemptOn, inserted.IsOnSupportHold, inserted.ProviderReference, inserted.LastError, inserted.TemplateVersion, inserted.Revision, inserted.ResolvedBy, inserted.ResolutionReason, inserted.ResolvedOn, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn
WHERE Id = @Id AND Version = @Version;

-- name: NotificationFinish :one
UPDATE dbo.NotificationJob
SET Status = @Status, ProviderReference = @ProviderReference, LastError = @LastError,
    ProcessingLeaseExpiresOn = NULL, NextAttemptOn = @NextAttemptOn,
    RetryCount = RetryCount + @RetryIncrement, IsOnSupportHold = @Hold,
    TemplateVersion = COALESCE(@TemplateVersion, TemplateVersion),
    SentOn = CASE WHEN @Status = N'Sent' THEN @Now ELSE SentOn END,
    Revision = Revision + 1, Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.EffectKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.LocalDate, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.RetryCount, inserted.NextAttemptOn, inserted.IsOnSupportHold, inserted.ProviderReference, inserted.LastError, inserted.TemplateVersion, inserted.Revision, inserted.ResolvedBy, inserted.ResolutionReason, inserted.ResolvedOn, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn
WHERE Id = @Id AND Version = @Token AND Status = N'Sending';

-- name: NotificationClaimMany :many
-- NotificationClaim for many jobs in one statement (a batch send claim, NotificationClaimMany
-- in the store): the store decides each key with NotificationClaimable from the rows
-- NotificationGetManyForUpdate read (and locked), then sends one tuple per claimable job,
-- expanded as NotificationInsertMany (five parameters per tuple, at most 100 tuples, far
-- under the 2,100 bound). Each tuple is guarded by the Version read, as NotificationClaim
-- is: a job whose Version moved matches no tuple and is not output. Each tuple is a
-- clustered index seek on Id (a nested loop over the VALUES rows). The output rows come in
-- no given order; the store maps them back by Id. Only Id and the columns the update sets
-- are output (the store read the whole row in the same transaction and patches these into
-- it).
UPDATE j
SET Status = N'Sending', ProcessingLeaseExpiresOn = v.l,
    AttemptCount = j.AttemptCount + 1, Revision = v.r, Version = j.Version + 1, UpdatedOn = v.n
OUTPUT inserted.Id, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.Revision, inserted.Version, inserted.UpdatedOn
FROM dbo.NotificationJob AS j
JOIN (VALUES /*row*/(@Id, @Version, @LeaseExpiresOn, @Revision, @Now)/*end*/) AS v(i, ver, l, r, n)
  ON j.Id = v.i AND j.Version = v.ver;

-- name: NotificationFinishMany :many
-- NotificationFinish for many outcomes in one statement (NotificationFinishMany in the
-- store), expanded as NotificationInsertMany (ten parameters per tuple, at most 100 tuples),
-- each tuple fenced as NotificationFinish is (its Id, its claim's Version as @Token, Status
-- Sending) and a clustered index seek on Id. A stale tuple matches nothing and is not
-- output. The store sends at most one tuple per (Id, Token), so at most one tuple matches a
-- job; the output rows come in no given order and the store maps each back by
-- (Id, Version - 1), the update adding 1 to Version. Only what the store needs is output:
-- Id and Version for that mapping, and the columns of the item's delivery fact
-- (sqlstore.factMessage) that the update set or may have (ResolvedBy); the fact's identity
-- columns come from the claimed job the item carries, or from NotificationFactKeysMany.
UPDATE j
SET Status = v.s, ProviderReference = v.pr, LastError = v.le,
    ProcessingLeaseExpiresOn = NULL, NextAttemptOn = v.na,
    RetryCount = j.RetryCount + v.ri, IsOnSupportHold = v.h,
    TemplateVersion = COALESCE(v.tv, j.TemplateVersion),
    SentOn = CASE WHEN v.s = N'Sent' THEN v.n ELSE j.SentOn END,
    Revision = j.Revision + 1, Version = j.Version + 1, UpdatedOn = v.n
OUTPUT inserted.Id, inserted.Version, inserted.Status, inserted.Revision, inserted.ProviderReference, inserted.ResolvedBy
FROM dbo.NotificationJob AS j
JOIN (VALUES /*row*/(@Id, @Token, @Status, @ProviderReference, @LastError, @NextAttemptOn,
    @RetryIncrement, @Hold, @TemplateVersion, @Now)/*end*/) AS v(i, t, s, pr, le, na, ri, h, tv, n)
  ON j.Id = v.i AND j.Version = v.t AND j.Status = N'Sending';

-- name: NotificationFactKeysMany :many
-- The identity columns of the delivery facts of recorded items that carry no claimed job
-- (NotificationFinishMany in the store), by Id: one parameter per Id, each a clustered index
-- seek. No statement changes these columns after the insert.
SELECT Id, DeliveryKey, EffectKey, BusinessUnitId, SchedulerKey, Channel, LocalDate
FROM dbo.NotificationJob
WHERE Id IN (SELECT v.i FROM (VALUES /*row*/(@Id)/*end*/) AS v(i));

-- name: NotificationListRetryDue :many
-- Retries and lookups whose time came (the dispatch sweep), oldest first.
SELECT TOP (@Limit) DeliveryKey FROM dbo.NotificationJob
WHERE Status IN (N'Queued', N'Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0
  AND NextAttemptOn <= @Now
ORDER BY NextAttemptOn, Id;

-- name: NotificationListQueuedStale :many
-- Queued jobs without a retry time unchanged since @QueuedBefore: their dispatch message was
-- lost (dead-lettered); the sweep starts them instead, oldest first.
SELECT TOP (@Limit) DeliveryKey FROM dbo.NotificationJob
WHERE Status = N'Queued' AND NextAttemptOn IS NULL AND IsOnSupportHold = 0
  AND UpdatedOn <= @QueuedBefore
ORDER BY Id;

-- name: NotificationListLeaseExpired :many
-- Send claims whose lease expired (the sender crashed or hung), oldest first.
SELECT TOP (@Limit) DeliveryKey FROM dbo.NotificationJob
WHERE Status = N'Sending' AND ProcessingLeaseExpiresOn <= @Now
ORDER BY ProcessingLeaseExpiresOn, Id;

-- name: NotificationNextWakeUp :one
-- One row; NULL when nothing will become claimable (MIN over no rows).
SELECT MIN(t) FROM (
    SELECT MIN(NextAttemptOn) AS t FROM dbo.NotificationJob
    WHERE Status IN (N'Queued', N'Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0
    UNION ALL
    SELECT MIN(ProcessingLeaseExpiresOn) AS t FROM dbo.NotificationJob WHERE Status = N'Sending'
) AS w;

-- name: NotificationListUnknown :many
-- The manual-resolution queue of one business unit, by Id after a cursor.
SELECT TOP (@Limit) Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn
FROM dbo.NotificationJob
WHERE Status = N'Unknown' AND NextAttemptOn IS NULL AND BusinessUnitId = @BusinessUnitId AND Id > @AfterId
ORDER BY Id;

-- name: NotificationResolve :one
UPDATE dbo.NotificationJob
SET Status = @Status, ResolvedBy = @ResolvedBy, ResolutionReason = @ResolutionReason, ResolvedOn = @Now,
    ProviderReference = COALESCE(@ProviderReference, ProviderReference),
    SentOn = CASE WHEN @Status = N'Sent' THEN @Now ELSE SentOn END,
    Revision = Revision + 1, Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.EffectKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.LocalDate, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.RetryCount, inserted.NextAttemptOn, inserted.IsOnSupportHold, inserted.ProviderReference, inserted.LastError, inserted.TemplateVersion, inserted.Revision, inserted.ResolvedBy, inserted.ResolutionReason, inserted.ResolvedOn, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn
WHERE DeliveryKey = @DeliveryKey AND BusinessUnitId = @BusinessUnitId AND Version = @Version AND Status = N'Unknown';

-- name: NotificationInsertMany :exec
-- NotificationInsert for many rows in one statement (docs/performance.md): the store repeats
-- the tuple between the row markers once per row, with each copy's parameters suffixed _0,
-- _1, … (sqlstore.expandRows; at most 2,100 parameters per statement), and inserts in @Ord
-- order; a row whose delivery key or effect already has a job is skipped, with the same
-- UPDLOCK + HOLDLOCK guards as NotificationInsert. The caller removes duplicates among the
-- rows (NOT EXISTS does not see the statement's own rows).
INSERT INTO dbo.NotificationJob (DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, LocalDate, Status, Revision, Version, CreatedOn, UpdatedOn)
SELECT v.k, v.e, v.s,
    COALESCE((SELECT a.Id FROM dbo.AutomationScheduler a WHERE a.Id = v.i AND a.SchedulerKey = v.s),
             (SELECT a.Id FROM dbo.AutomationScheduler a WHERE a.SchedulerKey = v.s)),
    v.b, v.c, v.r, v.t, v.p, v.d, N'Queued', 1, 1, v.n, v.n
FROM (VALUES /*row*/(@Ord, @DeliveryKey, @EffectKey, @SchedulerKey, @SchedulerId, @BusinessUnitId, @Channel, @Recipient,
    @Template, @PayloadJson, @LocalDate, @Now)/*end*/) AS v(o, k, e, s, i, b, c, r, t, p, d, n)
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE DeliveryKey = v.k)
  AND NOT EXISTS (
    SELECT 1 FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE BusinessUnitId = v.b AND EffectKey = v.e)
ORDER BY v.o;

-- name: OutboxInsert :exec
-- An existing MessageId is left alone; race-safe as NotificationInsert.
INSERT INTO dbo.Outbox (MessageId, Destination, SessionId, Body, Envelope, CreatedOn)
SELECT @MessageId, @Destination, @SessionId, @Body, @Envelope, @Now
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.Outbox WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE MessageId = @MessageId);

-- name: OutboxInsertMany :exec
-- OutboxInsert for many messages in one statement, expanded as NotificationInsertMany; an
-- existing MessageId is left alone, with the same guard as OutboxInsert. The caller removes
-- duplicate MessageIds among the rows.
INSERT INTO dbo.Outbox (MessageId, Destination, SessionId, Body, Envelope, CreatedOn)
SELECT v.m, v.t, v.s, v.b, v.e, v.n
FROM (VALUES /*row*/(@Ord, @MessageId, @Destination, @SessionId, @Body, @Envelope, @Now)/*end*/) AS v(o, m, t, s, b, e, n)
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.Outbox WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE MessageId = v.m)
ORDER BY v.o;

-- name: OutboxListUnpublished :many
SELECT TOP (@Limit) Id, MessageId, Destination, SessionId, Body, Envelope, CreatedOn, PublishedOn, Attempts
FROM dbo.Outbox WHERE PublishedOn IS NULL ORDER BY Id;

-- name: OutboxMarkPublished :exec
UPDATE dbo.Outbox SET PublishedOn = @Now, LeaseUntil = NULL, ClaimToken = NULL WHERE Id = @Id AND PublishedOn IS NULL;

-- name: OutboxMarkPublishedMany :exec
-- OutboxMarkPublished for many ids in one statement (the relay marks every message of a
-- batch it published), expanded as NotificationInsertMany (two parameters per id, far under
-- the 2,100 bound); each id a clustered index seek; an id already published is left alone.
UPDATE o SET PublishedOn = v.n, LeaseUntil = NULL, ClaimToken = NULL
FROM dbo.Outbox AS o
JOIN (VALUES /*row*/(@Id, @Now)/*end*/) AS v(i, n) ON o.Id = v.i
WHERE o.PublishedOn IS NULL;

-- name: OutboxRecordAttempt :exec
UPDATE dbo.Outbox SET Attempts = Attempts + 1 WHERE Id = @Id;

-- name: NotificationListUnsent :many
-- Jobs not yet Sent or Failed, by Id after a cursor (re-dispatch after an in-process bus
-- lost its messages, e.g. a local restart).
SELECT TOP (@Limit) Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn
FROM dbo.NotificationJob
WHERE Status IN (N'Queued', N'Sending') AND Id > @AfterId
ORDER BY Id;

-- name: NotificationTemplateLatest :one
SELECT TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn
FROM dbo.NotificationTemplate
WHERE TemplateKey = @TemplateKey AND BusinessUnitId = @BusinessUnitId
ORDER BY Version DESC
OFFSET 0 ROWS FETCH NEXT 1 ROWS ONLY;

-- name: NotificationTemplateLatestForUpdate :one
-- The read of a template save: UPDLOCK + HOLDLOCK lock the key range of (key, business unit)
-- to the end of the transaction, so two concurrent saves serialise instead of both taking
-- the same next version (a primary-key violation).
SELECT TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn
FROM dbo.NotificationTemplate WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE TemplateKey = @TemplateKey AND BusinessUnitId = @BusinessUnitId
ORDER BY Version DESC
OFFSET 0 ROWS FETCH NEXT 1 ROWS ONLY;

-- name: NotificationTemplateInsert :exec
INSERT INTO dbo.NotificationTemplate (TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn)
VALUES (@TemplateKey, @BusinessUnitId, @Version, @Subject, @TextBody, @HtmlBody, @CreatedBy, @Now);

-- name: DeliveryProjectionUpdate :exec
-- A fact replaces the projected state only when its revision is higher.
UPDATE dbo.DeliveryProjection
SET BusinessUnitId = @BusinessUnitId, LocalDate = @LocalDate, Channel = @Channel, Status = @Status,
    Revision = @Revision, EventId = @EventId, OccurredOn = @OccurredOn, AppliedOn = @Now
WHERE CommandId = @CommandId AND Revision < @Revision;

-- name: DeliveryProjectionInsert :exec
-- Race-safe as NotificationInsert; when a concurrent projector inserted first, nothing is
-- inserted and the caller runs DeliveryProjectionUpdate again.
INSERT INTO dbo.DeliveryProjection (CommandId, BusinessUnitId, LocalDate, Channel, Status, Revision, EventId, OccurredOn, AppliedOn)
SELECT @CommandId, @BusinessUnitId, @LocalDate, @Channel, @Status, @Revision, @EventId, @OccurredOn, @Now
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.DeliveryProjection WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE CommandId = @CommandId);

-- name: DeliveryProjectionStateUpdate :exec
UPDATE dbo.DeliveryProjectionState
SET FreshTo = CASE WHEN FreshTo < @FreshTo THEN @FreshTo ELSE FreshTo END, UpdatedOn = @Now
WHERE Name = @Name;

-- name: DeliveryProjectionStateInsert :exec
INSERT INTO dbo.DeliveryProjectionState (Name, FreshTo, UpdatedOn)
SELECT @Name, @FreshTo, @Now
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.DeliveryProjectionState WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Name = @Name);

-- name: DeliveryProjectionStateGet :one
SELECT FreshTo FROM dbo.DeliveryProjectionState WHERE Name = @Name;

-- name: DeliveryCountsByDay :many
SELECT LocalDate, Status, COUNT(*) FROM dbo.DeliveryProjection
WHERE BusinessUnitId = @BusinessUnitId AND LocalDate >= @FromDate AND LocalDate <= @ToDate
  AND Status IN (N'Sent', N'Failed', N'Unknown')
GROUP BY LocalDate, Status
ORDER BY LocalDate, Status;

-- name: NotificationListProjectionBehind :many
-- Jobs whose delivery projection is missing or at an older revision than the job (a fact
-- message lost with an in-process bus, e.g. a local restart between the relay and the
-- projector), by Id after a cursor. Revision 1 (created, Queued) writes no fact.
SELECT TOP (@Limit) j.Id, j.DeliveryKey, j.EffectKey, j.SchedulerKey, j.BusinessUnitId, j.Channel, j.Recipient, j.Template, j.PayloadJson, j.LocalDate, j.Status, j.ProcessingLeaseExpiresOn, j.AttemptCount, j.RetryCount, j.NextAttemptOn, j.IsOnSupportHold, j.ProviderReference, j.LastError, j.TemplateVersion, j.Revision, j.ResolvedBy, j.ResolutionReason, j.ResolvedOn, j.Version, j.CreatedOn, j.UpdatedOn, j.SentOn
FROM dbo.NotificationJob j LEFT JOIN dbo.DeliveryProjection p ON p.CommandId = j.DeliveryKey
WHERE j.Id > @AfterId AND j.Revision > 1 AND (p.CommandId IS NULL OR p.Revision < j.Revision)
ORDER BY j.Id;
