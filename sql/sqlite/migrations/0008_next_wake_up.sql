-- +goose Up
-- SchedulerNextWakeUp (every replay input and tick, every serve step) needs the earliest
-- instant a Pending row not on hold becomes due: its NextRetryOn when that is later than its
-- ScheduledOn, else its ScheduledOn. An index on exactly that expression, holding only the
-- rows it is for, makes the answer one index search instead of a walk over every Pending
-- row (which made replay quadratic in the pending work). The query repeats the expression
-- verbatim: SQLite uses an expression index only for the identical expression.
CREATE INDEX IX_AutomationScheduler_NextWakeUp ON AutomationScheduler
    ((CASE WHEN NextRetryOn IS NOT NULL AND NextRetryOn > ScheduledOn THEN NextRetryOn ELSE ScheduledOn END))
    WHERE Status = 'Pending' AND IsOnSupportHold = 0;

-- +goose Down
DROP INDEX IX_AutomationScheduler_NextWakeUp;
