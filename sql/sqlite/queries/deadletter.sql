-- The operators' actions on dead letters (store.DeadLetterAuditStore, migration 0053).

-- name: DeadLetterAuditInsert :exec
-- A second action on the same dead letter (ETag) writes nothing (the caller answers
-- ErrConflict).
INSERT INTO DeadLetterAudit (ETag, Action, DeadLetterId, Destination, MessageId, BusinessUnitId, Operator, Reason, BatchId, ActedOn)
VALUES (@ETag, @Action, @DeadLetterId, @Destination, @MessageId, @BusinessUnitId, @Operator, @Reason, @BatchId, @ActedOn)
ON CONFLICT (ETag) DO NOTHING;

-- name: DeadLetterAuditGet :one
SELECT ETag, Action, DeadLetterId, Destination, MessageId, BusinessUnitId, Operator, Reason, BatchId, ActedOn
FROM DeadLetterAudit WHERE ETag = @ETag;

-- name: DeadLetterAuditDelete :exec
DELETE FROM DeadLetterAudit WHERE ETag = @ETag;

-- name: DeadLetterAuditTakeOver :exec
-- An action recorded before @StaleBefore whose dead letter is still there died between its
-- audit and its bus call: the caller's action replaces it, in one conditional write (one
-- of two callers wins).
UPDATE DeadLetterAudit
SET Action = @Action, Operator = @Operator, Reason = @Reason, BatchId = @BatchId, ActedOn = @ActedOn
WHERE ETag = @ETag AND ActedOn < @StaleBefore;

-- name: DeadLetterAuditCount :one
-- The pace: the actions of one kind after an instant (IX_DeadLetterAudit_ActedOn).
SELECT COUNT(*) FROM DeadLetterAudit WHERE ActedOn > @Since AND Action = @Action;

-- name: DeadLetterAuditList :many
-- The newest actions the scope sees: a unit-less one only for a scope of every unit.
SELECT ETag, Action, DeadLetterId, Destination, MessageId, BusinessUnitId, Operator, Reason, BatchId, ActedOn
FROM DeadLetterAudit
WHERE @AllUnits = 1 OR BusinessUnitId IN (SELECT value FROM json_each(@Units))
ORDER BY ActedOn DESC, ETag
LIMIT @Limit;
