-- +goose Up
-- sql/sqlite/migrations/0026_outbox_facts_unindexed.sql takes the delivery facts out of
-- SQLite's MessageId index (docs/performance.md, "Delivery facts outside the MessageId
-- index"). SQL Server keeps UQ_Outbox_MessageId on every row: its OutboxInsert checks the
-- MessageId under UPDLOCK + HOLDLOCK, a seek only while every row is in the index, and it
-- writes a changed page once, not to a log and again at a checkpoint. The migration exists
-- so both dialects expect the same schema version.
SELECT 1;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
