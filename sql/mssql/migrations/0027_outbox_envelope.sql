-- +goose Up
-- Outbox envelopes (docs/performance.md, "Facts in envelopes"): a row with Envelope = 1
-- carries several messages to one destination, Body the JSON array of them
-- ({messageId, sessionId, body}); the relay publishes each as its own message, with its own
-- MessageId, and marks the row once. Rows written before are single messages (Envelope 0).
-- A NOT NULL column with a constant default is a metadata-only change on Azure SQL and on
-- SQL Server Enterprise (2012 and later): no row is rewritten. Other editions write the
-- default into every row once, while the migration holds the table.
ALTER TABLE dbo.Outbox ADD Envelope bit NOT NULL CONSTRAINT DF_Outbox_Envelope DEFAULT 0;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
