-- +goose Up
-- The operators' actions on dead letters (docs/operations.md#dead-letters): one row per dead
-- letter requeued or discarded, from the console or the support API. ETag names the dead
-- letter (its list id, route, message id and dead-lettering instant, hashed): the key, so a
-- dead letter is acted on at most once and a repeated action replays the first. ActedOn
-- (INTEGER milliseconds since the Unix epoch, UTC) is indexed for the requeue pace (the
-- requeues of the last minute) and the newest-first list.
CREATE TABLE DeadLetterAudit (
    ETag           TEXT    NOT NULL PRIMARY KEY,
    Action         TEXT    NOT NULL CHECK (Action IN ('Requeue', 'Discard')),
    DeadLetterId   TEXT    NOT NULL,
    Destination    TEXT    NOT NULL,
    MessageId      TEXT    NOT NULL,
    BusinessUnitId TEXT    NOT NULL DEFAULT '',
    Operator       TEXT    NOT NULL,
    Reason         TEXT    NOT NULL,
    BatchId        TEXT    NOT NULL DEFAULT '',
    ActedOn        INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IX_DeadLetterAudit_ActedOn ON DeadLetterAudit (ActedOn, Action);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
