-- The operators' actions on dead letters (store.DeadLetterAuditStore, migration 0053).

-- name: DeadLetterAuditInsert :exec
-- A second action on the same dead letter (ETag) writes nothing (the caller answers
-- ErrConflict); the key-range lock keeps two at once from both inserting.
INSERT INTO dbo.DeadLetterAudit (ETag, Action, DeadLetterId, Destination, MessageId, BusinessUnitId, Operator, Reason, BatchId, ActedOn)
SELECT @ETag, @Action, @DeadLetterId, @Destination, @MessageId, @BusinessUnitId, @Operator, @Reason, @BatchId, @ActedOn
WHERE NOT EXISTS (SELECT 1 FROM dbo.DeadLetterAudit WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE ETag = @ETag);

-- name: DeadLetterAuditGet :one
SELECT ETag, Action, DeadLetterId, Destination, MessageId, BusinessUnitId, Operator, Reason, BatchId, ActedOn
FROM dbo.DeadLetterAudit WHERE ETag = @ETag;

-- name: DeadLetterAuditDelete :exec
DELETE FROM dbo.DeadLetterAudit WHERE ETag = @ETag;

-- name: DeadLetterAuditTakeOver :exec
-- An action recorded before @StaleBefore whose dead letter is still there died between its
-- audit and its bus call: the caller's action replaces it, in one conditional write (one
-- of two callers wins).
UPDATE dbo.DeadLetterAudit
SET Action = @Action, Operator = @Operator, Reason = @Reason, BatchId = @BatchId, ActedOn = @ActedOn
WHERE ETag = @ETag AND ActedOn < @StaleBefore;

-- name: DeadLetterAuditCount :one
-- The pace: the actions of one kind after an instant (IX_DeadLetterAudit_ActedOn).
SELECT COUNT(*) FROM dbo.DeadLetterAudit WHERE ActedOn > @Since AND Action = @Action;

-- name: DeadLetterAuditList :many
-- The newest actions the scope sees: a unit-less one only for a scope of every unit.
SELECT TOP (@Limit) ETag, Action, DeadLetterId, Destination, MessageId, BusinessUnitId, Operator, Reason, BatchId, ActedOn
FROM dbo.DeadLetterAudit
WHERE @AllUnits = 1 OR BusinessUnitId IN (SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u)
ORDER BY ActedOn DESC, ETag;
