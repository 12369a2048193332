-- +goose Up
-- The flush ledger of the persisted counters (issue 38 item 5): one row per flush of the
-- metrics sampler (store.SupportStore.MetricsCountAdd), written in the transaction that adds
-- the flush's counts. A flush is retried with the same FlushId when its caller saw an error,
-- and a commit can succeed though its caller sees an error (an ambiguous commit: the
-- connection drops after COMMIT reached the server); the retry finds its row here and adds
-- nothing, so no count is added twice. MinuteOn is the flush's minute (its counts' earliest
-- MinuteOn, INTEGER milliseconds UTC): the key leads with it so the purge, with the counters'
-- retention (48 hours), is a range seek, and a retry (the same counts) seeks the same key.
CREATE TABLE MetricsCountFlush (
    MinuteOn INTEGER NOT NULL,
    FlushId  TEXT    NOT NULL,
    PRIMARY KEY (MinuteOn, FlushId)
) WITHOUT ROWID;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
