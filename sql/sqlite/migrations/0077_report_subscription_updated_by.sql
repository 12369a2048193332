-- +goose Up
-- Who wrote a report subscription's version in force (docs/security.md#audit, issue 37 item
-- 7): the operator's principal first ("key:admin / jane"), bounded by
-- automation.MaxOperatorBytes; written by the insert or update itself, the delete (a
-- tombstone update) included. NULL for rows written before, and for writes that name nobody.
ALTER TABLE ReportSubscription ADD COLUMN UpdatedBy TEXT;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
