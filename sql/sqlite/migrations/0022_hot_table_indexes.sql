-- +goose Up
-- Fewer index entries per claim and completion (docs/performance.md#indexes-on-the-hot-table). A claim
-- sets Status and UpdatedOn, and so does a completion: every index on either column is
-- rewritten twice per row.
--
-- IX_AutomationScheduler_Status (Status, BusinessUnitId) served only "by status and business
-- unit"; that query now walks IX_AutomationScheduler_StatusId (Status, Id) newest first and
-- filters the unit, a bounded filter: it reads the status's rows of other units between two
-- results of its page.
DROP INDEX IX_AutomationScheduler_Status;

-- The activity report's run counts (ReportActivityRuns) read only rows that are Failed or
-- on support hold; the index now holds only those rows, so the Pending -> Processing ->
-- Completed path of the burn-down never enters it. The query's WHERE names the same
-- disjunction, which is what lets SQLite use a partial index.
DROP INDEX IX_AutomationScheduler_Activity;
CREATE INDEX IX_AutomationScheduler_Activity ON AutomationScheduler (BusinessUnitId, UpdatedOn)
    WHERE Status = 'Failed' OR IsOnSupportHold = 1;

-- IX_NotificationJob_Activity (BusinessUnitId, UpdatedOn) duplicated the period seek of
-- IX_NotificationJob_Updated (UpdatedOn, Status, BusinessUnitId): the report's delivery
-- counts now range-seek that index and filter the unit and status from its own columns.
DROP INDEX IX_NotificationJob_Activity;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
