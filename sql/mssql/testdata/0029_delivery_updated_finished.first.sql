-- +goose Up
-- IX_NotificationJob_Updated holds finished jobs only, as on SQLite
-- (sql/sqlite/migrations/0029_delivery_updated_finished.sql; docs/performance.md, "The
-- delivery period index holds finished jobs"): its readers count Sent, Failed and Unknown
-- jobs and name the filter's predicate, so the filtered index matches them.
DROP INDEX IX_NotificationJob_Updated ON dbo.NotificationJob;
CREATE NONCLUSTERED INDEX IX_NotificationJob_Updated ON dbo.NotificationJob (UpdatedOn) INCLUDE (Status, BusinessUnitId)
    WHERE Status IN (N'Sent', N'Failed', N'Unknown');

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
