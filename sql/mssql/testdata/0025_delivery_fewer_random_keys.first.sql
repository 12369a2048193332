-- +goose Up
-- The scheduler link of sql/sqlite/migrations/0025_delivery_fewer_random_keys.sql
-- (docs/performance.md, "Two random-key indexes fewer per delivery"): the index on the jobs'
-- 88-byte SchedulerKey becomes one on the integer SchedulerId, the Id of the
-- AutomationScheduler row with that key (scheduler rows are never deleted, their key is
-- unique). A job whose key had no scheduler row when it was written keeps SchedulerId NULL
-- and is found by the filtered IX_NotificationJob_SchedulerKeyUnlinked.
--
-- UQ_NotificationJob_EffectKey stays: the inserts' UPDLOCK + HOLDLOCK existence checks take
-- their key-range locks on it, and SQL Server does not write a changed page twice (log and
-- checkpoint) the way SQLite's WAL does.
ALTER TABLE dbo.NotificationJob ADD SchedulerId bigint NULL;

UPDATE j SET SchedulerId = s.Id
FROM dbo.NotificationJob j JOIN dbo.AutomationScheduler s ON s.SchedulerKey = j.SchedulerKey;

CREATE NONCLUSTERED INDEX IX_NotificationJob_SchedulerId ON dbo.NotificationJob (SchedulerId);
CREATE NONCLUSTERED INDEX IX_NotificationJob_SchedulerKeyUnlinked ON dbo.NotificationJob (SchedulerKey)
    WHERE SchedulerId IS NULL;
DROP INDEX IX_NotificationJob_SchedulerKey ON dbo.NotificationJob;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
