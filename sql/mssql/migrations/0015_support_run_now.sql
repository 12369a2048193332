-- +goose Up
-- Run now (shared/support, docs/architecture.md#support-actions): the support audit records a
-- fifth action, 'RunNow'; the same change as sql/sqlite/migrations/0015_support_run_now.sql.
ALTER TABLE dbo.SupportAudit DROP CONSTRAINT CK_SupportAudit_Action;
ALTER TABLE dbo.SupportAudit ADD CONSTRAINT CK_SupportAudit_Action
    CHECK (Action IN (N'Release', N'RetryNow', N'SupportRetry', N'Cancel', N'RunNow'));

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
