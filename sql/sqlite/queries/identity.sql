-- API keys and console sessions (SQLite); docs/security.md.

-- name: ApiKeyInsert :exec
INSERT INTO ApiKey (Prefix, SecretHash, Name, Roles, BusinessUnits, CreatedOn, CreatedBy)
VALUES (@Prefix, @SecretHash, @Name, @Roles, @BusinessUnits, @Now, @CreatedBy);

-- name: ApiKeyGet :one
SELECT Prefix, SecretHash, Name, Roles, BusinessUnits, CreatedOn, CreatedBy, ExpiresOn, RevokedOn, RevokedBy, ReplacedBy
FROM ApiKey WHERE Prefix = @Prefix;

-- name: ApiKeyList :many
-- Keyset page in Prefix order, at most @Limit rows.
SELECT Prefix, SecretHash, Name, Roles, BusinessUnits, CreatedOn, CreatedBy, ExpiresOn, RevokedOn, RevokedBy, ReplacedBy
FROM ApiKey WHERE Prefix > @After ORDER BY Prefix LIMIT @Limit;

-- name: ApiKeyRevoke :exec
-- A revoked key stays revoked: the first revocation's time and operator are kept.
UPDATE ApiKey SET RevokedOn = @Now, RevokedBy = @RevokedBy WHERE Prefix = @Prefix AND RevokedOn IS NULL;

-- name: ApiKeyExpire :exec
-- A rotation ends the old key at @ExpiresOn (never later than an end already set) and
-- names its successor. A revoked key is left alone.
UPDATE ApiKey SET ExpiresOn = @ExpiresOn, ReplacedBy = @ReplacedBy
WHERE Prefix = @Prefix AND RevokedOn IS NULL AND (ExpiresOn IS NULL OR ExpiresOn > @ExpiresOn);

-- name: ConsoleSessionInsert :exec
INSERT INTO ConsoleSession (SessionHash, Principal, CreatedOn, LastSeenOn, ExpiresOn, KeyPrefix, Claims)
VALUES (@SessionHash, @Principal, @Now, @Now, @ExpiresOn, @KeyPrefix, @Claims);

-- name: ConsoleSessionGet :one
SELECT SessionHash, Principal, CreatedOn, LastSeenOn, ExpiresOn, EndedOn, EndReason, KeyPrefix, Claims
FROM ConsoleSession WHERE SessionHash = @SessionHash;

-- name: ConsoleSessionTouch :exec
-- Moves the idle timeout's start; never backwards, never on an ended session.
UPDATE ConsoleSession SET LastSeenOn = @Now WHERE SessionHash = @SessionHash AND EndedOn IS NULL AND LastSeenOn < @Now;

-- name: ConsoleSessionEnd :exec
-- The first end is kept.
UPDATE ConsoleSession SET EndedOn = @Now, EndReason = @EndReason WHERE SessionHash = @SessionHash AND EndedOn IS NULL;

-- name: ConsoleSessionEndPrincipal :exec
-- Ends every live session of a principal (its credential was revoked or its roles changed).
UPDATE ConsoleSession SET EndedOn = @Now, EndReason = @EndReason WHERE Principal = @Principal AND EndedOn IS NULL;

-- name: ConsoleSessionPurge :exec
-- Bounded: at most @Limit sessions whose absolute lifetime ended before @Before.
DELETE FROM ConsoleSession WHERE rowid IN (
    SELECT rowid FROM ConsoleSession WHERE ExpiresOn < @Before ORDER BY ExpiresOn LIMIT @Limit);
