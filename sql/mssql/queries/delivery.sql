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
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM dbo.NotificationJob WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationGetByKeyForUpdate :one
-- The read of the send claim's read-decide-write transaction: UPDLOCK + HOLDLOCK keep the
-- row locked until the transaction ends, so of two concurrent claimers the second waits here
-- and then reads the first one's committed claim (also under READ_COMMITTED_SNAPSHOT).
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationGetManyForUpdate :many
-- The read of a batch send claim (NotificationClaimMany): the jobs of up to 100 delivery keys
-- in one statement, each an index seek on UQ_NotificationJob_DeliveryKey; UPDLOCK + HOLDLOCK
-- keep them locked until the transaction ends, as NotificationGetByKeyForUpdate does for one
-- key. The keys come as one JSON parameter, @Rows (sqlstore's rows parameter, mssql.EncodeRows:
-- one declaration, so one plan, whatever the keys' lengths); every string of @Rows is read as
-- nvarchar(4000) (or max), wider than any key column, so an over-long value is never cut to
-- match a shorter stored key, and compared under the key's own collation.
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE DeliveryKey IN (SELECT v.k COLLATE Latin1_General_100_BIN2
                      FROM OPENJSON(@Rows) WITH (k nvarchar(4000) '$.DeliveryKey') AS v);

-- name: NotificationClaim :one
-- The send claim of a job NotificationClaimable decided on, guarded by the Version read.
-- FirstClaimedOn keeps the job's first claim (store.NotificationJob.FirstClaimedOn,
-- store.FirstClaim): @Now when no earlier claim counts (AttemptCount 0: none, or every one
-- ended in a wait, which sent nothing), else as stored, or CreatedOn for a row claimed
-- before migration 0071. The right-hand sides read the row as it was before the update.
UPDATE dbo.NotificationJob
SET Status = N'Sending', ProcessingLeaseExpiresOn = @LeaseExpiresOn,
    AttemptCount = AttemptCount + 1, Revision = @Revision, Version = Version + 1, UpdatedOn = @Now,
    FirstClaimedOn = CASE WHEN AttemptCount = 0 THEN @Now ELSE COALESCE(FirstClaimedOn, CreatedOn) END
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.EffectKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.LocalDate, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.RetryCount, inserted.NextAttemptOn, inserted.IsOnSupportHold, inserted.ProviderReference, inserted.LastError, inserted.TemplateVersion, inserted.Revision, inserted.ResolvedBy, inserted.ResolutionReason, inserted.ResolvedOn, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn, inserted.FirstClaimedOn
WHERE Id = @Id AND Version = @Version;

-- name: NotificationFinish :one
-- An outcome due again (NextAttemptOn) with no RetryIncrement is a wait (quiet hours, a
-- channel's limit; store.NotificationFinishParams.Wait): it gives back the claim's
-- AttemptCount, as nothing was attempted.
UPDATE dbo.NotificationJob
SET Status = @Status, ProviderReference = @ProviderReference, LastError = @LastError,
    ProcessingLeaseExpiresOn = NULL, NextAttemptOn = @NextAttemptOn,
    RetryCount = RetryCount + @RetryIncrement, IsOnSupportHold = @Hold,
    AttemptCount = AttemptCount - CASE WHEN @NextAttemptOn IS NOT NULL AND @RetryIncrement = 0 THEN 1 ELSE 0 END,
    TemplateVersion = COALESCE(@TemplateVersion, TemplateVersion),
    SentOn = CASE WHEN @Status = N'Sent' THEN @Now ELSE SentOn END,
    Revision = Revision + 1, Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.EffectKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.LocalDate, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.RetryCount, inserted.NextAttemptOn, inserted.IsOnSupportHold, inserted.ProviderReference, inserted.LastError, inserted.TemplateVersion, inserted.Revision, inserted.ResolvedBy, inserted.ResolutionReason, inserted.ResolvedOn, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn, inserted.FirstClaimedOn
WHERE Id = @Id AND Version = @Token AND Status = N'Sending';

-- name: NotificationClaimMany :many
-- NotificationClaim for many jobs in one statement (a batch send claim, NotificationClaimMany
-- in the store): the store decides each key with NotificationClaimable from the rows
-- NotificationGetManyForUpdate read (and locked), then sends one row per claimable job in
-- @Rows (at most 100; see NotificationGetManyForUpdate). Each row is guarded by the Version
-- read, as NotificationClaim is: a job whose Version moved matches no row and is not output.
-- Each row is a clustered index seek on Id (a nested loop over the OPENJSON rows). The output rows come in
-- no given order; the store maps them back by Id. Only Id and the columns the update sets
-- are output (the store read the whole row in the same transaction and patches these into
-- it).
-- FirstClaimedOn as NotificationClaim sets it.
UPDATE j
SET Status = N'Sending', ProcessingLeaseExpiresOn = v.l,
    AttemptCount = j.AttemptCount + 1, Revision = v.r, Version = j.Version + 1, UpdatedOn = v.n,
    FirstClaimedOn = CASE WHEN j.AttemptCount = 0 THEN v.n ELSE COALESCE(j.FirstClaimedOn, j.CreatedOn) END
OUTPUT inserted.Id, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.Revision, inserted.Version, inserted.UpdatedOn, inserted.FirstClaimedOn
FROM dbo.NotificationJob AS j
JOIN OPENJSON(@Rows) WITH (i bigint '$.Id', ver bigint '$.Version', l datetime2(3) '$.LeaseExpiresOn',
    r bigint '$.Revision', n datetime2(3) '$.Now') AS v
  ON j.Id = v.i AND j.Version = v.ver;

-- name: NotificationFinishMany :many
-- NotificationFinish for many outcomes in one statement (NotificationFinishMany in the
-- store), one row of @Rows per outcome (at most 100; see NotificationGetManyForUpdate),
-- each fenced as NotificationFinish is (its Id, its claim's Version as Token, Status
-- Sending) and a clustered index seek on Id. A stale row matches nothing and is not
-- output. The store sends at most one row per (Id, Token), so at most one row matches a
-- job; the output rows come in no given order and the store maps each back by
-- (Id, Version - 1), the update adding 1 to Version. Only what the store needs is output:
-- Id and Version for that mapping, and the columns of the item's delivery fact
-- (sqlstore.factMessage) that the update set or may have (ResolvedBy); the fact's identity
-- columns come from the claimed job the item carries, or from NotificationFactKeysMany.
UPDATE j
SET Status = v.s, ProviderReference = v.pr, LastError = v.le,
    ProcessingLeaseExpiresOn = NULL, NextAttemptOn = v.na,
    RetryCount = j.RetryCount + v.ri, IsOnSupportHold = v.h,
    AttemptCount = j.AttemptCount - CASE WHEN v.na IS NOT NULL AND v.ri = 0 THEN 1 ELSE 0 END,
    TemplateVersion = COALESCE(v.tv, j.TemplateVersion),
    SentOn = CASE WHEN v.s = N'Sent' THEN v.n ELSE j.SentOn END,
    Revision = j.Revision + 1, Version = j.Version + 1, UpdatedOn = v.n
OUTPUT inserted.Id, inserted.Version, inserted.Status, inserted.Revision, inserted.ProviderReference, inserted.ResolvedBy
FROM dbo.NotificationJob AS j
JOIN OPENJSON(@Rows) WITH (i bigint '$.Id', t bigint '$.Token', s nvarchar(4000) '$.Status',
    pr nvarchar(4000) '$.ProviderReference', le nvarchar(max) '$.LastError', na datetime2(3) '$.NextAttemptOn',
    ri int '$.RetryIncrement', h bit '$.Hold', tv bigint '$.TemplateVersion', n datetime2(3) '$.Now') AS v
  ON j.Id = v.i AND j.Version = v.t AND j.Status = N'Sending';

-- name: NotificationFactKeysMany :many
-- The identity columns of the delivery facts of recorded items that carry no claimed job
-- (NotificationFinishMany in the store), by Id (in @Rows), each a clustered index seek. No
-- statement changes these columns after the insert.
SELECT Id, DeliveryKey, EffectKey, BusinessUnitId, SchedulerKey, Channel, LocalDate
FROM dbo.NotificationJob
WHERE Id IN (SELECT v.i FROM OPENJSON(@Rows) WITH (i bigint '$.Id') AS v);

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
SELECT TOP (@Limit) Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM dbo.NotificationJob
WHERE Status = N'Unknown' AND NextAttemptOn IS NULL AND BusinessUnitId = @BusinessUnitId AND Id > @AfterId
ORDER BY Id;

-- name: NotificationResolve :one
UPDATE dbo.NotificationJob
SET Status = @Status, ResolvedBy = @ResolvedBy, ResolutionReason = @ResolutionReason, ResolvedOn = @Now,
    ProviderReference = COALESCE(@ProviderReference, ProviderReference),
    SentOn = CASE WHEN @Status = N'Sent' THEN @Now ELSE SentOn END,
    Revision = Revision + 1, Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.EffectKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.LocalDate, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.RetryCount, inserted.NextAttemptOn, inserted.IsOnSupportHold, inserted.ProviderReference, inserted.LastError, inserted.TemplateVersion, inserted.Revision, inserted.ResolvedBy, inserted.ResolutionReason, inserted.ResolvedOn, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn, inserted.FirstClaimedOn
WHERE DeliveryKey = @DeliveryKey AND BusinessUnitId = @BusinessUnitId AND Version = @Version AND Status = N'Unknown';

-- name: NotificationInsertMany :exec
-- NotificationInsert for many rows in one statement (docs/performance.md): the rows come in
-- @Rows (see NotificationGetManyForUpdate) and are inserted in Ord order; a row whose
-- delivery key or effect already has a job is skipped, with the same UPDLOCK + HOLDLOCK +
-- FORCESEEK guards as NotificationInsert, one NOT EXISTS per unique index. The caller removes
-- duplicates among the rows (NOT EXISTS does not see the statement's own rows). Strings are
-- read as nvarchar(4000) or max, wider than their columns: a value too long for its column
-- fails the insert (2628), as a parameter would, instead of being cut.
INSERT INTO dbo.NotificationJob (DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, LocalDate, Status, Revision, Version, CreatedOn, UpdatedOn)
SELECT v.k, v.e, v.s,
    COALESCE((SELECT a.Id FROM dbo.AutomationScheduler a WHERE a.Id = v.i AND a.SchedulerKey = v.s COLLATE Latin1_General_100_BIN2),
             (SELECT a.Id FROM dbo.AutomationScheduler a WHERE a.SchedulerKey = v.s COLLATE Latin1_General_100_BIN2)),
    v.b, v.c, v.r, v.t, v.p, v.d, N'Queued', 1, 1, v.n, v.n
FROM OPENJSON(@Rows) WITH (o int '$.Ord', k nvarchar(4000) '$.DeliveryKey', e nvarchar(4000) '$.EffectKey',
    s nvarchar(4000) '$.SchedulerKey', i bigint '$.SchedulerId', b nvarchar(4000) '$.BusinessUnitId',
    c nvarchar(4000) '$.Channel', r nvarchar(4000) '$.Recipient', t nvarchar(4000) '$.Template',
    p nvarchar(max) '$.PayloadJson', d nvarchar(4000) '$.LocalDate', n datetime2(3) '$.Now') AS v
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE DeliveryKey = v.k COLLATE Latin1_General_100_BIN2)
  AND NOT EXISTS (
    SELECT 1 FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
    WHERE BusinessUnitId = v.b COLLATE Latin1_General_100_BIN2 AND EffectKey = v.e COLLATE Latin1_General_100_BIN2)
ORDER BY v.o;

-- name: OutboxInsert :exec
-- An existing MessageId is left alone; race-safe as NotificationInsert.
INSERT INTO dbo.Outbox (MessageId, Destination, SessionId, Body, Envelope, CreatedOn, TraceParent)
SELECT @MessageId, @Destination, @SessionId, @Body, @Envelope, @Now, @TraceParent
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.Outbox WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE MessageId = @MessageId);

-- name: OutboxInsertMany :exec
-- OutboxInsert for many messages in one statement, the rows in @Rows as NotificationInsertMany
-- (the body base64 in the JSON, which OPENJSON decodes into varbinary(max)); an existing
-- MessageId is left alone, with the same guard as OutboxInsert. The caller removes duplicate
-- MessageIds among the rows.
INSERT INTO dbo.Outbox (MessageId, Destination, SessionId, Body, Envelope, CreatedOn, TraceParent)
SELECT v.m, v.t, v.s, v.b, v.e, v.n, v.tp
FROM OPENJSON(@Rows) WITH (o int '$.Ord', m nvarchar(4000) '$.MessageId', t nvarchar(4000) '$.Destination',
    s nvarchar(4000) '$.SessionId', b varbinary(max) '$.Body', e bit '$.Envelope', n datetime2(3) '$.Now', tp varchar(100) '$.TraceParent') AS v
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.Outbox WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE MessageId = v.m COLLATE Latin1_General_100_BIN2)
ORDER BY v.o;

-- name: OutboxListUnpublished :many
SELECT TOP (@Limit) Id, MessageId, Destination, SessionId, Body, Envelope, CreatedOn, PublishedOn, Attempts, TraceParent
FROM dbo.Outbox WHERE PublishedOn IS NULL ORDER BY Id;

-- name: OutboxMarkPublished :exec
UPDATE dbo.Outbox SET PublishedOn = @Now, LeaseUntil = NULL, ClaimToken = NULL WHERE Id = @Id AND PublishedOn IS NULL;

-- name: OutboxMarkPublishedMany :exec
-- OutboxMarkPublished for many ids in one statement (the relay marks every message of a
-- batch it published), the ids in @Rows as NotificationInsertMany; each id a clustered index
-- seek; an id already published is left alone.
UPDATE o SET PublishedOn = v.n, LeaseUntil = NULL, ClaimToken = NULL
FROM dbo.Outbox AS o
JOIN OPENJSON(@Rows) WITH (i bigint '$.Id', n datetime2(3) '$.Now') AS v ON o.Id = v.i
WHERE o.PublishedOn IS NULL;

-- name: OutboxRecordAttempt :exec
UPDATE dbo.Outbox SET Attempts = Attempts + 1 WHERE Id = @Id;

-- name: NotificationListUnsent :many
-- Jobs not yet Sent or Failed, by Id after a cursor (re-dispatch after an in-process bus
-- lost its messages, e.g. a local restart).
SELECT TOP (@Limit) Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM dbo.NotificationJob
WHERE Status IN (N'Queued', N'Sending') AND Id > @AfterId
ORDER BY Id;

-- name: NotificationTemplateLatest :one
SELECT TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn, Kind, Extra, Deleted
FROM dbo.NotificationTemplate
WHERE TemplateKey = @TemplateKey AND BusinessUnitId = @BusinessUnitId
ORDER BY Version DESC
OFFSET 0 ROWS FETCH NEXT 1 ROWS ONLY;

-- name: NotificationTemplateLatestForUpdate :one
-- The read of a template save: UPDLOCK + HOLDLOCK lock the key range of (key, business unit)
-- to the end of the transaction, so two concurrent saves serialise instead of both taking
-- the same next version (a primary-key violation).
SELECT TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn, Kind, Extra, Deleted
FROM dbo.NotificationTemplate WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE TemplateKey = @TemplateKey AND BusinessUnitId = @BusinessUnitId
ORDER BY Version DESC
OFFSET 0 ROWS FETCH NEXT 1 ROWS ONLY;

-- name: NotificationTemplateInsert :exec
INSERT INTO dbo.NotificationTemplate (TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn, Kind, Extra, Deleted)
VALUES (@TemplateKey, @BusinessUnitId, @Version, @Subject, @TextBody, @HtmlBody, @CreatedBy, @Now, @Kind, @Extra, @Deleted);

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
SELECT TOP (@Limit) j.Id, j.DeliveryKey, j.EffectKey, j.SchedulerKey, j.BusinessUnitId, j.Channel, j.Recipient, j.Template, j.PayloadJson, j.LocalDate, j.Status, j.ProcessingLeaseExpiresOn, j.AttemptCount, j.RetryCount, j.NextAttemptOn, j.IsOnSupportHold, j.ProviderReference, j.LastError, j.TemplateVersion, j.Revision, j.ResolvedBy, j.ResolutionReason, j.ResolvedOn, j.Version, j.CreatedOn, j.UpdatedOn, j.SentOn, j.FirstClaimedOn
FROM dbo.NotificationJob j LEFT JOIN dbo.DeliveryProjection p ON p.CommandId = j.DeliveryKey
WHERE j.Id > @AfterId AND j.Revision > 1 AND (p.CommandId IS NULL OR p.Revision < j.Revision)
ORDER BY j.Id;

-- name: NotificationListHeld :many
-- The deliveries of one business unit that wait Failed on support hold (a template missing,
-- retries run out), by Id after a cursor.
SELECT TOP (@Limit) Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy, ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn, FirstClaimedOn
FROM dbo.NotificationJob
WHERE Status = N'Failed' AND IsOnSupportHold = 1 AND BusinessUnitId = @BusinessUnitId AND Id > @AfterId
ORDER BY Id;

-- name: NotificationRelease :one
-- Release a delivery held Failed on support hold (after its fix: a template saved): Queued
-- again and due at @Now, so the dispatcher's sweep claims it (NotificationClaimDue); the hold
-- cleared; AttemptCount and RetryCount kept. No fact: the job is in flight again, and its
-- outcome writes one (Revision + 1). Guarded by the Version the operator saw.
UPDATE dbo.NotificationJob
SET Status = N'Queued', IsOnSupportHold = 0, NextAttemptOn = @Now, ProcessingLeaseExpiresOn = NULL,
    Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.EffectKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.LocalDate, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.RetryCount, inserted.NextAttemptOn, inserted.IsOnSupportHold, inserted.ProviderReference, inserted.LastError, inserted.TemplateVersion, inserted.Revision, inserted.ResolvedBy, inserted.ResolutionReason, inserted.ResolvedOn, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn, inserted.FirstClaimedOn
WHERE DeliveryKey = @DeliveryKey AND BusinessUnitId = @BusinessUnitId AND Version = @Version AND Status = N'Failed' AND IsOnSupportHold = 1;
