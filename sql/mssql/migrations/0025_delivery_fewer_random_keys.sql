-- +goose Up
-- +goose NO TRANSACTION
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
--
-- Online and batched (issue 32, item 8; docs/deploy.md#online-migrations): this file first ran
-- everything in one transaction, the backfill as one UPDATE of every job and both indexes
-- built offline, so NotificationJob was locked for the whole rebuild. It was rewritten in
-- place, not corrected by a later migration: goose keeps only the version numbers it applied
-- (goose_db_version has no checksum of the text), so a database that applied the first text
-- is untouched, and both texts leave the same schema (the same column, the same two indexes
-- with the same keys and filter, IX_NotificationJob_SchedulerKey dropped: the schema lint's
-- TestRewrittenMigrationsLeaveTheSameSchema replays both); a database that
-- has not reached 0025 takes this path. Each step is idempotent (no transaction spans the
-- file: a stopped migration is run again from the top):
--   1. the column, NULL without a default: a metadata-only change in every edition (a brief
--      schema-modification lock, no row rewritten);
--   2. the backfill in Id ranges of 2,000 jobs, each range its own autocommitted UPDATE: at
--      most 2,000 row locks plus their pages per statement, under the 5,000 locks that
--      escalate to a table lock, each held for one range. Jobs the running (older) code
--      writes meanwhile keep SchedulerId NULL and are found by the filtered index below,
--      exactly as a job whose scheduler row was missing;
--   3. the indexes, ONLINE = ON where the edition has online index operations (EngineEdition
--      3 Enterprise/Developer/Evaluation, 5 Azure SQL Database, 8 Managed Instance), built
--      after the backfill so that it writes no index rows;
--   4. the old index dropped (metadata; its pages are freed in the background).

-- +goose StatementBegin
IF COL_LENGTH(N'dbo.NotificationJob', N'SchedulerId') IS NULL
    ALTER TABLE dbo.NotificationJob ADD SchedulerId bigint NULL;
-- +goose StatementEnd

-- +goose StatementBegin
DECLARE @from bigint = 0, @last bigint = (SELECT MAX(Id) FROM dbo.NotificationJob);
WHILE @from < @last
BEGIN
    UPDATE j SET SchedulerId = s.Id
    FROM dbo.NotificationJob AS j JOIN dbo.AutomationScheduler AS s ON s.SchedulerKey = j.SchedulerKey
    WHERE j.Id > @from AND j.Id <= @from + 2000 AND j.SchedulerId IS NULL;
    SET @from += 2000;
END
-- +goose StatementEnd

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.NotificationJob') AND name = N'IX_NotificationJob_SchedulerId')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE NONCLUSTERED INDEX IX_NotificationJob_SchedulerId ON dbo.NotificationJob (SchedulerId)' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.NotificationJob') AND name = N'IX_NotificationJob_SchedulerKeyUnlinked')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE NONCLUSTERED INDEX IX_NotificationJob_SchedulerKeyUnlinked ON dbo.NotificationJob (SchedulerKey) WHERE SchedulerId IS NULL' + @with);
END
-- +goose StatementEnd

DROP INDEX IF EXISTS IX_NotificationJob_SchedulerKey ON dbo.NotificationJob;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
