-- NotificationJob and Outbox queries (SQL Server). Same names, parameters and result columns
-- as sql/sqlite/queries/delivery.sql.

-- name: NotificationInsert :exec
-- A redelivered request for the same delivery key is a no-op (SQLite: ON CONFLICT DO
-- NOTHING). One statement, so it is atomic even outside a transaction: UPDLOCK + HOLDLOCK
-- hold a key-range lock on the unique DeliveryKey index from the existence check to the
-- insert, so two concurrent inserts of one key serialise and the second inserts nothing
-- instead of failing with a duplicate-key error (2627).
INSERT INTO dbo.NotificationJob (DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, Status, Version, CreatedOn, UpdatedOn)
SELECT @DeliveryKey, @SchedulerKey, @BusinessUnitId, @Channel, @Recipient,
    @Template, @PayloadJson, N'Queued', 1, @Now, @Now
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.NotificationJob WITH (UPDLOCK, HOLDLOCK) WHERE DeliveryKey = @DeliveryKey);

-- name: NotificationGetByKey :one
SELECT Id, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, Status, ProcessingLeaseExpiresOn, AttemptCount, ProviderReference, LastError, Version, CreatedOn, UpdatedOn, SentOn
FROM dbo.NotificationJob WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationClaim :one
-- The send claim: Queued, or Sending whose lease expired. A single-row UPDATE: the target
-- row is read with an update lock (also under READ_COMMITTED_SNAPSHOT), so of two
-- concurrent claimers the second re-evaluates the predicate on the committed row and
-- claims nothing.
UPDATE dbo.NotificationJob
SET Status = N'Sending', ProcessingLeaseExpiresOn = @LeaseExpiresOn,
    AttemptCount = AttemptCount + 1, Version = Version + 1, UpdatedOn = @Now
OUTPUT inserted.Id, inserted.DeliveryKey, inserted.SchedulerKey, inserted.BusinessUnitId, inserted.Channel, inserted.Recipient, inserted.Template, inserted.PayloadJson, inserted.Status, inserted.ProcessingLeaseExpiresOn, inserted.AttemptCount, inserted.ProviderReference, inserted.LastError, inserted.Version, inserted.CreatedOn, inserted.UpdatedOn, inserted.SentOn
WHERE DeliveryKey = @DeliveryKey
  AND (Status = N'Queued' OR (Status = N'Sending' AND ProcessingLeaseExpiresOn <= @Now));

-- name: NotificationFinish :exec
UPDATE dbo.NotificationJob
SET Status = @Status, ProviderReference = @ProviderReference, LastError = @LastError,
    ProcessingLeaseExpiresOn = NULL,
    SentOn = CASE WHEN @Status = N'Sent' THEN @Now ELSE SentOn END,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status = N'Sending';

-- name: OutboxInsert :exec
-- An existing MessageId is left alone; race-safe as NotificationInsert.
INSERT INTO dbo.Outbox (MessageId, Destination, SessionId, Body, CreatedOn)
SELECT @MessageId, @Destination, @SessionId, @Body, @Now
WHERE NOT EXISTS (
    SELECT 1 FROM dbo.Outbox WITH (UPDLOCK, HOLDLOCK) WHERE MessageId = @MessageId);

-- name: OutboxListUnpublished :many
SELECT TOP (@Limit) Id, MessageId, Destination, SessionId, Body, CreatedOn, PublishedOn, Attempts
FROM dbo.Outbox WHERE PublishedOn IS NULL ORDER BY Id;

-- name: OutboxMarkPublished :exec
UPDATE dbo.Outbox SET PublishedOn = @Now WHERE Id = @Id AND PublishedOn IS NULL;

-- name: OutboxRecordAttempt :exec
UPDATE dbo.Outbox SET Attempts = Attempts + 1 WHERE Id = @Id;

-- name: NotificationListUnsent :many
-- Jobs not yet Sent or Failed, by Id after a cursor (re-dispatch after an in-process bus
-- lost its messages, e.g. a local restart).
SELECT TOP (@Limit) Id, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, Status, ProcessingLeaseExpiresOn, AttemptCount, ProviderReference, LastError, Version, CreatedOn, UpdatedOn, SentOn
FROM dbo.NotificationJob
WHERE Status IN (N'Queued', N'Sending') AND Id > @AfterId
ORDER BY Id;
