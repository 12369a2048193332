package store

import (
	"context"
	"time"
)

// NotificationStatus is the state of a NotificationJob (stage ③, docs/architecture.md#dispatch).
type NotificationStatus string

// Notification statuses.
const (
	NotificationQueued  NotificationStatus = "Queued"
	NotificationSending NotificationStatus = "Sending" // claimed: lease + Version
	NotificationSent    NotificationStatus = "Sent"
	NotificationFailed  NotificationStatus = "Failed"
	// NotificationUnknown: the provider may or may not have acted (a timeout after the
	// request left us). With NextAttemptOn set the channel's lookup is retried then; without
	// it the job waits on the manual-resolution queue (docs/architecture.md#dispatch).
	NotificationUnknown NotificationStatus = "Unknown"
	// NotificationSkipped: not sent, on purpose, for good: the recipient opted out of the
	// delivery's channel and category (docs/channels.md#recipient-preferences). LastError
	// holds the reason. Terminal, like Sent and Failed.
	NotificationSkipped NotificationStatus = "Skipped"
)

// MaxProviderReference bounds NotificationJob.ProviderReference, in characters (UTF-16 code
// units, as SQL Server's nvarchar(400) counts them): the store keeps a longer reference cut
// to this length at a character boundary (it comes from outside: a receiver's header, an
// SMTP server's answer, an operator).
const MaxProviderReference = 400

// NotificationJob is one delivery to one recipient on one channel, keyed by DeliveryKey. It
// is also the command of docs/seeds.md#seed-002 (docs/architecture.md#commands): CommandID is the DeliveryKey, EffectKey is unique
// per business unit, Revision grows by one on every status change and each change writes a
// DeliveryFact to the outbox in the same transaction (docs/architecture.md#facts).
type NotificationJob struct {
	ID             int64
	DeliveryKey    string
	EffectKey      string
	SchedulerKey   string
	BusinessUnitID string
	Channel        string
	Recipient      string
	Template       string
	PayloadJSON    string
	// LocalDate is the business unit's local day the delivery belongs to ("YYYY-MM-DD"; the
	// occurrence's ScheduledLocalDate), the day the reporting counts it under.
	LocalDate                string
	Status                   NotificationStatus
	ProcessingLeaseExpiresOn *time.Time
	AttemptCount             int // send claims taken, less those that ended in a wait (NotificationFinishParams.Wait)
	RetryCount               int // failed attempts that were scheduled for retry (the backoff ladder position)
	NextAttemptOn            *time.Time
	IsOnSupportHold          bool
	ProviderReference        string
	LastError                string
	TemplateVersion          int64 // version of the template last rendered; 0 = none
	Revision                 int64
	ResolvedBy               string // operator who resolved an Unknown outcome
	ResolutionReason         string
	ResolvedOn               *time.Time
	Version                  int64
	CreatedOn                time.Time
	UpdatedOn                time.Time
	SentOn                   *time.Time
	// FirstClaimedOn is the instant (UTC, the claimer's Clock: the claim's Now) of the job's
	// first send claim that may have led to a send, kept by every later claim (FirstClaim
	// is the rule; migration 0071). nil until the job is first claimed. An in-doubt claim on
	// an idempotent channel compares the recipient's opt-out with it
	// (delivery.Dispatcher.gateInDoubt, docs/channels.md#recipient-preferences).
	FirstClaimedOn *time.Time
}

// FirstClaim is the FirstClaimedOn a claim at now writes on a row with attemptCount (before
// the claim), first (FirstClaimedOn as stored) and created (CreatedOn); every dialect's
// claim applies it (the notification claims in their UPDATE, the campaign claim in Go).
//
//   - attemptCount 0: no earlier claim counts (there was none, or each ended in a wait:
//     quiet hours, a busy provider, which give their AttemptCount back and sent nothing),
//     so this claim is the first: now.
//   - otherwise the stored instant; a row claimed before migration 0071 has none, and
//     created stands in for it, the earliest instant a first claim can have had (the
//     in-doubt rule then is the one before 0071: an opt-out before creation).
//
// Set once per run of attempts: later claims, a lease takeover in doubt, a retry or a lookup
// keep it, so it is never later than any claim that may have sent.
func FirstClaim(attemptCount int, first *time.Time, created, now time.Time) time.Time {
	switch {
	case attemptCount == 0:
		return now
	case first != nil:
		return *first
	}
	return created
}

// NotificationClaimParams claims the job with DeliveryKey for sending (the send claim), as
// decided by NotificationClaimable: lease = Now+Lease, Version+1, AttemptCount+1, Status
// Sending (Revision+1 and a fact when the status changes).
type NotificationClaimParams struct {
	DeliveryKey string
	Now         time.Time
	Lease       time.Duration
}

// NotificationClaimManyParams claims the jobs of several delivery keys at once (see
// DeliveryStore.NotificationClaimMany): every claim gets the lease Now+Lease.
type NotificationClaimManyParams struct {
	DeliveryKeys []string // 1..MaxBatch
	Now          time.Time
	Lease        time.Duration
}

// NotificationClaimResult: Claimed=false means the job is already Sent/Failed or another
// sender holds a live lease; Job then shows its current state.
type NotificationClaimResult struct {
	Claimed bool
	// InDoubt: the claim took over a job whose previous attempt may have reached the
	// provider (an expired Sending lease, or an Unknown job due for a lookup). The caller must
	// not send blindly: only an idempotent channel may resend with the same key (docs/architecture.md#dispatch).
	InDoubt bool
	Job     NotificationJob
}

// NotificationClaimable is the send-claim rule every dialect applies (one pure function, like
// automation.DecideEnsure): a Queued job not on hold whose NextAttemptOn is unset or has come;
// a Sending job whose lease expired at or before now (in doubt); an Unknown job not on hold
// whose lookup time (NextAttemptOn) has come (in doubt). Sent, Failed, a live lease and an
// Unknown job awaiting manual resolution are not claimable.
func NotificationClaimable(j NotificationJob, now time.Time) (ok, inDoubt bool) {
	due := func() bool { return j.NextAttemptOn == nil || !j.NextAttemptOn.After(now) }
	switch j.Status {
	case NotificationQueued:
		return !j.IsOnSupportHold && due(), false
	case NotificationSending:
		return j.ProcessingLeaseExpiresOn != nil && !j.ProcessingLeaseExpiresOn.After(now), true
	case NotificationUnknown:
		return !j.IsOnSupportHold && j.NextAttemptOn != nil && !j.NextAttemptOn.After(now), true
	}
	return false, false
}

// NotificationFinishParams records the outcome of the claimed (Sending) job whose Version is
// Token, in one transaction with its fact (Revision+1). ErrLeaseLost when the token is stale.
//
//   - Sent: delivered (ProviderReference); SentOn = Now.
//   - Failed: permanent failure (Error); Hold also sets IsOnSupportHold (retries exhausted).
//   - Queued: a retry at NextAttemptOn (required, UTC); RetryCount+1 (with Wait: neither
//     RetryCount nor AttemptCount moves).
//   - Unknown: the outcome is unknown; NextAttemptOn set = look it up then (RetryCount+1),
//     nil = the manual-resolution queue.
type NotificationFinishParams struct {
	ID                int64
	Token             int64
	Now               time.Time
	Status            NotificationStatus
	ProviderReference string
	Error             string
	NextAttemptOn     *time.Time
	Hold              bool
	TemplateVersion   int64 // 0 keeps the stored value
	// Wait, with Status Queued (or Unknown: a lookup put off) and NextAttemptOn, is a
	// deliberate wait (quiet hours, docs/channels.md#quiet-hours; a channel's provider at
	// its concurrency or rate limit, docs/configuration.md#channel-limits), not an attempt:
	// RetryCount is not advanced, so the wait does not use up the backoff ladder, and the
	// claim's AttemptCount is given back, so it does not count toward an in-doubt claim's
	// attempts either.
	Wait bool
	// Job is optional: the claimed job as the send claim returned it (Job.ID must be ID).
	// NotificationFinishMany and NotificationFinishGroup take the fact's identity columns
	// from it (DeliveryKey, EffectKey, BusinessUnitID, SchedulerKey, Channel, LocalDate; no
	// statement changes them after the insert), so the record returns only the columns it
	// set; without it the store reads them. NotificationFinish ignores it.
	Job *NotificationJob
}

// OutboxMessage is a message written in the same transaction as the state it announces
// and published after commit (docs/architecture.md#hand-off).
type OutboxMessage struct {
	ID          int64
	MessageID   string // deterministic; used for broker duplicate detection
	Destination string // queue or topic name
	SessionID   string
	Body        []byte
	// Envelope marks a row that carries several messages to Destination (NewEnvelope):
	// Body holds the items framed as netstrings (NewEnvelope; rows of the first format hold
	// a JSON array of EnvelopeItem), MessageID names the row only (each item has its own),
	// and SessionID is empty. The relay publishes every item as its own message
	// (Items) and marks the row once. docs/performance.md, "Facts in envelopes".
	Envelope    bool
	CreatedOn   time.Time
	PublishedOn *time.Time
	Attempts    int
	// ClaimToken is set on rows returned by OutboxClaim: the relay's claim of the row.
	ClaimToken string
	// TraceParent is the W3C traceparent of the transaction that wrote the row (the store
	// takes it from the insert's context when empty, telemetry.Inject; migration 0043); the
	// relay publishes the row's messages in that trace. Empty: untraced.
	TraceParent string
}

// OutboxListParams lists up to Limit unpublished messages, oldest first.
type OutboxListParams struct {
	Limit int
}

// OutboxMarkPublishedParams marks messages published after the broker acknowledged them.
type OutboxMarkPublishedParams struct {
	IDs []int64
	Now time.Time
}

// DeliveryStore holds NotificationJob rows and the outbox.
type DeliveryStore interface {
	// NotificationClaim takes the send claim for one delivery key; ErrNotFound if no job.
	NotificationClaim(ctx context.Context, p NotificationClaimParams) (NotificationClaimResult, error)
	// NotificationFinish records the outcome of a claimed send.
	NotificationFinish(ctx context.Context, p NotificationFinishParams) error
	// NotificationClaimMany takes the send claims of p.DeliveryKeys (1..MaxBatch, a key may
	// repeat) in one transaction, each decided as NotificationClaim decides it, with the
	// facts of the claims written by one multi-row statement. The results follow the keys'
	// order; a key without a job gives a result with Claimed false and Job.ID 0 (where
	// NotificationClaim returns ErrNotFound). A repeated key finds its own earlier claim
	// live: not claimed.
	NotificationClaimMany(ctx context.Context, p NotificationClaimManyParams) ([]NotificationClaimResult, error)
	// NotificationFinishMany records the outcomes of up to MaxBatch claimed sends in one
	// transaction, each fenced as NotificationFinish fences it, with their facts written by
	// one multi-row statement. itemErrs[i] is ErrLeaseLost (a stale token: nothing written
	// for that item) or a validation error of ps[i]; err is a store failure, after which
	// nothing of the batch was written.
	NotificationFinishMany(ctx context.Context, ps []NotificationFinishParams) (itemErrs []error, err error)
	// NotificationFinishGroup is NotificationFinishMany for a group commit: the items are
	// what take returns, called exactly once, after the transaction began (on SQLite, once
	// this process's write slot is held; a transaction retried reuses them), so outcomes
	// handed over while the commit waited for the writer are recorded with it instead of in
	// a commit of their own. take may return none (nothing is written; ps nil). It returns
	// the items taken, with itemErrs and err as NotificationFinishMany's; after err, ps
	// still names what was taken and nothing of it was written.
	NotificationFinishGroup(ctx context.Context, take func() []NotificationFinishParams) (ps []NotificationFinishParams, itemErrs []error, err error)
	// NotificationGetByKey returns the job with that delivery key, or ErrNotFound.
	NotificationGetByKey(ctx context.Context, deliveryKey string) (NotificationJob, error)
	// NotificationListUnsent returns up to limit jobs still Queued or Sending with Id >
	// afterID, by Id.
	NotificationListUnsent(ctx context.Context, afterID int64, limit int) ([]NotificationJob, error)
	// NotificationListProjectionBehind returns up to limit jobs with Id > afterID, by Id,
	// whose DeliveryProjection row is missing or older than the job's Revision (only jobs past
	// Revision 1, the first that writes a fact).
	NotificationListProjectionBehind(ctx context.Context, afterID int64, limit int) ([]NotificationJob, error)
	// NotificationClaimDue takes the send claim of up to Limit jobs NotificationClaimable at
	// Now without a dispatch message: Sending jobs whose lease expired, retries and lookups
	// whose NextAttemptOn came (oldest first), then, with QueuedBefore, Queued jobs whose
	// dispatch message was lost. Each result has Claimed true.
	NotificationClaimDue(ctx context.Context, p NotificationClaimDueParams) ([]NotificationClaimResult, error)
	// NotificationNextWakeUp returns the earliest instant (UTC) at which a job becomes
	// claimable by NotificationClaimDue, or nil if none will.
	NotificationNextWakeUp(ctx context.Context) (*time.Time, error)
	// OutboxListUnpublished returns unpublished outbox messages, oldest first.
	OutboxListUnpublished(ctx context.Context, p OutboxListParams) ([]OutboxMessage, error)
	// OutboxMarkPublished marks messages published; already-published ones are left alone.
	OutboxMarkPublished(ctx context.Context, p OutboxMarkPublishedParams) error
	// OutboxRecordAttempt counts a failed publish attempt of message id.
	OutboxRecordAttempt(ctx context.Context, id int64, now time.Time) error
}

// OutboxCommitNotifier is implemented by a store that can tell, right after a transaction
// committed, that it wrote outbox rows (every SQL dialect does). The eager publisher
// (delivery.Pump) subscribes to it so that every writer of outbox rows (ingest, the
// attribute engine, the campaign dispatcher and worker, the delivery hand-off, report runs,
// the due-work poller) has its rows published from the same process right after its commit,
// through this one hook instead of one call per writer (docs/performance.md, "Publish on
// the commit path").
type OutboxCommitNotifier interface {
	// OnOutboxCommit sets fn, called after each commit that inserted outbox rows with how
	// many it inserted (a statement that wrote none, e.g. a MessageId already taken, is not
	// counted). fn runs on the committing goroutine, possibly while the store still holds
	// its writer slot: it must not block and must not call the store. Call it once, before
	// the store is shared; nil turns it off.
	OnOutboxCommit(fn func(rows int))
}

// OutboxBacklogReader reads the unpublished backlog of the whole outbox (every business
// unit's, every destination's): the backpressure gate of ingest samples it
// (delivery.Backlog).
type OutboxBacklogReader interface {
	// OutboxBacklog returns how many outbox rows are unpublished. It reads the index of
	// unpublished rows only (the gate samples it every 500 ms under load), so its cost grows
	// with the backlog, which the gate keeps bounded.
	OutboxBacklog(ctx context.Context) (unpublished int, err error)
}
