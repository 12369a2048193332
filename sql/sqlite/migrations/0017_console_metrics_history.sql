-- +goose Up
-- The console's metrics history (docs/console.md#overview): one row per business unit per
-- sample (the sampler runs once a minute on the OutboxRelay timer), plus the platform row
-- '*' (every unit together, and the outbox). Rows older than the retention (48 hours) are
-- purged by the same timer, so the table stays bounded. Instants are INTEGER milliseconds
-- since the Unix epoch, UTC; ages are whole seconds, 0 when nothing waited.
CREATE TABLE MetricsSample (
    BusinessUnitId         TEXT    NOT NULL,
    SampledOn              INTEGER NOT NULL,
    PendingDue             INTEGER NOT NULL,
    OldestDueAgeSeconds    INTEGER NOT NULL,
    OnHold                 INTEGER NOT NULL,
    OutboxUnsent           INTEGER NOT NULL,
    OutboxOldestAgeSeconds INTEGER NOT NULL,
    PRIMARY KEY (BusinessUnitId, SampledOn)
) WITHOUT ROWID;

-- The retention purge's range seek.
CREATE INDEX IX_MetricsSample_SampledOn ON MetricsSample (SampledOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
