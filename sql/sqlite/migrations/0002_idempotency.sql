-- +goose Up
-- Idempotency-Key records of the HTTP APIs (shared/httpapi, docs/api-conventions.md#idempotency-key).
-- Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE IdempotencyKey (
    Scope               TEXT    NOT NULL,
    IdempotencyKey      TEXT    NOT NULL,
    RequestHash         TEXT    NOT NULL,
    Status              TEXT    NOT NULL CHECK (Status IN ('InProgress','Completed')),
    ResponseStatus      INTEGER NULL,
    ResponseHeadersJson TEXT    NULL,
    ResponseBody        TEXT    NULL,
    LeaseExpiresOn      INTEGER NULL,
    CreatedOn           INTEGER NOT NULL,
    CompletedOn         INTEGER NULL,
    PRIMARY KEY (Scope, IdempotencyKey)
);
CREATE INDEX IX_IdempotencyKey_CreatedOn ON IdempotencyKey (CreatedOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
