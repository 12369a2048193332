package store

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// DeadLetterAction is what an operator did with a dead letter (docs/operations.md#dead-letters).
type DeadLetterAction string

const (
	// DeadLetterRequeue: the original message was put back on its route.
	DeadLetterRequeue DeadLetterAction = "Requeue"
	// DeadLetterDiscard: the dead letter was removed without delivery, with a reason.
	DeadLetterDiscard DeadLetterAction = "Discard"
)

// DeadLetterAudit is one operator action on one dead letter, kept in SQL (DeadLetterAudit,
// migration 0053) so it outlives the process and the bus's own list. ETag names the dead
// letter acted on (deadletter.ETagOf: its list id, route, message id and dead-lettering
// instant) and is the key: one dead letter is acted on at most once, which makes a repeated
// requeue or discard (a double click, a retried form, two operators) a replay of the first
// instead of a second delivery.
type DeadLetterAudit struct {
	ETag           string
	Action         DeadLetterAction
	DeadLetterID   string
	Destination    string
	MessageID      string
	BusinessUnitID string // "" when the message names none
	Operator       string
	Reason         string
	// BatchID names the bulk requeue the action was part of ("" for a single one).
	BatchID string
	ActedOn time.Time // UTC
}

// DeadLetterAuditListParams selects the newest actions the scope sees (an action on a
// dead letter naming no unit only for a scope of every unit), at most Limit
// (1..MaxDeadLetterAuditList).
type DeadLetterAuditListParams struct {
	Scope automation.Scope
	Limit int
}

// MaxDeadLetterAuditList bounds DeadLetterAuditList.
const MaxDeadLetterAuditList = 200

// DeadLetterAuditStore keeps the dead-letter actions.
type DeadLetterAuditStore interface {
	// DeadLetterAuditInsert records a; ErrConflict (nothing written) when an action on the
	// same ETag exists.
	DeadLetterAuditInsert(ctx context.Context, a DeadLetterAudit) error
	// DeadLetterAuditGet returns the action on etag, or ErrNotFound.
	DeadLetterAuditGet(ctx context.Context, etag string) (DeadLetterAudit, error)
	// DeadLetterAuditDelete removes the action on etag (the bus refused the action it
	// recorded); deleting none is not an error.
	DeadLetterAuditDelete(ctx context.Context, etag string) error
	// DeadLetterAuditTakeOver replaces the action recorded on a.ETag with a when the
	// recorded one was taken before staleBefore (UTC): its process died between the audit
	// and the bus call, so the dead letter is still there and nobody else will act on it.
	// It is one conditional write, so of two callers taking the same action over exactly one
	// gets true. false, nothing written: there is no action on a.ETag, or it is newer.
	DeadLetterAuditTakeOver(ctx context.Context, a DeadLetterAudit, staleBefore time.Time) (bool, error)
	// DeadLetterAuditCount counts the actions of one kind taken after since (the requeue
	// pace: the minute before now, now included).
	DeadLetterAuditCount(ctx context.Context, action DeadLetterAction, since time.Time) (int, error)
	// DeadLetterAuditList returns the newest actions the scope sees, newest first.
	DeadLetterAuditList(ctx context.Context, p DeadLetterAuditListParams) ([]DeadLetterAudit, error)
}
