package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Outcome is what a Handler decided for one claimed row. Exactly one of these holds:
// Deactivate is set (revalidation said no: an outcome, not a failure); or the row completes
// with Deliveries/Outbox written in the same transaction (docs/architecture.md#hand-off). FollowUps (e.g. next year's
// occurrence) are ensured in that same transaction in both cases.
type Outcome struct {
	Deactivate         automation.ReasonCode
	Deliveries         []store.NotificationRequest
	Outbox             []store.OutboxMessage
	FollowUps          []automation.Candidate
	DispatchResultJSON string
	// SourceEventID, when the handler knows it, is the event that last changed the row's
	// source; the poller logs it with the outcome (sourceEventId).
	SourceEventID string
}

// Handler executes claimed rows of one AutomationType at due time: it revalidates (docs/architecture.md#revalidation)
// and says what to do. It must not write the row itself. A returned error is a failed
// attempt (retried with backoff); wrap with automation.Permanent (or PermanentReason, to
// name the FailureReasonCode) to hold at once.
type Handler interface {
	Execute(ctx context.Context, row automation.SchedulerRow, now time.Time) (Outcome, error)
}

// BatchScoper is implemented by handlers that load what revalidation reads once per claimed
// batch instead of once per row (docs/performance.md#revalidation-per-batch). RunOnce calls
// BatchScope once after the claim (step "claimed") and runs every row of the batch with the
// returned context; the scope ends with RunOnce. A handler must still read through to its
// store for anything the scope does not hold, and must not carry the scope across batches.
type BatchScoper interface {
	BatchScope(ctx context.Context, rows []automation.SchedulerRow) context.Context
}

// LongRunning is implemented by handlers whose rows retry daily after the backoff ladder
// instead of going on support hold (docs/architecture.md#support-actions).
type LongRunning interface {
	LongRunning() bool
}

// Registry maps an AutomationType to its Handler (a registry, never one big switch).
type Registry struct {
	m map[automation.AutomationType]Handler
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[automation.AutomationType]Handler{}} }

// Register sets the handler for t; registering a type twice is a programming error (panic).
func (r *Registry) Register(t automation.AutomationType, h Handler) {
	if _, dup := r.m[t]; dup {
		panic(fmt.Sprintf("scheduler: handler for %s registered twice", t))
	}
	r.m[t] = h
}

// Lookup returns the handler for t.
func (r *Registry) Lookup(t automation.AutomationType) (Handler, bool) {
	h, ok := r.m[t]
	return h, ok
}
