-- +goose Up
-- The destinations a claim left out (store.OutboxClaimParams.SkipDestinations); the same
-- column as sql/sqlite/migrations/0069_outbox_lease_skip.sql: '|'-framed names
-- ("|campaign-commands|"), NULL for none. A row inside a live lease's range whose destination
-- is listed there is not the lease's own and may be claimed. The column joins the index the
-- claim seeks for each candidate, so that check reads no base row. No COLLATE: CHARINDEX
-- compares it with Outbox.Destination, which has the database's default collation. Each
-- statement runs as its own batch, so the index can name the column just added.
ALTER TABLE dbo.OutboxLease ADD SkipDestinations nvarchar(2000) NULL;

DROP INDEX IX_OutboxLease_LastId ON dbo.OutboxLease;
CREATE NONCLUSTERED INDEX IX_OutboxLease_LastId ON dbo.OutboxLease (LastId) INCLUDE (FirstId, SkipDestinations);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
