package store

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/google/uuid"
)

// Sentinel errors. Implementations wrap them; test with errors.Is. Each is an
// *automation.Error, so automation.CodeOf gives its code: one error-code vocabulary from the
// store to the HTTP answer (shared/httpapi.StatusOf).
var (
	// ErrNotFound: no row with that identity (automation.CodeNotFound).
	ErrNotFound error = &automation.Error{Code: automation.CodeNotFound, Message: "store: not found"}
	// ErrLeaseLost: the row's Version is no longer the caller's token (it was rescued,
	// re-claimed or changed by someone else); the caller must drop its work
	// (automation.CodeLeaseLost).
	ErrLeaseLost error = &automation.Error{Code: automation.CodeLeaseLost, Message: "store: lease lost (version changed)"}
	// ErrConflict: a uniqueness or state conflict (e.g. a duplicate key with other content)
	// (automation.CodeConflict).
	ErrConflict error = &automation.Error{Code: automation.CodeConflict, Message: "store: conflict"}
	// ErrValueTooLarge: the database refused a value as too large for its schema (SQL
	// Server: an index key over 900 bytes clustered or 1,700 nonclustered, error 1946; a
	// string longer than its column, 2628/8152). The same input can never be stored, so
	// implementations also mark it automation.Permanent: a message is dead-lettered, a
	// scheduler row held, an HTTP request answered 422 (automation.CodeInvalidInput). The
	// callers' own bounds (attribute.ParsePayload, the HTTP validators) are meant to refuse
	// such input first; this is the backstop that keeps it from being retried.
	ErrValueTooLarge error = &automation.Error{Code: automation.CodeInvalidInput, Message: "store: a value is too large for the database schema"}
)

// MaxBatch bounds every batch parameter (candidates per ensure, claim limit, list limits).
// Implementations reject larger requests with an error instead of growing memory.
const MaxBatch = 1000

// rowGuidNamespace is the UUIDv5 namespace for scheduler row Guids.
var rowGuidNamespace = uuid.MustParse("6f1d3c2a-8b4e-5a7f-9c0d-2e4b6a8c0d1e")

// RowGuid returns the deterministic Guid of the scheduler row with this SchedulerKey
// (UUIDv5, lower-case): no random identifiers in the pipeline (docs/architecture.md#scheduler-keys).
func RowGuid(schedulerKey string) string {
	return uuid.NewSHA1(rowGuidNamespace, []byte(schedulerKey)).String()
}

// EnsureResult is the outcome of ensuring one candidate; Row is the row as it is after
// the ensure (for AlreadyCompleted, its coordinates in DispatchResultJSON).
type EnsureResult struct {
	Action automation.EnsureAction
	Row    automation.SchedulerRow
}

// SchedulerEnsureParams asks to ensure Candidates (at most MaxBatch, distinct keys) in one
// transaction at instant Now (UTC).
type SchedulerEnsureParams struct {
	Now        time.Time
	Candidates []automation.Candidate
}

// SchedulerClaimDueParams selects up to Limit Pending rows with ScheduledOn <= Now,
// NextRetryOn null or <= Now and not on hold, oldest ScheduledOn first, and claims them in
// one statement: Status=Processing, ProcessingLeaseExpiresOn=Now+Lease, Version+1.
type SchedulerClaimDueParams struct {
	Now   time.Time
	Lease time.Duration
	Limit int
}

// NotificationRequest is one delivery request written with a completed row (docs/architecture.md#hand-off): a
// NotificationJob plus an outbox message to the notification-dispatch queue.
type NotificationRequest struct {
	DeliveryKey    string // unique; derived from SchedulerKey, channel and recipient
	EffectKey      string // unique per business unit (docs/architecture.md#commands); "" = DeliveryKey
	LocalDate      string // the business unit's local day ("YYYY-MM-DD"); "" = Now's UTC date
	SchedulerKey   string
	BusinessUnitID string
	Channel        string
	Recipient      string
	Template       string
	PayloadJSON    string // render data, small
}

// SchedulerCompleteParams completes the claimed row ID if its Version is still Token and,
// in the same transaction, writes Deliveries (NotificationJob rows, an existing
// DeliveryKey is left alone), the Outbox messages, and ensures
// FollowUps (e.g. next year's anniversary occurrence). ErrLeaseLost when the token is stale;
// then nothing is written.
type SchedulerCompleteParams struct {
	ID                 int64
	Token              int64
	Now                time.Time
	DispatchResultJSON string
	Deliveries         []NotificationRequest
	// Outbox holds the messages announcing Deliveries (published after commit; an existing
	// MessageID is left alone).
	Outbox    []OutboxMessage
	FollowUps []automation.Candidate
}

// SchedulerFailParams records a failed attempt of the row whose Version is Token (a claimed
// row, or a Processing row with an expired lease found by SchedulerListExpiredLeases).
// With Hold=false: Status=Pending, RetryCount+1, NextRetryOn set. With Hold=true:
// Status=Failed, IsOnSupportHold=1, RetryCount+1. ErrLeaseLost when the token is stale.
type SchedulerFailParams struct {
	ID                int64
	Token             int64
	Now               time.Time
	FailureReasonCode automation.ReasonCode
	NextRetryOn       time.Time // UTC; ignored when Hold
	Hold              bool
	TraceBlobName     string // "" keeps the current value
}

// SchedulerDeactivateParams sets the row whose Version is Token to Deactivated with Reason
// (an outcome, not a failure). Used for claimed rows failing revalidation and for
// Pending/Failed rows invalidated by an event. ErrLeaseLost when the Version moved on.
type SchedulerDeactivateParams struct {
	ID     int64
	Token  int64
	Now    time.Time
	Reason automation.ReasonCode
	// FollowUps are ensured in the same transaction (e.g. next year's occurrence of an
	// annual reminder whose this-year occurrence was found too late).
	FollowUps []automation.Candidate
}

// SchedulerListParams bounds a list: rows of one source, or rows with expired leases.
type SchedulerListParams struct {
	SourceEntityType string
	SourceEntityGuid string
	Now              time.Time
	Limit            int
}

// SchedulerStore is the AutomationScheduler table (docs/architecture.md#the-scheduler-table).
type SchedulerStore interface {
	// SchedulerEnsure applies automation.DecideEnsure to each candidate in one transaction.
	SchedulerEnsure(ctx context.Context, p SchedulerEnsureParams) ([]EnsureResult, error)
	// SchedulerGetByKey returns the row with that key, or ErrNotFound.
	SchedulerGetByKey(ctx context.Context, key string) (automation.SchedulerRow, error)
	// SchedulerListBySource returns up to Limit rows of one source entity, by Id.
	SchedulerListBySource(ctx context.Context, p SchedulerListParams) ([]automation.SchedulerRow, error)
	// SchedulerClaimDue claims due rows set-based; the returned rows carry the new Version
	// (the token) and lease.
	SchedulerClaimDue(ctx context.Context, p SchedulerClaimDueParams) ([]automation.SchedulerRow, error)
	// SchedulerComplete completes a claimed row with its delivery requests atomically.
	SchedulerComplete(ctx context.Context, p SchedulerCompleteParams) error
	// SchedulerCompleteBatch completes up to MaxBatch claimed rows in one transaction (for
	// throughput). Each item is guarded by its own token: itemErrs[i] is ErrLeaseLost for an
	// item whose token is stale (nothing of that item is written) and nil otherwise. An
	// item repeated in the batch (same ID and Token) completes once, as its first copy; the
	// later copies get ErrLeaseLost. A non-nil err means nothing at all was written.
	SchedulerCompleteBatch(ctx context.Context, items []SchedulerCompleteParams) (itemErrs []error, err error)
	// SchedulerFail records a failed attempt (retry with backoff, or hold).
	SchedulerFail(ctx context.Context, p SchedulerFailParams) error
	// SchedulerDeactivate deactivates a row guarded by its Version.
	SchedulerDeactivate(ctx context.Context, p SchedulerDeactivateParams) error
	// SchedulerListExpiredLeases returns up to Limit Processing rows whose lease expired
	// at or before Now, oldest lease first.
	SchedulerListExpiredLeases(ctx context.Context, p SchedulerListParams) ([]automation.SchedulerRow, error)
	// SchedulerNextWakeUp returns the earliest instant (UTC) at which a row becomes due
	// (Pending, not on hold: max(ScheduledOn, NextRetryOn)) or a lease expires; nil if none.
	SchedulerNextWakeUp(ctx context.Context) (*time.Time, error)
	// SchedulerCountByStatus counts rows per status (every status present, zero included).
	SchedulerCountByStatus(ctx context.Context) (map[automation.Status]int, error)
}
