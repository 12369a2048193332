-- +goose Up
-- The outbox row keeps the W3C traceparent of the transaction that wrote it, as on SQLite
-- (sql/sqlite/migrations/0043_outbox_trace_parent.sql; docs/observability.md). A traceparent
-- is 55 ASCII characters (version 00: 2 + 1 + 32 + 1 + 16 + 1 + 2); a later version may
-- append fields, so the column allows 100. A NULL column is metadata-only on Azure SQL.
ALTER TABLE dbo.Outbox ADD TraceParent varchar(100) COLLATE Latin1_General_100_BIN2 NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
