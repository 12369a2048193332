-- API keys and console sessions (SQL Server); the same names and parameters as sql/sqlite/queries/identity.sql.

-- name: ApiKeyInsert :exec
INSERT INTO dbo.ApiKey (Prefix, SecretHash, Name, Roles, BusinessUnits, CreatedOn, CreatedBy)
VALUES (@Prefix, @SecretHash, @Name, @Roles, @BusinessUnits, @Now, @CreatedBy);

-- name: ApiKeyGet :one
SELECT Prefix, SecretHash, Name, Roles, BusinessUnits, CreatedOn, CreatedBy, ExpiresOn, RevokedOn, RevokedBy, ReplacedBy
FROM dbo.ApiKey WHERE Prefix = @Prefix;

-- name: ApiKeyList :many
-- Keyset page in Prefix order, at most @Limit rows.
SELECT TOP (@Limit) Prefix, SecretHash, Name, Roles, BusinessUnits, CreatedOn, CreatedBy, ExpiresOn, RevokedOn, RevokedBy, ReplacedBy
FROM dbo.ApiKey WHERE Prefix > @After ORDER BY Prefix;

-- name: ApiKeyRevoke :exec
-- A revoked key stays revoked: the first revocation's time and operator are kept.
UPDATE dbo.ApiKey SET RevokedOn = @Now, RevokedBy = @RevokedBy WHERE Prefix = @Prefix AND RevokedOn IS NULL;

-- name: ApiKeyExpire :exec
-- A rotation ends the old key at @ExpiresOn (never later than an end already set) and
-- names its successor. A revoked key is left alone.
UPDATE dbo.ApiKey SET ExpiresOn = @ExpiresOn, ReplacedBy = @ReplacedBy
WHERE Prefix = @Prefix AND RevokedOn IS NULL AND (ExpiresOn IS NULL OR ExpiresOn > @ExpiresOn);

-- name: ConsoleSessionInsert :exec
INSERT INTO dbo.ConsoleSession (SessionHash, Principal, CreatedOn, LastSeenOn, ExpiresOn, KeyPrefix, Claims)
VALUES (@SessionHash, @Principal, @Now, @Now, @ExpiresOn, @KeyPrefix, @Claims);

-- name: ConsoleSessionGet :one
SELECT SessionHash, Principal, CreatedOn, LastSeenOn, ExpiresOn, EndedOn, EndReason, KeyPrefix, Claims
FROM dbo.ConsoleSession WHERE SessionHash = @SessionHash;

-- name: ConsoleSessionTouch :exec
-- Moves the idle timeout's start; never backwards, never on an ended session.
UPDATE dbo.ConsoleSession SET LastSeenOn = @Now WHERE SessionHash = @SessionHash AND EndedOn IS NULL AND LastSeenOn < @Now;

-- name: ConsoleSessionEnd :exec
-- The first end is kept.
UPDATE dbo.ConsoleSession SET EndedOn = @Now, EndReason = @EndReason WHERE SessionHash = @SessionHash AND EndedOn IS NULL;

-- name: ConsoleSessionEndPrincipal :exec
-- Ends every live session of a principal (its credential was revoked or its roles changed).
UPDATE dbo.ConsoleSession SET EndedOn = @Now, EndReason = @EndReason WHERE Principal = @Principal AND EndedOn IS NULL;

-- name: ConsoleSessionPurge :exec
-- Bounded: at most @Limit sessions whose absolute lifetime ended before @Before.
DELETE TOP (@Limit) FROM dbo.ConsoleSession WHERE ExpiresOn < @Before;
