-- +goose Up
-- The outbox row keeps the W3C traceparent of the transaction that wrote it (issue 34,
-- docs/observability.md): the relay that publishes it later, in any process, puts it on the
-- message, so the publish and every consumer join the trace of the write. NULL: written
-- untraced (telemetry off, or a row from before). The value is set at insert and never
-- changed, so the in-place mark (migration 0030) keeps the record's size.
ALTER TABLE Outbox ADD COLUMN TraceParent TEXT NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
