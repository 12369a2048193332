-- +goose Up
-- One generic operator-audit row per operator write that removes or takes the row which
-- would otherwise name who made it (docs/security.md#audit, issue 37 item 7): the roll-out
-- deletes, a unit's quiet-hours delete, report-run ownership acquire. Written in the audited
-- write's transaction (a refused write records nothing). At is UTC; Operator is the caller's
-- principal first (automation.MaxOperatorBytes).
CREATE TABLE OperatorAudit (
    Id             INTEGER PRIMARY KEY AUTOINCREMENT,
    At             INTEGER NOT NULL,
    BusinessUnitId TEXT    NOT NULL,
    Action         TEXT    NOT NULL,
    Target         TEXT    NOT NULL,
    Operator       TEXT    NOT NULL
);
CREATE INDEX IX_OperatorAudit_Unit ON OperatorAudit (BusinessUnitId, Id);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
