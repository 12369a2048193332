-- The operator-audit rows (store.OperatorAuditStore, migration 0078): inserted only inside
-- the audited write's transaction (sql/sqlstore/operatoraudit.go).

-- name: OperatorAuditInsert :exec
INSERT INTO dbo.OperatorAudit (At, BusinessUnitId, Action, Target, Operator)
VALUES (@At, @BusinessUnitId, @Action, @Target, @Operator);

-- name: OperatorAuditList :many
-- The newest first (IX_OperatorAudit_Unit).
SELECT TOP (@Limit) Id, At, BusinessUnitId, Action, Target, Operator
FROM dbo.OperatorAudit WHERE BusinessUnitId = @BusinessUnitId ORDER BY Id DESC;
