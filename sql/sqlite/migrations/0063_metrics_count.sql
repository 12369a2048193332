-- +goose Up
-- The console's persisted counters (docs/console.md#overview, issue 35: "Event metrics reset
-- when the process restarts"): per minute, flow (e.g. 'ingest'), business unit, label (e.g.
-- the event type) and outcome (e.g. 'accepted'), how many happened. The counting process
-- keeps the counts in memory and the metrics sampler adds them here once a minute (one upsert
-- per key, never a write on the counted path itself); two instances add to the same row.
-- Instants are INTEGER milliseconds since the Unix epoch, UTC, on a whole minute. Rows older
-- than the metrics history's retention (48 hours) are purged by the same sampler. The key
-- leads with MinuteOn: the overview's window and the purge are range seeks on it.
CREATE TABLE MetricsCount (
    MinuteOn       INTEGER NOT NULL,
    Flow           TEXT    NOT NULL,
    BusinessUnitId TEXT    NOT NULL,
    Label          TEXT    NOT NULL,
    Outcome        TEXT    NOT NULL,
    N              INTEGER NOT NULL,
    PRIMARY KEY (MinuteOn, Flow, BusinessUnitId, Label, Outcome)
) WITHOUT ROWID;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
