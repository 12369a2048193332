-- +goose Up
-- The relay's mark rewrites an outbox row in place (docs/performance.md, "The mark
-- rewrites a row in place"). SQLite rewrites a record whose size changes in full: for an
-- envelope (tens of KB in a chain of overflow pages) every page of the chain was freed and
-- written again when PublishedOn went from NULL (no bytes) to an instant (6 bytes). A row
-- now carries MarkReserve, an instant as wide as PublishedOn (its CreatedOn), which the
-- mark sets back to NULL: the record keeps its size, SQLite overwrites it where it lies, and
-- only the pages whose bytes changed are written (the leaf and the last overflow page).
-- Rows written before this migration have none and are marked as before.
ALTER TABLE Outbox ADD COLUMN MarkReserve INTEGER NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
