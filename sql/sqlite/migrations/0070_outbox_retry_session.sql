-- +goose Up
-- Order per session after a failed publish (issue 39 item 4): a row waiting for its RetryAt
-- holds back the later unpublished rows of its session (same Destination and SessionId), and
-- the claim (OutboxClaim) checks each candidate against this index: only the rows waiting
-- for a retry are in it (a handful), so the check is one seek of a small index.
CREATE INDEX IX_Outbox_RetryBySession ON Outbox (Destination, SessionId, Id) WHERE PublishedOn IS NULL AND RetryAt IS NOT NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
