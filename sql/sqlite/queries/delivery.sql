-- NotificationJob and Outbox queries (SQLite). Same names as sql/mssql/queries/delivery.sql.

-- name: NotificationInsert :exec
-- A redelivered request for the same delivery key is a no-op.
INSERT INTO NotificationJob (DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, Status, Version, CreatedOn, UpdatedOn)
VALUES (@DeliveryKey, @SchedulerKey, @BusinessUnitId, @Channel, @Recipient,
    @Template, @PayloadJson, 'Queued', 1, @Now, @Now)
ON CONFLICT (DeliveryKey) DO NOTHING;

-- name: NotificationGetByKey :one
SELECT Id, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, Status, ProcessingLeaseExpiresOn, AttemptCount, ProviderReference, LastError, Version, CreatedOn, UpdatedOn, SentOn
FROM NotificationJob WHERE DeliveryKey = @DeliveryKey;

-- name: NotificationClaim :one
-- The send claim: Queued, or Sending whose lease expired.
UPDATE NotificationJob
SET Status = 'Sending', ProcessingLeaseExpiresOn = @LeaseExpiresOn,
    AttemptCount = AttemptCount + 1, Version = Version + 1, UpdatedOn = @Now
WHERE DeliveryKey = @DeliveryKey
  AND (Status = 'Queued' OR (Status = 'Sending' AND ProcessingLeaseExpiresOn <= @Now))
RETURNING Id, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, Status, ProcessingLeaseExpiresOn, AttemptCount, ProviderReference, LastError, Version, CreatedOn, UpdatedOn, SentOn;

-- name: NotificationFinish :exec
UPDATE NotificationJob
SET Status = @Status, ProviderReference = @ProviderReference, LastError = @LastError,
    ProcessingLeaseExpiresOn = NULL,
    SentOn = CASE WHEN @Status = 'Sent' THEN @Now ELSE SentOn END,
    Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Token AND Status = 'Sending';

-- name: OutboxInsert :exec
INSERT INTO Outbox (MessageId, Destination, SessionId, Body, CreatedOn)
VALUES (@MessageId, @Destination, @SessionId, @Body, @Now)
ON CONFLICT (MessageId) DO NOTHING;

-- name: OutboxListUnpublished :many
SELECT Id, MessageId, Destination, SessionId, Body, CreatedOn, PublishedOn, Attempts
FROM Outbox WHERE PublishedOn IS NULL ORDER BY Id LIMIT @Limit;

-- name: OutboxMarkPublished :exec
UPDATE Outbox SET PublishedOn = @Now WHERE Id = @Id AND PublishedOn IS NULL;

-- name: OutboxRecordAttempt :exec
UPDATE Outbox SET Attempts = Attempts + 1 WHERE Id = @Id;

-- name: NotificationListUnsent :many
-- Jobs not yet Sent or Failed, by Id after a cursor (re-dispatch after an in-process bus
-- lost its messages, e.g. a local restart).
SELECT Id, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient, Template, PayloadJson, Status, ProcessingLeaseExpiresOn, AttemptCount, ProviderReference, LastError, Version, CreatedOn, UpdatedOn, SentOn
FROM NotificationJob
WHERE Status IN ('Queued', 'Sending') AND Id > @AfterId
ORDER BY Id
LIMIT @Limit;
