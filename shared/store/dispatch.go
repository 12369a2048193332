package store

import (
	"context"
	"strconv"
	"time"
)

// NotificationClaimDueParams bounds one dispatch sweep (see DeliveryStore.NotificationClaimDue).
type NotificationClaimDueParams struct {
	Now   time.Time
	Lease time.Duration
	Limit int // 1..MaxBatch
	// QueuedBefore, when set, also makes Queued jobs without NextAttemptOn (not on hold) due
	// when they have not changed since QueuedBefore (UTC): their dispatch message should have
	// started them long ago and was lost (dead-lettered). Zero: only retries, lookups and
	// expired claims.
	QueuedBefore time.Time
}

// DeliveryFact is one status change of a delivery command (docs/seeds.md#seed-002,
// docs/architecture.md#facts), written to the outbox (Destination topology.DeliveryFactsTopic, MessageId = EventID, body =
// this struct as JSON) in the transaction that changes the status. EventID is
// "{commandId}:r{revision}": a relay that publishes the same change again keeps it, the next
// change has a higher Revision. No recipient address travels in a fact (personal data); the
// command id joins back to the NotificationJob.
type DeliveryFact struct {
	EventID           string             `json:"eventId"`
	CommandID         string             `json:"commandId"` // the DeliveryKey
	EffectKey         string             `json:"effectKey"`
	BusinessUnitID    string             `json:"businessUnitId"`
	SchedulerKey      string             `json:"schedulerKey"`
	Channel           string             `json:"channel"`
	LocalDate         string             `json:"localDate"` // YYYY-MM-DD, the business unit's day
	Status            NotificationStatus `json:"status"`
	Revision          int64              `json:"revision"`
	OccurredOn        time.Time          `json:"occurredOn"` // UTC
	ProviderReference string             `json:"providerReference,omitempty"`
	ResolvedBy        string             `json:"resolvedBy,omitempty"`
}

// FactEventID returns the event id of a command's change to revision.
func FactEventID(commandID string, revision int64) string {
	return commandID + ":r" + strconv.FormatInt(revision, 10)
}

// NotificationListUnknownParams lists the manual-resolution queue of one business unit:
// Unknown jobs without a pending lookup, by Id after AfterID (a cursor).
type NotificationListUnknownParams struct {
	BusinessUnitID string
	AfterID        int64
	Limit          int // 1..MaxBatch
}

// NotificationResolveParams resolves an Unknown job of BusinessUnitID by hand: Status Sent or
// Failed, by Operator for Reason, guarded by the Version the operator saw (ExpectedVersion).
// ErrNotFound when no such job exists in that business unit; ErrConflict when it is not
// Unknown any more; ErrLeaseLost when it is still Unknown but its Version moved on.
type NotificationResolveParams struct {
	DeliveryKey       string
	BusinessUnitID    string
	ExpectedVersion   int64
	Status            NotificationStatus
	Operator          string
	Reason            string
	ProviderReference string // optional, e.g. the provider's id found by the operator
	Now               time.Time
}

// NotificationReleaseParams releases a job of BusinessUnitID held Failed on support hold
// (its configuration fixed: the template saved), guarded by the Version the operator saw
// (ExpectedVersion): it becomes Queued and due at Now, AttemptCount and RetryCount kept.
// ErrNotFound when no such job exists in that business unit; ErrConflict when it is not
// held Failed; ErrLeaseLost when it is but its Version moved on.
type NotificationReleaseParams struct {
	DeliveryKey     string
	BusinessUnitID  string
	ExpectedVersion int64
	Now             time.Time
}

// NotificationTemplate is one version of a message template (docs/architecture.md#dispatch): Go text/template for
// Subject and Text, html/template for HTML. BusinessUnitID "" is the default every business
// unit without its own override uses.
type NotificationTemplate struct {
	Key            string
	BusinessUnitID string
	Version        int64 // 1, 2, … per (Key, BusinessUnitID)
	// Kind is the template's kind (docs/channels.md#template-kinds): "message" (or "", the
	// same: subject, text, html), "push" (Subject the title, Text the body, Extra the data
	// templates), "sms" (Text only) or "whatsapp" (Extra the provider template's name,
	// language and parameter templates).
	Kind      string
	Subject   string
	Text      string
	HTML      string
	Extra     string // the kind's JSON; "" for message and sms
	CreatedBy string
	CreatedOn time.Time
	// Deleted marks a tombstone: the unit's template was deleted by CreatedBy at CreatedOn.
	// NotificationTemplateGet never answers one; it answers the default instead.
	Deleted bool
}

// NotificationTemplateSaveParams stores a new version of (Key, BusinessUnitID). With
// ExpectedVersion set, the live version (the latest stored version, 0 when none is stored
// or the latest is a tombstone) must equal it or the save fails with ErrConflict, so two
// editors cannot silently overwrite each other. The new version is the latest stored
// version + 1, tombstones counted, so a version number is never reused. A tombstone
// (Template.Deleted) when there is no live version fails with ErrNotFound.
type NotificationTemplateSaveParams struct {
	Template        NotificationTemplate // Version and CreatedOn are assigned
	ExpectedVersion *int64
	Now             time.Time
}

// DeliveryFactApplyResult counts what one projection batch did.
type DeliveryFactApplyResult struct {
	Applied int // facts that became the command's projected state
	Stale   int // facts at or below the projected revision (replays, out of order): ignored
}

// DeliveryCountsParams asks for the projected counts of one business unit for the local days
// From..To (inclusive, "YYYY-MM-DD").
type DeliveryCountsParams struct {
	BusinessUnitID string
	From, To       string
}

// DeliveryDayCounts is one business-unit local day of the projection.
type DeliveryDayCounts struct {
	LocalDate string `json:"localDate"`
	Sent      int    `json:"sent"`
	Failed    int    `json:"failed"`
	Unknown   int    `json:"unknown"`
}

// DeliveryCounts is the answer of DeliveryCountsByDay: only days with at least one sent,
// failed or unknown command, by date. FreshTo is the newest fact instant (UTC) the projection
// has applied (nil: none yet): facts of later changes, or still in the outbox or on the bus,
// are not counted.
type DeliveryCounts struct {
	Days    []DeliveryDayCounts `json:"days"`
	FreshTo *time.Time          `json:"freshTo"`
}

// DeliverySupportStore holds the support side of delivery: the manual-resolution queue,
// templates and the reporting projection of facts.
type DeliverySupportStore interface {
	// NotificationListUnknown lists the manual-resolution queue of one business unit.
	NotificationListUnknown(ctx context.Context, p NotificationListUnknownParams) ([]NotificationJob, error)
	// NotificationResolve resolves an Unknown job; it returns the job as resolved.
	NotificationResolve(ctx context.Context, p NotificationResolveParams) (NotificationJob, error)
	// NotificationListHeld lists the jobs of one business unit held Failed on support hold.
	NotificationListHeld(ctx context.Context, p NotificationListUnknownParams) ([]NotificationJob, error)
	// NotificationRelease releases a job held Failed on support hold; it returns the job as
	// released (Queued, due now).
	NotificationRelease(ctx context.Context, p NotificationReleaseParams) (NotificationJob, error)
	// NotificationTemplateSave stores a new template version and returns it.
	NotificationTemplateSave(ctx context.Context, p NotificationTemplateSaveParams) (NotificationTemplate, error)
	// NotificationTemplateGet returns the latest version of key for the business unit, or
	// of the default (BusinessUnitID "") when the unit has no override or its latest is a
	// tombstone; ErrNotFound if neither is live.
	NotificationTemplateGet(ctx context.Context, key, businessUnitID string) (NotificationTemplate, error)
	// DeliveryFactApply applies up to MaxBatch facts in one transaction: a fact replaces the
	// projected state of its command only when its Revision is higher, so replayed or
	// out-of-order facts never double-count. It advances FreshTo to the newest OccurredOn.
	DeliveryFactApply(ctx context.Context, facts []DeliveryFact, now time.Time) (DeliveryFactApplyResult, error)
	// DeliveryCountsByDay returns sent/failed/unknown counts per local day and FreshTo.
	DeliveryCountsByDay(ctx context.Context, p DeliveryCountsParams) (DeliveryCounts, error)
}
