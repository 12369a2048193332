-- +goose Up
-- Outbox envelopes (docs/performance.md, "Facts in envelopes"). A transaction that writes
-- several messages to one destination (the delivery facts of a batch send claim or of a
-- group commit of outcomes) writes them as one outbox row, an envelope, instead of one row
-- each: Envelope = 1, Body the JSON array of the messages ({messageId, sessionId, body}),
-- MessageId naming the row only. The relay publishes every message of an envelope as its
-- own message, with its own MessageId, and marks the row once. A row written before this
-- migration is a single message (Envelope 0). Adding a column with a constant default
-- rewrites no row.
ALTER TABLE Outbox ADD COLUMN Envelope INTEGER NOT NULL DEFAULT 0;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
