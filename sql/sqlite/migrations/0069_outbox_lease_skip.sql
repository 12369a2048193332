-- +goose Up
-- A claim may leave out the rows of destinations whose consumers already hold their share of
-- the in-process bus (store.OutboxClaimParams.SkipDestinations, issue 39: a slow destination
-- must not stop the others). Those rows lie inside the claim's Id range but are not its own:
-- SkipDestinations lists them ('|'-framed, "|campaign-commands|"; NULL: none), and a later
-- claim takes a row inside a live lease's range when the row's destination is listed there.
-- Nothing else changes: the rows stay unpublished until a claim takes them and their message
-- settles.
ALTER TABLE OutboxLease ADD COLUMN SkipDestinations TEXT;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
