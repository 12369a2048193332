-- +goose Up
-- Console sessions kept server-side; the same table as
-- sql/sqlite/migrations/0046_console_sessions.sql. Conventions: see 0001_initial.sql.
CREATE TABLE dbo.ConsoleSession (
    SessionHash nvarchar(64)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    Principal   nvarchar(200) NOT NULL,
    CreatedOn   datetime2(3)  NOT NULL,
    LastSeenOn  datetime2(3)  NOT NULL,
    ExpiresOn   datetime2(3)  NOT NULL,
    EndedOn     datetime2(3)  NULL,
    EndReason   nvarchar(20)  NULL,
    CONSTRAINT PK_ConsoleSession PRIMARY KEY CLUSTERED (SessionHash)
);
CREATE NONCLUSTERED INDEX IX_ConsoleSession_ExpiresOn ON dbo.ConsoleSession (ExpiresOn);
CREATE NONCLUSTERED INDEX IX_ConsoleSession_Principal ON dbo.ConsoleSession (Principal) WHERE EndedOn IS NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
