-- +goose Up
-- The relay leases a range of outbox ids, not every row (docs/performance.md, "One lease
-- per relay batch"): one OutboxLease row per claim (the relay's ClaimToken, the first and
-- last Id of its batch, the lease's end in UTC). A row is claimable while no live lease's
-- range holds it; claims are serialized by an application lock (OutboxClaimLock), so two
-- relays never take one row. The per-row LeaseUntil / ClaimToken columns stay for rows an
-- older build leased.
CREATE TABLE dbo.OutboxLease (
    ClaimToken nvarchar(64)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_OutboxLease PRIMARY KEY CLUSTERED,
    FirstId    bigint        NOT NULL,
    LastId     bigint        NOT NULL,
    LeaseUntil datetime2(3)  NOT NULL
);
CREATE NONCLUSTERED INDEX IX_OutboxLease_LastId ON dbo.OutboxLease (LastId) INCLUDE (FirstId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
