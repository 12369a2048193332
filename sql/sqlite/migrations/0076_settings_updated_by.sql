-- +goose Up
-- Who last wrote a business unit and a reminder setting (docs/security.md#audit, issue 37
-- item 7): the operator's principal first ("key:admin / jane"), bounded by
-- automation.MaxOperatorBytes; written by the insert or update itself. NULL for rows written
-- before, and for writes that name nobody (replay, seeding).
ALTER TABLE BusinessUnit ADD COLUMN UpdatedBy TEXT;
ALTER TABLE ReminderSetting ADD COLUMN UpdatedBy TEXT;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
