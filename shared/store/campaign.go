package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// CampaignStatus is a campaign's operator-set status (docs/campaigns.md#status).
type CampaignStatus string

// Campaign statuses: ACTIVE starts executions and runs commands; PAUSED starts executions
// but its commands wait; STOPPED starts nothing and cancels commands that have not reached a
// provider (an UNKNOWN command still needs resolving).
const (
	CampaignActive  CampaignStatus = "ACTIVE"
	CampaignPaused  CampaignStatus = "PAUSED"
	CampaignStopped CampaignStatus = "STOPPED"
)

// Campaign is one campaign of a business unit. DefinitionJSON is the validated definition
// (shared/campaign.Definition as JSON: trigger event types, the ordered actions); Triggers
// repeats its event types for the lookup by event type. RunID names the current run: a
// deliberate re-run sets a new one, so the same events start new executions.
type Campaign struct {
	BusinessUnitID string
	CampaignID     string
	Name           string
	Status         CampaignStatus
	RunID          string
	Triggers       []string
	DefinitionJSON string
	Version        int64 // 1, 2, … per save: the ETag
	CreatedOn      time.Time
	UpdatedOn      time.Time
}

// CampaignSaveParams creates (ExpectedVersion 0) or replaces (ExpectedVersion = the stored
// Version) a campaign; any other ExpectedVersion is ErrConflict and nothing is written.
// ExpectedVersion nil saves unconditionally (replay, tests).
type CampaignSaveParams struct {
	Campaign        Campaign // Version, CreatedOn, UpdatedOn are assigned
	ExpectedVersion *int64
	Now             time.Time
	// Audit, when set, is written in the save's transaction (a person's status change: the
	// console's pause, resume and stop; an operator's create, save or re-run); StatusBefore, StatusAfter, the versions and
	// CreatedOn (Now) are filled in from the save.
	Audit *CampaignAudit
}

// CampaignAudit is one audited change of a campaign by an operator: a status change, a save or
// a re-run (docs/console.md#campaigns, docs/security.md#audit).
type CampaignAudit struct {
	ID             int64
	BusinessUnitID string
	CampaignID     string
	Action         string // PAUSE, RESUME, STOP (status changes); CREATE, SAVE, RERUN (saves by an operator, campaign.Admin.SaveBy and Rerun)
	StatusBefore   CampaignStatus
	StatusAfter    CampaignStatus
	VersionBefore  int64
	VersionAfter   int64
	Operator       string
	Reason         string
	CreatedOn      time.Time // UTC
}

// CampaignExecutionFindParams lists one campaign's executions newest first, below BeforeID
// (0 = from the newest), with Status and RecipientID when set, at most Limit.
type CampaignExecutionFindParams struct {
	BusinessUnitID, CampaignID string
	Status                     ExecutionStatus // "" = any
	RecipientID                string          // "" = any
	BeforeID                   int64
	Limit                      int
}

// ExecutionStatus is the state of a CampaignExecution (shared/campaign doc.go).
type ExecutionStatus string

// Execution statuses.
const (
	ExecutionRunning   ExecutionStatus = "RUNNING"
	ExecutionCompleted ExecutionStatus = "COMPLETED"
	ExecutionCancelled ExecutionStatus = "CANCELLED"
)

// CampaignExecution is one recipient's run of a campaign's action chain, keyed by
// ExecutionID (derived from business unit, campaign, run, recipient and source event id).
// CurrentIndex is the action index whose command the chain waits for; the chain moves on
// only through CampaignAdvance. DefinitionJSON is the campaign's definition when the
// execution started (the chain's shape never changes under a running execution).
type CampaignExecution struct {
	ID             int64
	ExecutionID    string
	BusinessUnitID string
	CampaignID     string
	RunID          string
	RecipientID    string
	SourceEventID  string
	LocalDate      string // the business unit's local day the execution started (YYYY-MM-DD)
	Status         ExecutionStatus
	CurrentIndex   int
	DefinitionJSON string
	Version        int64
	CreatedOn      time.Time
	UpdatedOn      time.Time
}

// CommandStatus is the state of a CampaignCommand (its actionStatus; shared/campaign doc.go).
type CommandStatus string

// Command statuses. SUCCEEDED, FAILED, CANCELLED and SKIPPED are terminal; UNKNOWN waits for a
// resolution (a resend with the same key, a lookup, or a person).
const (
	CommandQueued    CommandStatus = "QUEUED"
	CommandRunning   CommandStatus = "RUNNING" // claimed: lease + Version
	CommandSucceeded CommandStatus = "SUCCEEDED"
	CommandFailed    CommandStatus = "FAILED"
	CommandUnknown   CommandStatus = "UNKNOWN"
	CommandCancelled CommandStatus = "CANCELLED"
	CommandSkipped   CommandStatus = "SKIPPED" // its condition on the previous result did not hold, or (a NOTIFICATION_* action) the recipient opted out: LastError says which
	// CommandWaitingBudget: a paid action found too little budget or billing balance
	// (docs/budgets.md#in-the-worker); never final: due again at NextAttemptOn (required), when
	// the same command is claimed and its budget checked again. Nothing reached a provider.
	CommandWaitingBudget CommandStatus = "WAITING_BUDGET"
)

// Terminal reports whether s ends the command.
func (s CommandStatus) Terminal() bool {
	switch s {
	case CommandSucceeded, CommandFailed, CommandCancelled, CommandSkipped:
		return true
	}
	return false
}

// CampaignCommand is one action of one execution, keyed by CommandID; EffectKey is the
// provider idempotency key. Both derive from (execution, action index, action identity), so
// every retry keeps them. ParamsJSON is empty until the first claim freezes it. Revision
// grows by one on every status change; each change writes a CampaignActionOutcomeEvent fact.
type CampaignCommand struct {
	ID               int64
	CommandID        string
	EffectKey        string
	ExecutionID      string
	BusinessUnitID   string
	CampaignID       string
	RecipientID      string
	RunID            string // the execution's run (a re-run's commands have another)
	ActionIndex      int
	ActionKey        string
	ActionType       string
	Provider         string
	LocalDate        string
	ParamsJSON       string // frozen on the first claim; "" before
	Status           CommandStatus
	LeaseExpiresOn   *time.Time
	AttemptCount     int // claims taken, less those that ended in a Wait (CampaignFinishParams)
	RetryCount       int // attempts scheduled again (the backoff ladder position)
	NextAttemptOn    *time.Time
	ProviderRef      string
	ResultJSON       string
	LastError        string
	ResolvedBy       string
	ResolutionReason string
	Revision         int64
	Version          int64
	CreatedOn        time.Time
	UpdatedOn        time.Time
	// FirstClaimedOn is the instant (UTC, the claim's Now) of the command's first claim that
	// may have led to a provider call, kept by every later claim (FirstClaim is the rule;
	// migration 0071); nil before the first claim. An in-doubt claim of a gated
	// (NOTIFICATION_*) command compares the recipient's opt-out with it (campaign.Worker.gate).
	FirstClaimedOn *time.Time
}

// CommandClaimable is the claim rule every dialect applies (like NotificationClaimable): a
// QUEUED command whose NextAttemptOn is unset or has come; a WAITING_BUDGET one whose
// NextAttemptOn has come (not in doubt: it never reached a provider); a RUNNING one whose lease expired
// (in doubt: the provider may have been called); an UNKNOWN one whose NextAttemptOn has come
// (in doubt: resend with the same key or look up). Terminal commands, a live lease and an
// UNKNOWN awaiting a person (NextAttemptOn nil) are not claimable.
func CommandClaimable(c CampaignCommand, now time.Time) (ok, inDoubt bool) {
	due := c.NextAttemptOn == nil || !c.NextAttemptOn.After(now)
	switch c.Status {
	case CommandQueued:
		return due, false
	case CommandWaitingBudget:
		return c.NextAttemptOn != nil && !c.NextAttemptOn.After(now), false
	case CommandRunning:
		return c.LeaseExpiresOn != nil && !c.LeaseExpiresOn.After(now), true
	case CommandUnknown:
		return c.NextAttemptOn != nil && !c.NextAttemptOn.After(now), true
	}
	return false, false
}

// CampaignStartParams records a new execution with its first command and Outbox messages in
// one transaction. When ExecutionID already exists nothing is written and Created is false
// (a replayed event).
type CampaignStartParams struct {
	Execution CampaignExecution
	Command   CampaignCommand
	Outbox    []OutboxMessage
	Now       time.Time
}

// CampaignStartResult is the execution as stored, and whether this call created it.
type CampaignStartResult struct {
	Execution CampaignExecution
	Created   bool
}

// CampaignClaimParams claims one command (CommandClaimable decides): RUNNING, lease
// Now+Lease, AttemptCount+1, Version+1 (Revision+1 and a fact when the status changes).
// FreezeParams is stored as ParamsJSON only when none is stored yet (the first claim).
type CampaignClaimParams struct {
	CommandID    string
	Now          time.Time
	Lease        time.Duration
	FreezeParams string
	// InTx, when set, runs inside the claim's transaction once the command is claimed, with
	// the claimed command (its parameters frozen); its error rolls the claim back and is
	// CampaignClaim's. The campaign worker freezes the command's price there, so the claim
	// and the freeze take one write transaction (docs/budgets.md, "Frozen price").
	InTx func(ctx context.Context, tx *sql.Tx, c CampaignCommand) error
}

// CampaignFinishResult is one outcome of CampaignFinishMany: the command as written, or Err
// (ErrLeaseLost) when nothing was written for it.
type CampaignFinishResult struct {
	Command CampaignCommand
	Err     error
}

// CampaignClaimResult: Claimed false means the command is terminal, leased by another worker
// or awaiting a person; Command shows its current state. InDoubt: an earlier attempt may have
// reached the provider. Before is the command's status before this claim.
type CampaignClaimResult struct {
	Claimed bool
	InDoubt bool
	Command CampaignCommand
	Before  CommandStatus
}

// CampaignClaimDueParams claims up to Limit commands CommandClaimable at Now that have a
// NextAttemptOn or an expired lease, and, with QueuedBefore set, QUEUED commands unchanged
// since then (their command message was lost). Oldest first.
type CampaignClaimDueParams struct {
	Now          time.Time
	Lease        time.Duration
	Limit        int
	QueuedBefore time.Time
}

// CampaignFinishParams records the outcome of the claimed command whose Version is Token,
// with its fact and Outbox messages (the result message for the dispatcher), in one
// transaction; ErrLeaseLost when the token is stale (nothing written).
//
//   - SUCCEEDED / FAILED / CANCELLED / SKIPPED: terminal (NextAttemptOn must be nil).
//   - QUEUED: try again at NextAttemptOn (required); CountRetry moves the backoff ladder
//     (false for a paused campaign or a guard's wait).
//   - Wait (with NextAttemptOn, without CountRetry): the claim attempted nothing (quiet
//     hours, the provider's or the channel's limits): its AttemptCount is given back too.
//   - UNKNOWN: NextAttemptOn set = resend or look up then; nil = the manual-resolution queue.
//   - WAITING_BUDGET: check the budget again at NextAttemptOn (required; no retry counted).
//
// InTx, when set, runs inside the same transaction after the command row is written (the
// post-result hook, shared/campaign doc.go); its error rolls everything back.
//
// Trace, when valid, is the trace context the outcome's writes carry instead of ctx's: its
// Outbox rows' TraceParent (those without their own) and the ctx InTx is given (what the hook
// writes to the outbox, the fee facts). CampaignFinishMany runs its items under one ctx, so
// each item keeps its own command's trace this way (the campaign worker's finish group sets
// it from each command's context); zero: ctx's. The outbox carries trace context only with
// telemetry on (docs/observability.md), so with it off Trace changes nothing.
type CampaignFinishParams struct {
	CommandID     string
	Token         int64
	Now           time.Time
	Status        CommandStatus
	ProviderRef   string
	ResultJSON    string
	Error         string
	NextAttemptOn *time.Time
	CountRetry    bool
	// Wait: the claim ends in a wait that is not an attempt (the recipient's quiet hours, a
	// busy provider or channel): AttemptCount is given back. Needs NextAttemptOn, not
	// CountRetry.
	Wait   bool
	Outbox []OutboxMessage
	InTx   func(ctx context.Context, tx *sql.Tx, c CampaignCommand) error
	Trace  trace.SpanContext
}

// CampaignAdvanceParams moves an execution's chain on from the terminal command CommandID
// seen at Revision: in one transaction, only when the command is terminal at exactly that
// Revision and the execution still waits on its ActionIndex; then the execution moves to
// Next's index (Next inserted with Outbox) or, with Next nil, to FinalStatus. Otherwise
// nothing is written and Advanced is false (a duplicate or stale result).
type CampaignAdvanceParams struct {
	CommandID   string
	Revision    int64
	Next        *CampaignCommand
	FinalStatus ExecutionStatus
	Outbox      []OutboxMessage
	Now         time.Time
}

// CampaignResolveParams resolves an UNKNOWN command awaiting a person: SUCCEEDED or FAILED,
// by Operator for Reason, guarded by ExpectedVersion. ErrNotFound when the business unit has
// no such command; ErrConflict when it is not awaiting resolution; ErrLeaseLost when its
// Version moved on. Outbox holds the result message.
type CampaignResolveParams struct {
	CommandID       string
	BusinessUnitID  string
	ExpectedVersion int64
	Status          CommandStatus
	Operator        string
	Reason          string
	ProviderRef     string
	Outbox          []OutboxMessage
	Now             time.Time
}

// CampaignActionOutcomeEvent is one status change of a campaign command (the fact, written
// to the outbox in the changing transaction). EventID = FactEventID(CommandID, Revision).
type CampaignActionOutcomeEvent struct {
	EventID        string `json:"eventId"`
	CommandID      string `json:"commandId"`
	EffectKey      string `json:"effectKey"`
	ExecutionID    string `json:"executionId"`
	BusinessUnitID string `json:"businessUnitId"`
	CampaignID     string `json:"campaignId"`
	// RunID and RecipientID (seed 002's campaign_action_event: campaign, run, recipient): a
	// re-run's facts are told from the first run's, and results shown per recipient.
	RunID       string        `json:"runId"`
	RecipientID string        `json:"recipientId"`
	ActionIndex int           `json:"actionIndex"`
	ActionType  string        `json:"actionType"`
	Provider    string        `json:"provider"`
	LocalDate   string        `json:"localDate"`
	Status      CommandStatus `json:"status"`
	Revision    int64         `json:"revision"`
	OccurredOn  time.Time     `json:"occurredOn"`
	ProviderRef string        `json:"providerRef,omitempty"`
}

// CampaignCountsParams asks for one campaign's projected counts for local days From..To.
type CampaignCountsParams struct {
	BusinessUnitID string
	CampaignID     string
	From, To       string
}

// CampaignDayCounts is one local day of a campaign's projection: commands per status.
type CampaignDayCounts struct {
	LocalDate string         `json:"localDate"`
	ByStatus  map[string]int `json:"byStatus"`
}

// CampaignCounts is the projection's answer; FreshTo is the newest fact instant applied.
type CampaignCounts struct {
	Days    []CampaignDayCounts `json:"days"`
	FreshTo *time.Time          `json:"freshTo"`
}

// CampaignMetrics is a point-in-time gauge read (docs/campaigns.md#metrics).
type CampaignMetrics struct {
	Waiting        int        // QUEUED commands (of the unit asked for, or all)
	Unknown        int        // UNKNOWN commands (idem)
	PastLease      int        // RUNNING commands whose lease expired (idem)
	OutboxUnsent   int        // unpublished outbox rows (every unit's)
	OutboxOldestOn *time.Time // CreatedOn of the oldest unpublished row (every unit's)
}

// CampaignStore holds campaigns, executions, commands and their projection.
type CampaignStore interface {
	CampaignSave(ctx context.Context, p CampaignSaveParams) (Campaign, error)
	// CampaignGet returns the campaign or ErrNotFound.
	CampaignGet(ctx context.Context, businessUnitID, campaignID string) (Campaign, error)
	// CampaignList returns up to limit campaigns of a business unit after the id afterID.
	CampaignList(ctx context.Context, businessUnitID, afterID string, limit int) ([]Campaign, error)
	// CampaignListByTrigger returns the ACTIVE and PAUSED campaigns of a business unit
	// triggered by eventType.
	CampaignListByTrigger(ctx context.Context, businessUnitID, eventType string) ([]Campaign, error)
	// CampaignStart records an execution with its first command, or loads the existing one.
	CampaignStart(ctx context.Context, p CampaignStartParams) (CampaignStartResult, error)
	// CampaignStartMany is CampaignStart for up to MaxBatch starts in one transaction, in
	// order: results[i] is ps[i]'s (a start whose execution exists already, or was started
	// by an earlier item of the same call, writes nothing and reads Created false). An error
	// (an item the store refuses, more than MaxBatch items) writes nothing at all. The
	// campaign dispatcher's batches of trigger events (docs/performance.md, "The welcome
	// chain in batches").
	CampaignStartMany(ctx context.Context, ps []CampaignStartParams) ([]CampaignStartResult, error)
	// CampaignExecutionGet returns the execution or ErrNotFound.
	CampaignExecutionGet(ctx context.Context, executionID string) (CampaignExecution, error)
	// CampaignExecutionList returns up to limit executions of one campaign of a business unit,
	// newest first (by Id descending), those with an Id below beforeID (0: from the newest).
	// It reads the index IX_CampaignExecution_Campaign (migration 0021).
	CampaignExecutionList(ctx context.Context, businessUnitID, campaignID string, beforeID int64, limit int) ([]CampaignExecution, error)
	// CampaignExecutionFind is CampaignExecutionList with the console's filters (status,
	// recipient).
	CampaignExecutionFind(ctx context.Context, p CampaignExecutionFindParams) ([]CampaignExecution, error)
	// CampaignExecutionListByRecipient returns up to limit executions of a recipient in a
	// business unit (every campaign), newest first, with Id below beforeID (0: from the newest).
	CampaignExecutionListByRecipient(ctx context.Context, businessUnitID, recipientID string, beforeID int64, limit int) ([]CampaignExecution, error)
	// CampaignAuditList returns up to limit audited status changes of a campaign, newest first.
	CampaignAuditList(ctx context.Context, businessUnitID, campaignID string, limit int) ([]CampaignAudit, error)
	// CampaignCommandGet returns the command or ErrNotFound.
	CampaignCommandGet(ctx context.Context, commandID string) (CampaignCommand, error)
	// CampaignCommandsOf returns an execution's commands by action index.
	CampaignCommandsOf(ctx context.Context, executionID string) ([]CampaignCommand, error)
	// CampaignClaim claims one command; ErrNotFound when there is none.
	CampaignClaim(ctx context.Context, p CampaignClaimParams) (CampaignClaimResult, error)
	// CampaignClaimMany is CampaignClaim for up to MaxBatch commands (each with its InTx) in
	// one transaction, in order: results[i] is ps[i]'s (a command named twice is claimed by
	// its first item; the second reads it leased, Claimed false). An error (a command the
	// store refuses, an InTx's error, more than MaxBatch items) writes nothing at all. The
	// campaign worker's batches (docs/performance.md, "The welcome chain in
	// batches").
	CampaignClaimMany(ctx context.Context, ps []CampaignClaimParams) ([]CampaignClaimResult, error)
	// CampaignClaimDue claims due commands set-based (retries, lookups, expired leases).
	CampaignClaimDue(ctx context.Context, p CampaignClaimDueParams) ([]CampaignClaimResult, error)
	// CampaignFinish records a claimed command's outcome.
	CampaignFinish(ctx context.Context, p CampaignFinishParams) (CampaignCommand, error)
	// CampaignFinishMany is CampaignFinish for up to MaxBatch outcomes in one transaction, in
	// order: results[i] is ps[i]'s. An outcome whose lease is lost (ErrLeaseLost: the
	// command's version is not the claim's token, or it is not RUNNING; a command finished
	// by an earlier item of the batch reads so) writes nothing and is results[i].Err; the
	// others are written. Any other error (invalid params, an InTx's error, more than
	// MaxBatch items) writes nothing at all. The campaign worker's batches
	// (docs/performance.md, "The finishes of a batch together").
	CampaignFinishMany(ctx context.Context, ps []CampaignFinishParams) ([]CampaignFinishResult, error)
	// CampaignAdvance moves a chain on from a terminal result (Advanced false: ignored).
	CampaignAdvance(ctx context.Context, p CampaignAdvanceParams) (advanced bool, err error)
	// CampaignAdvanceMany is CampaignAdvance for up to MaxBatch results in one transaction,
	// in order (a later one sees what an earlier one moved): advanced[i] is ps[i]'s. Any
	// error leaves nothing of the batch written.
	CampaignAdvanceMany(ctx context.Context, ps []CampaignAdvanceParams) (advanced []bool, err error)
	// CampaignListUnknown lists one business unit's commands awaiting a person (of one
	// campaign; "" = all), by Id after afterID.
	CampaignListUnknown(ctx context.Context, businessUnitID, campaignID string, afterID int64, limit int) ([]CampaignCommand, error)
	// CampaignResolve resolves an UNKNOWN command by hand.
	CampaignResolve(ctx context.Context, p CampaignResolveParams) (CampaignCommand, error)
	// CampaignFactApply applies facts to the projection (highest revision per command wins).
	CampaignFactApply(ctx context.Context, facts []CampaignActionOutcomeEvent, now time.Time) (DeliveryFactApplyResult, error)
	// CampaignCountsByDay reads the projection.
	CampaignCountsByDay(ctx context.Context, p CampaignCountsParams) (CampaignCounts, error)
	// CampaignNextWakeUp returns the earliest instant (UTC) a command becomes due for the
	// sweep (a retry, a lookup, a lease's end), or nil if none will.
	CampaignNextWakeUp(ctx context.Context) (*time.Time, error)
	// CampaignMetricsRead reads the gauges at now: the command gauges of one business unit,
	// or of every unit when businessUnitID is ""; the outbox gauges are always the whole
	// platform's (an outbox row belongs to no unit).
	CampaignMetricsRead(ctx context.Context, businessUnitID string, now time.Time) (CampaignMetrics, error)
}

// OutboxClaimParams claims up to Limit unpublished outbox rows for one relay: rows whose
// RetryAt is unset or has come and that no live lease holds, oldest first, are leased
// together until Now+Lease under a new ClaimToken (one lease over the batch's Id range,
// migration 0028, not a write to every row). Two relays never hold one row at once. A row
// with a SessionID is left out while an earlier unpublished row of its session (same
// Destination and SessionID) waits for its RetryAt (OutboxRetryLater): a failed publish holds
// its session's later rows back, as Service Bus sessions keep order (issue 39 item 4,
// migration 0070). Rows without a SessionID (envelopes included) have no order and are not
// held. A held row inside the claim's Id range is held by its lease like any other until
// the lease is given back.
//
// AfterID, when positive, is a hint that narrows the claim to rows with Id > AfterID: the
// caller knows that the rows up to it are its own, still leased or already published, and
// the claim then seeks past them instead of stepping over each (on the in-process bus every
// message the bus holds keeps its row unpublished and leased; docs/performance.md, "Claims
// past the rows in flight"). Rows at or below AfterID that are free (given back, their
// RetryAt come, another relay's lease ended, or committed after a higher Id on SQL Server)
// are left to a claim without the hint; delivery.Relay makes one at least every
// RescanEvery. 0 claims from the oldest unpublished row on.
//
// SkipDestinations, when not empty, leaves out the rows of those destinations (the in-process
// bus's destinations that hold their share already, issue 39: a slow destination must not
// stop the others). A left-out row inside the claim's Id range is not held by its lease: the
// lease lists the destinations it left out (migration 0069), and the next claim that does not
// leave them out takes the row, with the same MessageId. At most MaxSkipDestinations names,
// each non-empty and without '|'; anything else is refused (nothing claimed).
//
// BeforeID, when positive, narrows the claim to rows with Id < BeforeID (0: no bound): a
// claim from the oldest row that leaves a destination out stops below where that
// destination's left-out rows begin, instead of stepping over each of them (delivery.Relay's
// rescans while a destination is held; docs/performance.md, "The herd's regression").
//
// Destination, when set, narrows the claim to that destination's rows (a walk of its own rows
// only, IX_Outbox_UnpublishedByDestination, however many rows of others lie between them), and
// the claim's lease holds only that destination's rows in its Id range (the lease row lists
// it as "+|name|" in SkipDestinations): a row of another destination inside the range is not
// held by it. delivery.Relay takes a held destination back this way. The same rules for the
// name as SkipDestinations; not with SkipDestinations (refused).
type OutboxClaimParams struct {
	Now              time.Time
	Lease            time.Duration
	Limit            int
	AfterID          int64
	BeforeID         int64
	SkipDestinations []string
	Destination      string
}

// MaxSkipDestinations bounds OutboxClaimParams.SkipDestinations (the names are written in the
// lease row: OutboxLease.SkipDestinations, 2,000 characters on SQL Server).
const MaxSkipDestinations = 16

// SkipList returns p.SkipDestinations framed as the claim and the lease store them
// ("|a|b|"; "" for none, and for a claim of one Destination). Errors: more than
// MaxSkipDestinations names, or one that is empty, holds '|' or is longer than 120
// characters; a Destination that holds '|' or is longer, or one given with SkipDestinations;
// each naming the member.
func (p OutboxClaimParams) SkipList() (string, error) {
	if p.Destination != "" {
		if len(p.SkipDestinations) > 0 {
			return "", fmt.Errorf("OutboxClaimParams.Destination = %q: not with SkipDestinations", p.Destination)
		}
		if strings.Contains(p.Destination, "|") || len(p.Destination) > 120 {
			return "", fmt.Errorf("OutboxClaimParams.Destination = %q: a destination name, 1 to 120 characters, without '|'", p.Destination)
		}
		return "", nil
	}
	if len(p.SkipDestinations) == 0 {
		return "", nil
	}
	if len(p.SkipDestinations) > MaxSkipDestinations {
		return "", fmt.Errorf("OutboxClaimParams.SkipDestinations: %d names, at most %d", len(p.SkipDestinations), MaxSkipDestinations)
	}
	var b strings.Builder
	b.WriteByte('|')
	for i, d := range p.SkipDestinations {
		if d == "" || strings.Contains(d, "|") || len(d) > 120 {
			return "", fmt.Errorf("OutboxClaimParams.SkipDestinations[%d] = %q: a destination name, 1 to 120 characters, without '|'", i, d)
		}
		b.WriteString(d)
		b.WriteByte('|')
	}
	return b.String(), nil
}

// OutboxPurgeParams removes, in bounded batches (Limit each), outbox rows published before
// PublishedBefore and ProcessedEvent dedupe keys processed before ProcessedBefore. The caller
// chooses ProcessedBefore from the longest window a source may replay (docs/campaigns.md#retention).
type OutboxPurgeParams struct {
	PublishedBefore time.Time
	ProcessedBefore time.Time
	Limit           int
}

// OutboxPurgeResult counts what one purge removed.
type OutboxPurgeResult struct {
	Outbox          int
	ProcessedEvents int
}

// OutboxLeaseStore is the outbox relay's hardened side (docs/campaigns.md#outbox).
type OutboxLeaseStore interface {
	// OutboxClaim leases a batch to one relay.
	OutboxClaim(ctx context.Context, p OutboxClaimParams) ([]OutboxMessage, error)
	// OutboxRetryLater holds a claimed row back after a failed publish: Attempts+1, RetryAt
	// set — only while the claim claimToken still holds the row (a relay that took over
	// after the lease: nothing happens).
	OutboxRetryLater(ctx context.Context, id int64, claimToken string, retryAt time.Time) error
	// OutboxRelease gives back the claim's rows from the smallest of ids on (the rows after a
	// failed publish, not attempted), or with no ids the whole claim (its rows are marked
	// published). A claim already given back or taken over: nothing happens. Empty ids (nil
	// or zero-length) always mean the whole claim: a caller with no rows left to give back
	// does not call it, or it ends the lease of rows published and not yet marked.
	OutboxRelease(ctx context.Context, ids []int64, claimToken string) error
	// OutboxPurge removes old published rows and old dedupe keys.
	OutboxPurge(ctx context.Context, p OutboxPurgeParams) (OutboxPurgeResult, error)
}
