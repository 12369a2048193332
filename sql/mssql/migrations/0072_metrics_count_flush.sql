-- +goose Up
-- The flush ledger of the persisted counters; the same table as
-- sql/sqlite/migrations/0072_metrics_count_flush.sql: one row per flush of the metrics
-- sampler, written in the transaction that adds its counts, so a flush retried after an
-- ambiguous commit (COMMIT succeeded, the client saw an error) adds nothing the second time.
-- Keyed by the flush's minute then its id: the purge is a range seek on the leading
-- MinuteOn, a retry a seek on both. FlushId is ASCII (store.MaxMetricsCountFlushID), nvarchar
-- as the driver binds a Go string, so the seek compares without a conversion.
CREATE TABLE dbo.MetricsCountFlush (
    MinuteOn datetime2(3) NOT NULL,
    FlushId  nvarchar(64) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CONSTRAINT PK_MetricsCountFlush PRIMARY KEY CLUSTERED (MinuteOn, FlushId)
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
