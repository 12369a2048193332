-- +goose Up
-- The console's metrics history (docs/console.md#overview); the same table as
-- sql/sqlite/migrations/0017_console_metrics_history.sql: one row per business unit per
-- sample, plus the platform row N'*', purged after the retention (48 hours).
CREATE TABLE dbo.MetricsSample (
    BusinessUnitId         nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    SampledOn              datetime2(3)  NOT NULL,
    PendingDue             int           NOT NULL,
    OldestDueAgeSeconds    bigint        NOT NULL,
    OnHold                 int           NOT NULL,
    OutboxUnsent           int           NOT NULL,
    OutboxOldestAgeSeconds bigint        NOT NULL,
    CONSTRAINT PK_MetricsSample PRIMARY KEY CLUSTERED (BusinessUnitId, SampledOn)
);

-- The retention purge's range seek.
CREATE NONCLUSTERED INDEX IX_MetricsSample_SampledOn ON dbo.MetricsSample (SampledOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
