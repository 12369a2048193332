-- +goose Up
-- Who wrote a report subscription's version in force; the same column as
-- sql/sqlite/migrations/0077_report_subscription_updated_by.sql (docs/security.md#audit): the
-- operator's principal first, at most automation.MaxOperatorBytes (200, as every Operator
-- column); NULL for rows written before and for writes that name nobody. No COLLATE: a name
-- to read, never a key compared or indexed.
ALTER TABLE dbo.ReportSubscription ADD UpdatedBy nvarchar(200) NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
