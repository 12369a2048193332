-- +goose Up
-- SchedulerNextWakeUp needs the earliest instant a Pending row not on hold becomes due: its
-- NextRetryOn when that is later than its ScheduledOn, else its ScheduledOn. A filtered index
-- cannot compare two columns, so the instant is a persisted computed column, indexed behind
-- the equality columns of the filter: the answer is one seek (TOP 1 in WakeUpOn order) instead
-- of a walk over every Pending row. The SET options computed-column indexes need are those
-- the filtered indexes of 0001 already need.
ALTER TABLE dbo.AutomationScheduler ADD WakeUpOn AS
    (CASE WHEN NextRetryOn IS NOT NULL AND NextRetryOn > ScheduledOn THEN NextRetryOn ELSE ScheduledOn END) PERSISTED;
CREATE NONCLUSTERED INDEX IX_AutomationScheduler_NextWakeUp ON dbo.AutomationScheduler (Status, IsOnSupportHold, WakeUpOn);

-- +goose Down
DROP INDEX IX_AutomationScheduler_NextWakeUp ON dbo.AutomationScheduler;
ALTER TABLE dbo.AutomationScheduler DROP COLUMN WakeUpOn;
