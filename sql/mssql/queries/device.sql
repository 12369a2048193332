-- The push channel's device registry (SQL Server); the same names, parameters and columns as
-- sql/sqlite/queries/device.sql (docs/channels.md#device-registry).

-- name: PushDeviceGetForUpdate :one
-- UPDLOCK + HOLDLOCK on the key: two registrations of one token serialise here.
SELECT BusinessUnitId, CustomerId, Token, Platform, App, RegisteredOn, UpdatedOn, RetiredOn, RetiredReason, Version
FROM dbo.PushDevice WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND TokenHash = @TokenHash;

-- name: PushDeviceCountActive :one
-- UPDLOCK + HOLDLOCK on the customer's key range: two registrations of new tokens for one
-- customer serialise, so the bound holds.
SELECT COUNT(*) FROM dbo.PushDevice WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND RetiredOn IS NULL;

-- name: PushDeviceRetireMoved :exec
UPDATE dbo.PushDevice SET RetiredOn = @Now, RetiredReason = N'moved', UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND TokenHash = @TokenHash AND CustomerId <> @CustomerId AND RetiredOn IS NULL;

-- name: PushDeviceInsert :exec
INSERT INTO dbo.PushDevice (BusinessUnitId, CustomerId, TokenHash, Token, Platform, App, RegisteredOn, UpdatedOn, RetiredOn, RetiredReason, Version)
VALUES (@BusinessUnitId, @CustomerId, @TokenHash, @Token, @Platform, @App, @Now, @Now, NULL, N'', 1);

-- name: PushDeviceReactivate :exec
UPDATE dbo.PushDevice SET Platform = @Platform, App = @App, UpdatedOn = @Now, RetiredOn = NULL, RetiredReason = N'', Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND TokenHash = @TokenHash;

-- name: PushDeviceRetire :exec
UPDATE dbo.PushDevice SET RetiredOn = @Now, RetiredReason = @Reason, UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND TokenHash = @TokenHash AND RetiredOn IS NULL;

-- name: PushDeviceList :many
SELECT TOP (@Limit) BusinessUnitId, CustomerId, Token, Platform, App, RegisteredOn, UpdatedOn, RetiredOn, RetiredReason, Version
FROM dbo.PushDevice
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND RetiredOn IS NULL
ORDER BY RegisteredOn, TokenHash;
