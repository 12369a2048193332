-- +goose Up
-- SQL Server's migration 0031 narrows the attribute tables' clustered keys to fit its
-- 900-byte clustered key limit (sql/mssql/migrations/0031_attribute_key_widths.sql). SQLite
-- has no key width limit (a key is a record of any length), so its WITHOUT ROWID primary
-- keys stay; this file keeps the two dialects' migration numbers in step.
SELECT 1;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
