-- +goose Up
-- The relay leases a range of outbox ids, not every row (docs/performance.md, "One lease
-- per relay batch"). Before, OutboxClaim wrote LeaseUntil and ClaimToken into each row it
-- took: one more rewrite of every row (body included; an envelope's is tens of kilobytes)
-- between its insert and its mark. Now a claim is one OutboxLease row: the relay's
-- ClaimToken, the first and last Id of its batch, and the lease's end (UTC, ms). A row is
-- claimable while no live lease's range holds it. Expired leases are removed by the next
-- claim. The per-row columns stay: a row a relay of an older build leased is held until
-- that lease ends.
CREATE TABLE OutboxLease (
    ClaimToken TEXT    NOT NULL PRIMARY KEY,
    FirstId    INTEGER NOT NULL,
    LastId     INTEGER NOT NULL,
    LeaseUntil INTEGER NOT NULL
) WITHOUT ROWID;
-- A claim asks, per candidate row, for a lease whose range reaches it: a seek on LastId.
CREATE INDEX IX_OutboxLease_LastId ON OutboxLease (LastId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
