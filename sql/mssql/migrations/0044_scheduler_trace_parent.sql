-- +goose Up
-- A scheduler row keeps the W3C traceparent of the transaction that created it, as on
-- SQLite (sql/sqlite/migrations/0044_scheduler_trace_parent.sql; docs/observability.md). A
-- NULL column is metadata-only on Azure SQL; 100 characters as Outbox.TraceParent
-- (migration 0043).
ALTER TABLE dbo.AutomationScheduler ADD TraceParent varchar(100) COLLATE Latin1_General_100_BIN2 NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
