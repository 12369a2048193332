-- +goose Up
-- Order per session after a failed publish; the same index as
-- sql/sqlite/migrations/0070_outbox_retry_session.sql: only the unpublished rows waiting for a
-- retry, keyed by their session (Destination, SessionId) and Id, which OutboxClaim seeks for
-- each candidate to hold back a session's later rows. Key size: 520 + 256 + 8 bytes, under
-- the 1,700 of a nonclustered index. The filter is literal in the query (PublishedOn IS NULL
-- AND RetryAt IS NOT NULL), so the optimizer can use the filtered index with parameters.
CREATE NONCLUSTERED INDEX IX_Outbox_RetryBySession ON dbo.Outbox (Destination, SessionId, Id) WHERE PublishedOn IS NULL AND RetryAt IS NOT NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
