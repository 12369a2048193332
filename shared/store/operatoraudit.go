package store

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// Operator-audit actions (OperatorAudit.Action): the operator writes that remove or take the
// row which would otherwise name who made them (docs/security.md#audit, issue 37 item 7).
const (
	AuditRolloutDelete    = "rollout.delete"    // Target: "<ScopeType>:<ScopeId>" (ReportRolloutDelete)
	AuditQuietHoursDelete = "quiethours.delete" // Target: the unit's id (QuietHoursDelete of a unit's window), or AuditRecipientTarget(id) for a recipient's own window
	AuditOwnershipAcquire = "ownership.acquire" // Target: the SchedulerKey (ReportOwnershipAcquire)
)

// AuditRecipientTarget is the Target of an audit row about recipient id's own row within the
// row's unit: "recipient:<RecipientId>" (a recipient id has no '/' or spaces and is at most
// MaxRecipientIDLength characters, so the target stays within 400).
func AuditRecipientTarget(recipientID string) string { return "recipient:" + recipientID }

// OperatorAudit is one audited operator write, stored in the write's own transaction (a
// refused or failed write records nothing). Operator is the caller's principal first
// ("key:admin / jane", httpapi.Caller.Operator), at most automation.MaxOperatorBytes.
type OperatorAudit struct {
	ID             int64
	At             time.Time // UTC, the write's instant
	BusinessUnitID string    // the unit the write belongs to
	Action         string    // AuditRolloutDelete, AuditQuietHoursDelete, AuditOwnershipAcquire
	Target         string    // what was written (see the Action constants), at most 400 characters
	Operator       string
}

// Validate names the first missing or oversized member of an audit row.
func (a OperatorAudit) Validate() error {
	switch {
	case a.At.IsZero():
		return fieldErr("OperatorAudit.At", "is required")
	case a.BusinessUnitID == "" || len(a.BusinessUnitID) > 100:
		return fieldErr("OperatorAudit.BusinessUnitId", "is required, at most 100 characters")
	case a.Action == "" || len(a.Action) > 40:
		return fieldErr("OperatorAudit.Action", "is required, at most 40 characters")
	case a.Target == "" || len(a.Target) > 400:
		return fieldErr("OperatorAudit.Target", "is required, at most 400 characters")
	case a.Operator == "" || len(a.Operator) > 200:
		return fieldErr("OperatorAudit.Operator", "is required, at most 200 bytes")
	}
	return nil
}

// AuditOperator is operator as an OperatorAudit row keeps it: bounded as every audited
// operator (automation.OperatorName), or "unnamed" when the caller named nobody (the
// bootstrap token without X-Automation-Operator on a route that does not require it, as
// campaign.Unnamed).
func AuditOperator(operator string) string {
	if op := automation.OperatorName(operator); op != "" {
		return op
	}
	return "unnamed"
}

func fieldErr(field, msg string) error {
	return &automation.Error{Code: automation.CodeInvalidInput, Field: field, Message: "store: " + field + " " + msg}
}

// OperatorAuditStore reads the operator-audit rows. They are written only inside the audited
// write (the Audit argument of ReportRolloutDelete, QuietHoursDelete, ReportOwnershipAcquire).
type OperatorAuditStore interface {
	// OperatorAuditList returns up to limit (1..MaxBatch) rows of one business unit, newest first.
	OperatorAuditList(ctx context.Context, businessUnitID string, limit int) ([]OperatorAudit, error)
}
