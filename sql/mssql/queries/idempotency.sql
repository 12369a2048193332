-- Idempotency-Key records (SQL Server); the same names and parameters as sql/sqlite/queries/idempotency.sql.

-- name: IdempotencyInsert :exec
-- Inserts an in-progress record unless one exists; RowsAffected says which. UPDLOCK +
-- HOLDLOCK on the existence check serialises two concurrent inserts of the same key.
INSERT INTO dbo.IdempotencyKey (Scope, IdempotencyKey, RequestHash, Status, LeaseExpiresOn, CreatedOn)
SELECT @Scope, @IdempotencyKey, @RequestHash, N'InProgress', @LeaseExpiresOn, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.IdempotencyKey WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
                  WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey);

-- name: IdempotencyTakeOver :exec
UPDATE dbo.IdempotencyKey SET LeaseExpiresOn = @LeaseExpiresOn
WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey AND Status = N'InProgress'
  AND RequestHash = @RequestHash AND LeaseExpiresOn <= @Now;

-- name: IdempotencyGet :one
SELECT Scope, IdempotencyKey, RequestHash, Status, ResponseStatus, ResponseHeadersJson, ResponseBody,
       LeaseExpiresOn, CreatedOn, CompletedOn
FROM dbo.IdempotencyKey WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey;

-- name: IdempotencyComplete :exec
-- Only the attempt holding the current lease (LeaseExpiresOn is its fence) completes.
UPDATE dbo.IdempotencyKey
SET Status = N'Completed', ResponseStatus = @ResponseStatus, ResponseHeadersJson = @ResponseHeadersJson,
    ResponseBody = @ResponseBody, LeaseExpiresOn = NULL, CompletedOn = @Now
WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey AND Status = N'InProgress'
  AND RequestHash = @RequestHash AND LeaseExpiresOn = @LeaseExpiresOn;

-- name: IdempotencyRelease :exec
-- Only the attempt holding the current lease releases; a taken-over record is left alone.
DELETE FROM dbo.IdempotencyKey
WHERE Scope = @Scope AND IdempotencyKey = @IdempotencyKey AND Status = N'InProgress'
  AND RequestHash = @RequestHash AND LeaseExpiresOn = @LeaseExpiresOn;

-- name: IdempotencyPurge :exec
-- Bounded: at most @Limit rows, through the CreatedOn index.
-- An in-progress record under a lease still live at @Before is kept (a retry is running).
DELETE TOP (@Limit) FROM dbo.IdempotencyKey WHERE CreatedOn < @Before
  AND (Status = N'Completed' OR LeaseExpiresOn < @Before);
