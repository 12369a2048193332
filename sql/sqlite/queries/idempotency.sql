-- Idempotency-Key records (SQLite).

-- name: IdempotencyInsert :exec
-- Inserts an in-progress record unless one exists; RowsAffected says which.
INSERT INTO IdempotencyKey (Scope, IdempotencyKey, RequestHash, Status, LeaseExpiresOn, CreatedOn)
VALUES (@Scope, @IdempotencyKey, @RequestHash, 'InProgress', @LeaseExpiresOn, @Now)
ON CONFLICT (Scope, IdempotencyKey) DO NOTHING;

-- name: IdempotencyTakeOver :exec
-- A retry of a crashed request (same body, lease expired) takes the record over.
UPDATE IdempotencyKey SET LeaseExpiresOn = @LeaseExpiresOn
WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey AND Status = 'InProgress'
  AND RequestHash = @RequestHash AND LeaseExpiresOn <= @Now;

-- name: IdempotencyGet :one
SELECT Scope, IdempotencyKey, RequestHash, Status, ResponseStatus, ResponseHeadersJson, ResponseBody,
       LeaseExpiresOn, CreatedOn, CompletedOn
FROM IdempotencyKey WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey;

-- name: IdempotencyComplete :exec
-- Only the attempt holding the current lease (LeaseExpiresOn is its fence) completes.
UPDATE IdempotencyKey
SET Status = 'Completed', ResponseStatus = @ResponseStatus, ResponseHeadersJson = @ResponseHeadersJson,
    ResponseBody = @ResponseBody, LeaseExpiresOn = NULL, CompletedOn = @Now
WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey AND Status = 'InProgress'
  AND RequestHash = @RequestHash AND LeaseExpiresOn = @LeaseExpiresOn;

-- name: IdempotencyRelease :exec
-- Only the attempt holding the current lease releases; a taken-over record is left alone.
DELETE FROM IdempotencyKey
WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey AND Status = 'InProgress'
  AND RequestHash = @RequestHash AND LeaseExpiresOn = @LeaseExpiresOn;

-- name: IdempotencyPurge :exec
-- Bounded: at most @Limit rows, oldest first, through the CreatedOn index.
-- An in-progress record under a lease still live at @Before is kept (a retry is running).
DELETE FROM IdempotencyKey WHERE rowid IN (
    SELECT rowid FROM IdempotencyKey WHERE CreatedOn < @Before
      AND (Status = 'Completed' OR LeaseExpiresOn < @Before)
    ORDER BY CreatedOn LIMIT @Limit);
