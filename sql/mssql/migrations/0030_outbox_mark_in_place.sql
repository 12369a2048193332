-- +goose Up
-- SQLite's migration 0030 adds Outbox.MarkReserve so that the relay's mark rewrites a row
-- in place instead of writing its whole overflow chain again (docs/performance.md, "The
-- mark rewrites a row in place"). SQL Server needs no such column: PublishedOn is
-- datetime2(3), a fixed-length column that holds its bytes in the row whether NULL or not,
-- so setting it updates the row in place, and a Body past 8,000 bytes lives off-row as a
-- LOB that an update of other columns does not touch. This file keeps the two dialects'
-- migration numbers in step.
SELECT 1;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
