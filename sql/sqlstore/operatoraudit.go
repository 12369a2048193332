package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/automation-platform/automation/shared/store"
)

// operatorAuditInsert writes a (validated) audit row in tx, the audited write's transaction.
func (s *Store) operatorAuditInsert(ctx context.Context, tx *sql.Tx, a store.OperatorAudit) error {
	if _, err := s.exec(ctx, tx, "OperatorAuditInsert", sql.Named("At", s.tm(a.At.UTC())), sql.Named("BusinessUnitId", a.BusinessUnitID),
		sql.Named("Action", a.Action), sql.Named("Target", a.Target), sql.Named("Operator", a.Operator)); err != nil {
		return fmt.Errorf("%s OperatorAuditInsert: %w", s.d.Name, err)
	}
	return nil
}

// validAudit checks an optional audit row before its write starts (a bad one changes nothing).
func validAudit(a *store.OperatorAudit) error {
	if a == nil {
		return nil
	}
	return a.Validate()
}

// OperatorAuditList implements store.OperatorAuditStore.
func (s *Store) OperatorAuditList(ctx context.Context, bu string, limit int) ([]store.OperatorAudit, error) {
	return queryPage(ctx, s, "OperatorAuditList", limit, func(r rowScanner) (store.OperatorAudit, error) {
		var a store.OperatorAudit
		err := r.Scan(&a.ID, s.t(&a.At), &a.BusinessUnitID, &a.Action, &a.Target, &a.Operator)
		return a, err
	}, named("BusinessUnitId", bu, "Limit", limit)...)
}
