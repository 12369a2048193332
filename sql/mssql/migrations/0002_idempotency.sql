-- +goose Up
-- Idempotency-Key records of the HTTP APIs; the same table as
-- sql/sqlite/migrations/0002_idempotency.sql. Conventions: see 0001_initial.sql.
-- Clustered key: 300 + 150 characters = 900 bytes, the clustered key limit; the HTTP layer
-- rejects longer scopes and keys.
CREATE TABLE dbo.IdempotencyKey (
    Scope               nvarchar(300)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    IdempotencyKey      nvarchar(150)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    RequestHash         nvarchar(64)   NOT NULL,
    Status              nvarchar(20)   NOT NULL
        CONSTRAINT CK_IdempotencyKey_Status CHECK (Status IN (N'InProgress', N'Completed')),
    ResponseStatus      int            NULL,
    ResponseHeadersJson nvarchar(max)  NULL,
    ResponseBody        nvarchar(max)  NULL,
    LeaseExpiresOn      datetime2(3)   NULL,
    CreatedOn           datetime2(3)   NOT NULL,
    CompletedOn         datetime2(3)   NULL,
    CONSTRAINT PK_IdempotencyKey PRIMARY KEY CLUSTERED (Scope, IdempotencyKey)
);
CREATE NONCLUSTERED INDEX IX_IdempotencyKey_CreatedOn ON dbo.IdempotencyKey (CreatedOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
