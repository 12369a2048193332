-- +goose Up
-- The first send claim's instant, kept on the delivery and on the campaign command (issue 38:
-- the last opt-out gap on in-doubt resends, docs/channels.md#recipient-preferences). An
-- in-doubt claim on an idempotent channel is Skipped when the recipient's opt-out was
-- recorded at or before it: no earlier attempt can then have passed the gate. Set by the
-- claims (NotificationClaim, NotificationClaimMany; the campaign claim in Go) in the UPDATE
-- they already make, so the claim costs no extra statement or index.
--
-- No backfill: a row claimed before this migration (or by a process that does not set it)
-- has NULL with AttemptCount > 0, and its next claim stores CreatedOn instead, the earliest
-- instant a first claim can have had (the rule then is the old one, opt-out before creation).
-- Unit: epoch milliseconds UTC, as every instant of this dialect.
ALTER TABLE NotificationJob ADD COLUMN FirstClaimedOn INTEGER NULL;
ALTER TABLE CampaignCommand ADD COLUMN FirstClaimedOn INTEGER NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
