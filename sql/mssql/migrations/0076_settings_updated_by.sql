-- +goose Up
-- Who last wrote a business unit and a reminder setting; the same columns as
-- sql/sqlite/migrations/0076_settings_updated_by.sql (docs/security.md#audit): the operator's
-- principal first, at most automation.MaxOperatorBytes (200, as every Operator column). NULL
-- for rows written before, and for writes that name nobody. No COLLATE: a name to read, never
-- a key compared or indexed.
ALTER TABLE dbo.BusinessUnit ADD UpdatedBy nvarchar(200) NULL;
ALTER TABLE dbo.ReminderSetting ADD UpdatedBy nvarchar(200) NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
