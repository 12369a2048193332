-- +goose Up
-- Fewer index rows per claim and completion; the same change as
-- sql/sqlite/migrations/0022_hot_table_indexes.sql where SQL Server allows it
-- (docs/performance.md#sql-server).
--
-- "By status and business unit" (SupportSchedulerFindByBusinessUnitStatus) now seeks
-- IX_AutomationScheduler_StatusId (Status, Id) backwards from the cursor and filters the
-- unit after a key lookup per row read: a bounded filter, as on SQLite.
DROP INDEX IX_AutomationScheduler_Status ON dbo.AutomationScheduler;

-- The activity report's delivery counts (ReportActivityDeliveries) range-seek
-- IX_NotificationJob_Updated (UpdatedOn) INCLUDE (Status, BusinessUnitId), filter the unit
-- and status from the included columns, and look up SchedulerKey per job kept.
DROP INDEX IX_NotificationJob_Activity ON dbo.NotificationJob;

-- IX_AutomationScheduler_Activity stays unfiltered here: a filtered index cannot take the
-- disjunction (Status = 'Failed' OR IsOnSupportHold = 1) that SQLite's partial index uses.

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
