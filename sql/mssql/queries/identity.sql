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
