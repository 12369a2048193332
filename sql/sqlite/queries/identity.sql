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
