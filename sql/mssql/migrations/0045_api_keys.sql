-- +goose Up
-- API keys of domain apps and scripts; the same table as sql/sqlite/migrations/0045_api_keys.sql
-- (only a SHA-256 of each key is stored). Conventions: see 0001_initial.sql.
CREATE TABLE dbo.ApiKey (
    Prefix        nvarchar(32)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    SecretHash    nvarchar(64)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    Name          nvarchar(200) NOT NULL,
    Roles         nvarchar(100) NOT NULL,
    BusinessUnits nvarchar(max) NOT NULL,
    CreatedOn     datetime2(3)  NOT NULL,
    CreatedBy     nvarchar(200) NOT NULL,
    ExpiresOn     datetime2(3)  NULL,
    RevokedOn     datetime2(3)  NULL,
    RevokedBy     nvarchar(200) NULL,
    ReplacedBy    nvarchar(32)  NULL,
    CONSTRAINT PK_ApiKey PRIMARY KEY CLUSTERED (Prefix)
);
CREATE NONCLUSTERED INDEX IX_ApiKey_Name ON dbo.ApiKey (Name, CreatedOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
