-- +goose Up
-- The first send claim's instant, kept on the delivery and on the campaign command; the same
-- columns as sql/sqlite/migrations/0071_first_claimed_on.sql (issue 38: an in-doubt claim on
-- an idempotent channel is Skipped when the opt-out was recorded at or before the first
-- claim, docs/channels.md#recipient-preferences). Set by the claims in the UPDATE they
-- already make.
--
-- Adding a NULL column without a default is a metadata-only change on SQL Server: no row is
-- rewritten, the table is locked (Sch-M) only for the instant of the change. No backfill: a
-- row claimed before this migration has NULL with AttemptCount > 0 and its next claim stores
-- CreatedOn instead (the earliest instant a first claim can have had). UTC, datetime2(3) as
-- every instant of these tables.
IF COL_LENGTH(N'dbo.NotificationJob', N'FirstClaimedOn') IS NULL
    ALTER TABLE dbo.NotificationJob ADD FirstClaimedOn datetime2(3) NULL;
IF COL_LENGTH(N'dbo.CampaignCommand', N'FirstClaimedOn') IS NULL
    ALTER TABLE dbo.CampaignCommand ADD FirstClaimedOn datetime2(3) NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
