-- NotificationJob and Outbox queries (SQLite). Same names as sql/mssql/queries/delivery.sql.

-- name: NotificationInsert :exec
-- A redelivered request for the same delivery key, or another command for the same effect
-- (BusinessUnitId, EffectKey), is a no-op: the effect already has its command (docs/architecture.md#commands).
-- The effect's uniqueness is three checks (migration 0025): the DeliveryKey's unique index,
-- the partial unique index UX_NotificationJob_Effect (jobs whose effect is another key),
-- and the two NOT EXISTS below for a job whose effect is the delivery key of another job of
-- its unit. SchedulerId is the scheduler row with @SchedulerKey: @SchedulerId's own row (a
-- primary-key seek) when its key is that one, else the row found by key, else NULL.
INSERT INTO NotificationJob (DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, LocalDate, Status, Revision, Version, CreatedOn, UpdatedOn)
SELECT v.column1, v.column2, v.column3,
    COALESCE((SELECT s.Id FROM AutomationScheduler s WHERE s.Id = v.column4 AND s.SchedulerKey = v.column3),
             (SELECT s.Id FROM AutomationScheduler s WHERE s.SchedulerKey = v.column3)),
    v.column5, v.column6, v.column7, v.column8, v.column9, v.column10, 'Queued', 1, 1, v.column11, v.column11
FROM (VALUES (@DeliveryKey, @EffectKey, @SchedulerKey, @SchedulerId, @BusinessUnitId, @Channel, @Recipient,
    @Template, @PayloadJson, @LocalDate, @Now)) AS v
WHERE NOT EXISTS (SELECT 1 FROM NotificationJob j
                  WHERE j.BusinessUnitId = v.column5 AND j.EffectKey = v.column2 AND j.EffectKey <> j.DeliveryKey)
  AND NOT EXISTS (SELECT 1 FROM NotificationJob j
                  WHERE j.DeliveryKey = v.column2 AND j.BusinessUnitId = v.column5 AND j.EffectKey = j.DeliveryKey)
ON CONFLICT DO NOTHING;

-- name: NotificationGetByKey :one
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM NotificationJob WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationGetByKeyForUpdate :one
-- The read of the send claim's read-decide-write transaction (BEGIN IMMEDIATE already holds
-- the write lock in SQLite).
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM NotificationJob WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationGetManyForUpdate :many
-- The read of a batch send claim (NotificationClaimMany): the jobs of up to 100 delivery keys
-- in one statement, each seeking the unique DeliveryKey index; the store repeats the tuple
-- once per key (sqlstore.expandRows). BEGIN IMMEDIATE already holds the write lock.
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM NotificationJob WHERE DeliveryKey IN (VALUES /*row*/(@DeliveryKey)/*end*/);

-- name: NotificationClaim :one
-- The send claim of a job NotificationClaimable decided on, guarded by the Version read.
-- FirstClaimedOn keeps the job's first claim (store.NotificationJob.FirstClaimedOn,
-- store.FirstClaim): @Now when no earlier claim counts (AttemptCount 0: none, or every one
-- ended in a wait, which sent nothing), else as stored, or CreatedOn for a row claimed
-- before migration 0071. The right-hand sides read the row as it was before the update.
UPDATE NotificationJob
SET Status = 'Sending', ProcessingLeaseExpiresOn = @LeaseExpiresOn,
    AttemptCount = AttemptCount + 1, Revision = @Revision, Version = Version + 1, UpdatedOn = @Now,
    FirstClaimedOn = CASE WHEN AttemptCount = 0 THEN @Now ELSE COALESCE(FirstClaimedOn, CreatedOn) END
WHERE Id = @Id AND Version = @Version
RETURNING Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn;

-- name: NotificationFinish :one
-- An outcome due again (NextAttemptOn) with no RetryIncrement is a wait (quiet hours, a
-- channel's limit; store.NotificationFinishParams.Wait): it gives back the claim's
-- AttemptCount, as nothing was attempted.
UPDATE NotificationJob
SET Status = @Status, ProviderReference = @ProviderReference, LastError = @LastError,
    ProcessingLeaseExpiresOn = NULL, NextAttemptOn = @NextAttemptOn,
    RetryCount = RetryCount + @RetryIncrement, IsOnSupportHold = @Hold,
    AttemptCount = AttemptCount - CASE WHEN @NextAttemptOn IS NOT NULL AND @RetryIncrement = 0 THEN 1 ELSE 0 END,
    TemplateVersion = COALESCE(@TemplateVersion, TemplateVersion),
    SentOn = CASE WHEN @Status = 'Sent' THEN @Now ELSE SentOn END,
    Revision = Revision + 1, Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status = 'Sending'
RETURNING Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn;

-- name: NotificationClaimMany :many
-- NotificationClaim for many jobs in one statement (a batch send claim, NotificationClaimMany
-- in the store): the store decides each key with NotificationClaimable from the rows
-- NotificationGetManyForUpdate read, then sends one tuple per claimable job, expanded as
-- NotificationInsertMany (at most 100 per statement). Each tuple is guarded by the Version
-- read, as NotificationClaim is: a job whose Version moved matches no tuple and is not
-- returned. Each tuple seeks the primary key. The returned rows come in no given order; the
-- store maps them back by Id. Only Id and the columns the update sets are returned (the
-- store read the whole row in the same transaction and patches these into it; returning
-- all 28 columns, PayloadJson included, would copy and scan what the store already holds,
-- under the write lock).
-- (VALUES columns are column1, …; every parameter is in the row tuple, as this dialect binds
-- rows by position; RETURNING names only the updated table.)
-- FirstClaimedOn as NotificationClaim sets it.
UPDATE NotificationJob
SET Status = 'Sending', ProcessingLeaseExpiresOn = v.column3,
    AttemptCount = AttemptCount + 1, Revision = v.column4, Version = Version + 1, UpdatedOn = v.column5,
    FirstClaimedOn = CASE WHEN AttemptCount = 0 THEN v.column5 ELSE COALESCE(FirstClaimedOn, CreatedOn) END
FROM (VALUES /*row*/(@Id, @Version, @LeaseExpiresOn, @Revision, @Now)/*end*/) AS v
WHERE NotificationJob.Id = v.column1 AND NotificationJob.Version = v.column2
RETURNING Id, Status, ProcessingLeaseExpiresOn, AttemptCount, Revision, Version, UpdatedOn, FirstClaimedOn;

-- name: NotificationFinishMany :many
-- NotificationFinish for many outcomes in one statement (NotificationFinishMany in the
-- store), expanded as NotificationInsertMany (at most 100 tuples per statement), each tuple
-- fenced as NotificationFinish is (its Id, its claim's Version as @Token, Status Sending) and
-- seeking the primary key. A stale tuple matches nothing and is not returned. The store
-- sends at most one tuple per (Id, Token); the returned rows come in no given order and the
-- store maps each back by (Id, Version - 1), the update adding 1 to Version. Only what the
-- store needs is returned: Id and Version for that mapping, and the columns of the item's
-- delivery fact (sqlstore.factMessage) that the update set or may have (ResolvedBy); the
-- fact's identity columns come from the claimed job the item carries, or from
-- NotificationFactKeysMany.
UPDATE NotificationJob
SET Status = v.column3, ProviderReference = v.column4, LastError = v.column5,
    ProcessingLeaseExpiresOn = NULL, NextAttemptOn = v.column6,
    RetryCount = RetryCount + v.column7, IsOnSupportHold = v.column8,
    AttemptCount = AttemptCount - CASE WHEN v.column6 IS NOT NULL AND v.column7 = 0 THEN 1 ELSE 0 END,
    TemplateVersion = COALESCE(v.column9, TemplateVersion),
    SentOn = CASE WHEN v.column3 = 'Sent' THEN v.column10 ELSE SentOn END,
    Revision = Revision + 1, Version = Version + 1, UpdatedOn = v.column10
FROM (VALUES /*row*/(@Id, @Token, @Status, @ProviderReference, @LastError, @NextAttemptOn,
    @RetryIncrement, @Hold, @TemplateVersion, @Now)/*end*/) AS v
WHERE NotificationJob.Id = v.column1 AND NotificationJob.Version = v.column2 AND NotificationJob.Status = 'Sending'
RETURNING Id, Version, Status, Revision, ProviderReference, ResolvedBy;

-- name: NotificationFactKeysMany :many
-- The identity columns of the delivery facts of recorded items that carry no claimed job
-- (NotificationFinishMany in the store), by Id, expanded as NotificationInsertMany; each
-- tuple seeks the primary key. No statement changes these columns after the insert.
SELECT Id, DeliveryKey, EffectKey, BusinessUnitId, SchedulerKey, Channel, LocalDate
FROM NotificationJob WHERE Id IN (VALUES /*row*/(@Id)/*end*/);

-- name: NotificationListRetryDue :many
-- Retries and lookups whose time came (the dispatch sweep), oldest first.
SELECT DeliveryKey FROM NotificationJob
WHERE Status IN ('Queued','Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0
  AND NextAttemptOn <= @Now
ORDER BY NextAttemptOn, Id
LIMIT @Limit;

-- name: NotificationListQueuedStale :many
-- Queued jobs without a retry time unchanged since @QueuedBefore: their dispatch message was
-- lost (dead-lettered); the sweep starts them instead, oldest first.
-- The partial index IX_NotificationJob_Unsent holds only unsent jobs (its WHERE is repeated
-- so SQLite can use it), so the sweep never walks sent history.
SELECT DeliveryKey FROM NotificationJob INDEXED BY IX_NotificationJob_Unsent
WHERE Status IN ('Queued','Sending') AND Status = 'Queued' AND NextAttemptOn IS NULL AND IsOnSupportHold = 0
  AND UpdatedOn <= @QueuedBefore
ORDER BY Id
LIMIT @Limit;

-- name: NotificationListLeaseExpired :many
-- Send claims whose lease expired (the sender crashed or hung), oldest first.
SELECT DeliveryKey FROM NotificationJob
WHERE Status = 'Sending' AND ProcessingLeaseExpiresOn <= @Now
ORDER BY ProcessingLeaseExpiresOn, Id
LIMIT @Limit;

-- name: NotificationNextWakeUp :one
SELECT MIN(t) FROM (
    SELECT MIN(NextAttemptOn) AS t FROM NotificationJob
    WHERE Status IN ('Queued','Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0
    UNION ALL
    SELECT MIN(ProcessingLeaseExpiresOn) AS t FROM NotificationJob WHERE Status = 'Sending'
) AS w;

-- name: NotificationListUnknown :many
-- The manual-resolution queue of one business unit, by Id after a cursor.
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM NotificationJob
WHERE Status = 'Unknown' AND NextAttemptOn IS NULL AND BusinessUnitId = @BusinessUnitId AND Id > @AfterId
ORDER BY Id
LIMIT @Limit;

-- name: NotificationResolve :one
UPDATE NotificationJob
SET Status = @Status, ResolvedBy = @ResolvedBy, ResolutionReason = @ResolutionReason, ResolvedOn = @Now,
    ProviderReference = COALESCE(@ProviderReference, ProviderReference),
    SentOn = CASE WHEN @Status = 'Sent' THEN @Now ELSE SentOn END,
    Revision = Revision + 1, Version = Version + 1, UpdatedOn = @Now
WHERE DeliveryKey = @DeliveryKey AND BusinessUnitId = @BusinessUnitId AND Version = @Version AND Status = 'Unknown'
RETURNING Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn;

-- name: NotificationInsertMany :exec
-- NotificationInsert for many rows in one statement (docs/performance.md): the store repeats
-- the tuple between the row markers once per row, with each copy's parameters suffixed _0,
-- _1, … (sqlstore.expandRows), and inserts in @Ord order; a row whose delivery key or effect
-- already has a job is skipped, with the same checks as NotificationInsert (the NOT EXISTS
-- do not see the statement's own rows: the store removes duplicates among them first).
-- (VALUES columns are column1, ….)
-- OR IGNORE instead of ON CONFLICT DO NOTHING: with every constraint resolved by IGNORE the
-- statement cannot abort halfway, so SQLite keeps no statement journal for it (a copy of
-- every page it touches; docs/performance.md, "The completion transaction"). IGNORE also
-- skips a row that breaks NOT NULL or CHECK: no row here can, since Status is a literal and
-- every other NOT NULL value is bound from a Go string or time, never NULL.
INSERT OR IGNORE INTO NotificationJob (DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, LocalDate, Status, Revision, Version, CreatedOn, UpdatedOn)
SELECT v.column2, v.column3, v.column4,
    COALESCE((SELECT s.Id FROM AutomationScheduler s WHERE s.Id = v.column5 AND s.SchedulerKey = v.column4),
             (SELECT s.Id FROM AutomationScheduler s WHERE s.SchedulerKey = v.column4)),
    v.column6, v.column7, v.column8, v.column9, v.column10, v.column11, 'Queued', 1, 1, v.column12, v.column12
FROM (VALUES /*row*/(@Ord, @DeliveryKey, @EffectKey, @SchedulerKey, @SchedulerId, @BusinessUnitId, @Channel, @Recipient,
    @Template, @PayloadJson, @LocalDate, @Now)/*end*/) AS v
WHERE NOT EXISTS (SELECT 1 FROM NotificationJob j
                  WHERE j.BusinessUnitId = v.column6 AND j.EffectKey = v.column3 AND j.EffectKey <> j.DeliveryKey)
  AND NOT EXISTS (SELECT 1 FROM NotificationJob j
                  WHERE j.DeliveryKey = v.column3 AND j.BusinessUnitId = v.column6 AND j.EffectKey = j.DeliveryKey)
ORDER BY v.column1;

-- name: OutboxInsert :exec
-- An existing MessageId is left alone. The conflict target names the partial unique index
-- UX_Outbox_MessageId (migration 0026), which holds every message but the delivery facts:
-- a fact is written once by construction, in the transaction that moved its job to its
-- Revision (docs/performance.md, "Delivery facts outside the MessageId index").
-- MarkReserve holds @Now, as wide as the PublishedOn the mark writes (migration 0030).
INSERT INTO Outbox (MessageId, Destination, SessionId, Body, Envelope, CreatedOn, MarkReserve, TraceParent)
VALUES (@MessageId, @Destination, @SessionId, @Body, @Envelope, @Now, @Now, @TraceParent)
ON CONFLICT (MessageId) WHERE Destination <> 'delivery-facts' DO NOTHING;

-- name: OutboxInsertMany :exec
-- OutboxInsert for many messages in one statement, expanded as NotificationInsertMany and
-- inserted in @Ord order; an existing MessageId is left alone (UX_Outbox_MessageId: every
-- message but the delivery facts, as in OutboxInsert). OR IGNORE as in
-- NotificationInsertMany: the store binds a nil Body as an empty one, never NULL.
INSERT OR IGNORE INTO Outbox (MessageId, Destination, SessionId, Body, Envelope, CreatedOn, MarkReserve, TraceParent)
SELECT column2, column3, column4, column5, column6, column7, column7, column8
FROM (VALUES /*row*/(@Ord, @MessageId, @Destination, @SessionId, @Body, @Envelope, @Now, @TraceParent)/*end*/)
ORDER BY column1;

-- name: OutboxListUnpublished :many
SELECT Id, MessageId, Destination, SessionId, Body, Envelope, CreatedOn, PublishedOn, Attempts, TraceParent
FROM Outbox WHERE PublishedOn IS NULL ORDER BY Id LIMIT @Limit;

-- name: OutboxMarkPublished :exec
-- PublishedOn takes the bytes MarkReserve gives back, so the record keeps its size and
-- SQLite overwrites it in place (migration 0030; docs/performance.md, "The mark rewrites a
-- row in place").
UPDATE Outbox SET PublishedOn = @Now, MarkReserve = NULL, LeaseUntil = NULL, ClaimToken = NULL WHERE Id = @Id AND PublishedOn IS NULL;

-- name: OutboxMarkPublishedMany :exec
-- OutboxMarkPublished for many ids in one statement (the relay marks every message of a
-- batch it published), expanded as NotificationInsertMany; each id seeks the primary key,
-- and an id already published is left alone. (VALUES columns are column1, column2; every
-- parameter is in the row tuple, as this dialect binds rows by position.) MarkReserve as in
-- OutboxMarkPublished.
UPDATE Outbox SET PublishedOn = v.column2, MarkReserve = NULL, LeaseUntil = NULL, ClaimToken = NULL
FROM (VALUES /*row*/(@Id, @Now)/*end*/) AS v
WHERE Outbox.Id = v.column1 AND Outbox.PublishedOn IS NULL;

-- name: OutboxRecordAttempt :exec
UPDATE Outbox SET Attempts = Attempts + 1 WHERE Id = @Id;

-- name: NotificationListUnsent :many
-- Jobs not yet Sent or Failed, by Id after a cursor (re-dispatch after an in-process bus
-- lost its messages, e.g. a local restart).
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM NotificationJob
WHERE Status IN ('Queued', 'Sending') AND Id > @AfterId
ORDER BY Id
LIMIT @Limit;

-- name: NotificationTemplateLatest :one
SELECT TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn, Kind, Extra, Deleted
FROM NotificationTemplate
WHERE TemplateKey = @TemplateKey AND BusinessUnitId = @BusinessUnitId
ORDER BY Version DESC
LIMIT 1;

-- name: NotificationTemplateLatestForUpdate :one
-- The read of a template save (BEGIN IMMEDIATE already serialises writers in SQLite).
SELECT TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn, Kind, Extra, Deleted
FROM NotificationTemplate
WHERE TemplateKey = @TemplateKey AND BusinessUnitId = @BusinessUnitId
ORDER BY Version DESC
LIMIT 1;

-- name: NotificationTemplateInsert :exec
INSERT INTO NotificationTemplate (TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn, Kind, Extra, Deleted)
VALUES (@TemplateKey, @BusinessUnitId, @Version, @Subject, @TextBody, @HtmlBody, @CreatedBy, @Now, @Kind, @Extra, @Deleted);

-- name: DeliveryProjectionUpdate :exec
-- A fact replaces the projected state only when its revision is higher.
UPDATE DeliveryProjection
SET BusinessUnitId = @BusinessUnitId, LocalDate = @LocalDate, Channel = @Channel, Status = @Status,
    Revision = @Revision, EventId = @EventId, OccurredOn = @OccurredOn, AppliedOn = @Now
WHERE CommandId = @CommandId AND Revision < @Revision;

-- name: DeliveryProjectionInsert :exec
INSERT INTO DeliveryProjection (CommandId, BusinessUnitId, LocalDate, Channel, Status, Revision, EventId, OccurredOn, AppliedOn)
VALUES (@CommandId, @BusinessUnitId, @LocalDate, @Channel, @Status, @Revision, @EventId, @OccurredOn, @Now)
ON CONFLICT (CommandId) DO NOTHING;

-- name: DeliveryProjectionStateUpdate :exec
UPDATE DeliveryProjectionState
SET FreshTo = CASE WHEN FreshTo < @FreshTo THEN @FreshTo ELSE FreshTo END, UpdatedOn = @Now
WHERE Name = @Name;

-- name: DeliveryProjectionStateInsert :exec
INSERT INTO DeliveryProjectionState (Name, FreshTo, UpdatedOn)
VALUES (@Name, @FreshTo, @Now)
ON CONFLICT (Name) DO NOTHING;

-- name: DeliveryProjectionStateGet :one
SELECT FreshTo FROM DeliveryProjectionState WHERE Name = @Name;

-- name: DeliveryCountsByDay :many
SELECT LocalDate, Status, COUNT(*) FROM DeliveryProjection
WHERE BusinessUnitId = @BusinessUnitId AND LocalDate >= @FromDate AND LocalDate <= @ToDate
  AND Status IN ('Sent', 'Failed', 'Unknown')
GROUP BY LocalDate, Status
ORDER BY LocalDate, Status;

-- name: NotificationListProjectionBehind :many
-- Jobs whose delivery projection is missing or at an older revision than the job (a fact
-- message lost with an in-process bus, e.g. a local restart between the relay and the
-- projector), by Id after a cursor. Revision 1 (created, Queued) writes no fact.
SELECT j.Id, j.DeliveryKey, j.EffectKey, j.SchedulerKey, j.BusinessUnitId, j.Channel, j.Recipient, j.Template, j.PayloadJson, j.LocalDate, j.Status, j.ProcessingLeaseExpiresOn, j.AttemptCount, j.RetryCount, j.NextAttemptOn, j.IsOnSupportHold, j.ProviderReference, j.LastError, j.TemplateVersion, j.Revision, j.ResolvedBy, j.ResolutionReason, j.ResolvedOn, j.Version, j.CreatedOn, j.UpdatedOn, j.SentOn, j.FirstClaimedOn
FROM NotificationJob j LEFT JOIN DeliveryProjection p ON p.CommandId = j.DeliveryKey
WHERE j.Id > @AfterId AND j.Revision > 1 AND (p.CommandId IS NULL OR p.Revision < j.Revision)
ORDER BY j.Id
LIMIT @Limit;

-- name: NotificationListHeld :many
-- The deliveries of one business unit that wait Failed on support hold (a template missing,
-- retries run out), by Id after a cursor.
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM NotificationJob
WHERE Status = 'Failed' AND IsOnSupportHold = 1 AND BusinessUnitId = @BusinessUnitId AND Id > @AfterId
ORDER BY Id
LIMIT @Limit;

-- name: NotificationRelease :one
-- Release a delivery held Failed on support hold (after its fix: a template saved): Queued
-- again and due at @Now, so the dispatcher's sweep claims it (NotificationClaimDue); the hold
-- cleared; AttemptCount and RetryCount kept. No fact: the job is in flight again, and its
-- outcome writes one (Revision + 1). Guarded by the Version the operator saw.
UPDATE NotificationJob
SET Status = 'Queued', IsOnSupportHold = 0, NextAttemptOn = @Now, ProcessingLeaseExpiresOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
WHERE DeliveryKey = @DeliveryKey AND BusinessUnitId = @BusinessUnitId AND Version = @Version AND Status = 'Failed' AND IsOnSupportHold = 1
RETURNING Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn;
