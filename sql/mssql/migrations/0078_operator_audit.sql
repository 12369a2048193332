-- +goose Up
-- One generic operator-audit row per operator write that removes or takes the row which
-- would otherwise name who made it; the same table as
-- sql/sqlite/migrations/0078_operator_audit.sql (docs/security.md#audit). BusinessUnitId is
-- indexed (BIN2); Action and Target are only read, Target as wide as a SchedulerKey (400);
-- Operator at most automation.MaxOperatorBytes (200, as every Operator column).
CREATE TABLE dbo.OperatorAudit (
    Id             bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_OperatorAudit PRIMARY KEY CLUSTERED,
    At             datetime2(3)  NOT NULL,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Action         nvarchar(40)  NOT NULL,
    Target         nvarchar(400) NOT NULL,
    Operator       nvarchar(200) NOT NULL
);
CREATE INDEX IX_OperatorAudit_Unit ON dbo.OperatorAudit (BusinessUnitId, Id);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
