-- +goose Up
-- The console's persisted counters (docs/console.md#overview); the same table as
-- sql/sqlite/migrations/0063_metrics_count.sql: per minute, flow, business unit, label and
-- outcome, how many happened, added by the metrics sampler once a minute (never a write on
-- the counted path), purged after the retention (48 hours).
CREATE TABLE dbo.MetricsCount (
    MinuteOn       datetime2(3)  NOT NULL,
    Flow           nvarchar(32)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Label          nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Outcome        nvarchar(32)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    N              bigint        NOT NULL,
    CONSTRAINT PK_MetricsCount PRIMARY KEY CLUSTERED (MinuteOn, Flow, BusinessUnitId, Label, Outcome)
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
