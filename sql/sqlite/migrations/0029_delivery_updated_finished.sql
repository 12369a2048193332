-- +goose Up
-- IX_NotificationJob_Updated holds finished jobs only (docs/performance.md, "The delivery
-- period index holds finished jobs"). Its two readers, the support throughput
-- (SupportThroughput) and the activity report (ReportActivityDeliveries), count Sent,
-- Failed and Unknown jobs; yet every job had an entry from its insert on, moved at each
-- status change: an insert when queued, a delete and an insert at the send claim and again
-- at the outcome, five entries written per delivery where one is read. Partial, the index
-- gets one entry when a job reaches Sent, Failed or Unknown (and moves only when a finished
-- job changes again, a resolution or a lookup).
DROP INDEX IX_NotificationJob_Updated;
CREATE INDEX IX_NotificationJob_Updated ON NotificationJob (UpdatedOn, Status, BusinessUnitId)
    WHERE Status IN ('Sent', 'Failed', 'Unknown');

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
