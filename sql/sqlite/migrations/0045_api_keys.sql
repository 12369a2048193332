-- +goose Up
-- API keys of domain apps and scripts (shared/apikey, docs/security.md#api-keys). Only a
-- SHA-256 of the key is stored, with its public prefix for lookup: the key itself is shown
-- once, when created. Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE ApiKey (
    Prefix        TEXT    NOT NULL PRIMARY KEY,  -- public id, the key's "ak_<prefix>_" part
    SecretHash    TEXT    NOT NULL,              -- hex SHA-256 of the whole key
    Name          TEXT    NOT NULL,              -- who holds it ("pos-sydney"); not unique: a rotation keeps it
    Roles         TEXT    NOT NULL,              -- comma-separated roles (ingest, read, operate, admin)
    BusinessUnits TEXT    NOT NULL,              -- the scope: "*" or comma-separated ids
    CreatedOn     INTEGER NOT NULL,
    CreatedBy     TEXT    NOT NULL,
    ExpiresOn     INTEGER NULL,                  -- set by a rotation: the end of the overlap
    RevokedOn     INTEGER NULL,
    RevokedBy     TEXT    NULL,
    ReplacedBy    TEXT    NULL                   -- the prefix of the key a rotation made
);
CREATE INDEX IX_ApiKey_Name ON ApiKey (Name, CreatedOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
