-- +goose Up
-- A scheduler row keeps the W3C traceparent of the transaction that created it (issue 34,
-- docs/observability.md): the due claim that executes it, hours or days later, runs it in a
-- span of that trace, so an event's reminder is one trace from ingest to delivery. NULL:
-- created untraced. Set at insert only; a row rescheduled keeps its first trace.
ALTER TABLE AutomationScheduler ADD COLUMN TraceParent TEXT NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
