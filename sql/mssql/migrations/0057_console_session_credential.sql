-- +goose Up
-- What a console session was signed in with; the same columns as
-- sql/sqlite/migrations/0057_console_session_credential.sql. Claims is bounded by the
-- session guard (session.MaxClaimsBytes) before it is stored.
ALTER TABLE dbo.ConsoleSession ADD
    KeyPrefix nvarchar(12)  COLLATE Latin1_General_100_BIN2 NULL,
    Claims    nvarchar(max) NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
