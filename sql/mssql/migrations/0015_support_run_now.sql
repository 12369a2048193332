-- +goose Up
-- Run now and the console (docs/console.md). The support audit records a
-- fifth action, 'RunNow'; the same change as sql/sqlite/migrations/0015_support_run_now.sql.
ALTER TABLE dbo.SupportAudit DROP CONSTRAINT CK_SupportAudit_Action;
ALTER TABLE dbo.SupportAudit ADD CONSTRAINT CK_SupportAudit_Action
    CHECK (Action IN (N'Release', N'RetryNow', N'SupportRetry', N'Cancel', N'RunNow'));

-- The console's throughput chart (shared/support Throughput): deliveries by the minute of
-- their last change, a bounded range seek.
CREATE NONCLUSTERED INDEX IX_NotificationJob_Updated ON dbo.NotificationJob (UpdatedOn) INCLUDE (Status, BusinessUnitId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
