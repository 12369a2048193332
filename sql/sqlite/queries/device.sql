-- The push channel's device registry (SQLite; docs/channels.md#device-registry). Columns of
-- every read, in this order: BusinessUnitId, CustomerId, Token, Platform, App, RegisteredOn,
-- UpdatedOn, RetiredOn, RetiredReason, Version.

-- name: PushDeviceGetForUpdate :one
-- The customer's row of this token (writers are serialised by BEGIN IMMEDIATE).
SELECT BusinessUnitId, CustomerId, Token, Platform, App, RegisteredOn, UpdatedOn, RetiredOn, RetiredReason, Version
FROM PushDevice WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND TokenHash = @TokenHash;

-- name: PushDeviceCountActive :one
SELECT COUNT(*) FROM PushDevice WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND RetiredOn IS NULL;

-- name: PushDeviceRetireMoved :exec
-- The token registered for another customer of the unit: that row is retired ("moved").
UPDATE PushDevice SET RetiredOn = @Now, RetiredReason = 'moved', UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND TokenHash = @TokenHash AND CustomerId <> @CustomerId AND RetiredOn IS NULL;

-- name: PushDeviceInsert :exec
INSERT INTO PushDevice (BusinessUnitId, CustomerId, TokenHash, Token, Platform, App, RegisteredOn, UpdatedOn, RetiredOn, RetiredReason, Version)
VALUES (@BusinessUnitId, @CustomerId, @TokenHash, @Token, @Platform, @App, @Now, @Now, NULL, '', 1);

-- name: PushDeviceReactivate :exec
-- An existing row takes the new platform and app and is active again.
UPDATE PushDevice SET Platform = @Platform, App = @App, UpdatedOn = @Now, RetiredOn = NULL, RetiredReason = '', Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND TokenHash = @TokenHash;

-- name: PushDeviceRetire :exec
UPDATE PushDevice SET RetiredOn = @Now, RetiredReason = @Reason, UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND TokenHash = @TokenHash AND RetiredOn IS NULL;

-- name: PushDeviceList :many
-- The customer's active devices, oldest registration first.
SELECT BusinessUnitId, CustomerId, Token, Platform, App, RegisteredOn, UpdatedOn, RetiredOn, RetiredReason, Version
FROM PushDevice WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId AND RetiredOn IS NULL
ORDER BY RegisteredOn, TokenHash LIMIT @Limit;
