-- +goose Up
-- SQL Server's migration 0032 makes the compared local dates nchar(10) with a binary
-- collation, so that its day-range reads seek (sql/mssql/migrations/0032_local_date_nchar.sql).
-- SQLite compares TEXT with TEXT parameters without any conversion; nothing changes here, and
-- this file keeps the two dialects' migration numbers in step.
SELECT 1;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
