package store

import (
	"context"
	"time"
)

// NotificationStatus is the state of a NotificationJob (stage ③, §5.2).
type NotificationStatus string

// Notification statuses.
const (
	NotificationQueued  NotificationStatus = "Queued"
	NotificationSending NotificationStatus = "Sending" // claimed: lease + Version
	NotificationSent    NotificationStatus = "Sent"
	NotificationFailed  NotificationStatus = "Failed"
)

// NotificationJob is one delivery to one recipient on one channel, keyed by DeliveryKey.
type NotificationJob struct {
	ID                       int64
	DeliveryKey              string
	SchedulerKey             string
	BusinessUnitID           string
	Channel                  string
	Recipient                string
	Template                 string
	PayloadJSON              string
	Status                   NotificationStatus
	ProcessingLeaseExpiresOn *time.Time
	AttemptCount             int
	ProviderReference        string
	LastError                string
	Version                  int64
	CreatedOn                time.Time
	UpdatedOn                time.Time
	SentOn                   *time.Time
}

// NotificationClaimParams claims the job with DeliveryKey for sending (the send claim):
// Queued → Sending, or Sending with an expired lease → Sending again, lease = Now+Lease,
// Version+1, AttemptCount+1.
type NotificationClaimParams struct {
	DeliveryKey string
	Now         time.Time
	Lease       time.Duration
}

// NotificationClaimResult: Claimed=false means the job is already Sent/Failed or another
// sender holds a live lease; Job then shows its current state.
type NotificationClaimResult struct {
	Claimed bool
	Job     NotificationJob
}

// NotificationFinishParams finishes a claimed job whose Version is Token: Status Sent (with
// ProviderReference) or Failed (with Error). ErrLeaseLost when the token is stale.
type NotificationFinishParams struct {
	ID                int64
	Token             int64
	Now               time.Time
	Status            NotificationStatus
	ProviderReference string
	Error             string
}

// OutboxMessage is a message written in the same transaction as the state it announces
// and published after commit (§5.1).
type OutboxMessage struct {
	ID          int64
	MessageID   string // deterministic; used for broker duplicate detection
	Destination string // queue or topic name
	SessionID   string
	Body        []byte
	CreatedOn   time.Time
	PublishedOn *time.Time
	Attempts    int
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
	// NotificationGetByKey returns the job with that delivery key, or ErrNotFound.
	NotificationGetByKey(ctx context.Context, deliveryKey string) (NotificationJob, error)
	// NotificationListUnsent returns up to limit jobs still Queued or Sending with Id >
	// afterID, by Id.
	NotificationListUnsent(ctx context.Context, afterID int64, limit int) ([]NotificationJob, error)
	// OutboxListUnpublished returns unpublished outbox messages, oldest first.
	OutboxListUnpublished(ctx context.Context, p OutboxListParams) ([]OutboxMessage, error)
	// OutboxMarkPublished marks messages published; already-published ones are left alone.
	OutboxMarkPublished(ctx context.Context, p OutboxMarkPublishedParams) error
	// OutboxRecordAttempt counts a failed publish attempt of message id.
	OutboxRecordAttempt(ctx context.Context, id int64, now time.Time) error
}
