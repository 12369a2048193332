-- +goose Up
-- The console's overview counts campaign commands that reached SUCCEEDED, FAILED or UNKNOWN
-- per minute of their last change (SupportCommandThroughput, docs/console.md#overview), from
-- the table itself: the counts survive restarts and agree across instances. A range seek on
-- UpdatedOn, covering Status and BusinessUnitId, bounded by the window (at most 24 hours).
CREATE INDEX IX_CampaignCommand_Updated ON CampaignCommand (UpdatedOn, Status, BusinessUnitId);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
