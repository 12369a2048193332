package store

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// ReportSubscriptionStatus is the lifecycle state of a report subscription (docs/architecture.md#report-subscriptions).
type ReportSubscriptionStatus string

// Report subscription statuses. Deleted is a tombstone: the row stays so the history of its
// runs keeps its business unit (support endpoints), but the API answers 404 for it.
const (
	ReportSubscriptionActive  ReportSubscriptionStatus = "Active"
	ReportSubscriptionPaused  ReportSubscriptionStatus = "Paused"
	ReportSubscriptionDeleted ReportSubscriptionStatus = "Deleted"
)

// ReportSubscriptionRecord is a stored report subscription. The report package owns the JSON
// shape of Body; the columns are what queries filter on. Instants UTC.
type ReportSubscriptionRecord struct {
	Guid           string // lower-case GUID
	BusinessUnitID string
	ReportType     string
	Status         ReportSubscriptionStatus
	Body           string // the subscription definition as JSON
	Version        int64  // 1 on insert, +1 on every update
	CreatedOn      time.Time
	UpdatedOn      time.Time
	// UpdatedBy is who wrote this version (the delete's tombstone included): the operator's
	// principal first ("key:admin / jane", docs/security.md#audit); "" (stored NULL) when
	// the write names nobody. Written, not read back.
	UpdatedBy string
}

// ReportSubscriptionUpdateParams replaces the subscription Record.Guid if its Version is
// still ExpectedVersion; the stored Version becomes ExpectedVersion+1 and UpdatedOn
// Record.UpdatedOn. BusinessUnitId and CreatedOn never change.
type ReportSubscriptionUpdateParams struct {
	Record          ReportSubscriptionRecord
	ExpectedVersion int64
}

// ReportSubscriptionListParams pages through subscriptions by Guid: those with Guid >
// AfterGuid, of BusinessUnitID when not empty, Deleted ones excluded, at most Limit.
type ReportSubscriptionListParams struct {
	BusinessUnitID string
	AfterGuid      string
	Limit          int
}

// ReportRunKind says what created a report run (the SchedulerKey shapes of docs/architecture.md#scheduler-keys).
type ReportRunKind string

// Report run kinds.
const (
	ReportRunScheduled    ReportRunKind = "Scheduled"    // report-subscription:{guid}:scheduled:{scheduledOn}
	ReportRunManual       ReportRunKind = "Manual"       // report-subscription:{guid}:manual:{manualRunGuid}
	ReportRunSupportRetry ReportRunKind = "SupportRetry" // report-subscription:{guid}:support-retry:{retryGuid}
)

// ReportRunRecord registers one report run: its StorageRunKeyHash (the short stable hash of
// its SchedulerKey that names every artifact, docs/architecture.md#report-subscriptions), the period it reports on, and for manual
// and support-retry runs who asked and why (the audit of those requests). OwnershipKey is
// the SchedulerKey whose ReportRunOwnership row guards the run: the run's own key, or for a
// support retry the key of the run it retries. Instants UTC.
type ReportRunRecord struct {
	ID               int64
	RunKeyHash       string
	SchedulerKey     string
	SubscriptionGuid string
	BusinessUnitID   string
	RunKind          ReportRunKind
	OwnershipKey     string
	PeriodStart      time.Time
	PeriodEnd        time.Time
	RequestedBy      string // operator, "" for scheduled runs
	Reason           string
	CreatedOn        time.Time
}

// ReportRunListParams pages through the runs of one subscription, newest first: Id <
// BeforeID (0: from the newest), at most Limit.
type ReportRunListParams struct {
	SubscriptionGuid string
	BeforeID         int64
	Limit            int
}

// ReportFailedListParams pages through report rows needing support, by Id: Status Failed, or
// on support hold while Pending/Processing; Id > AfterID, of BusinessUnitID when not empty,
// at most Limit.
type ReportFailedListParams struct {
	BusinessUnitID string
	AfterID        int64
	Limit          int
}

// ReportOwnerType is who owns a report run (docs/architecture.md#one-owner-guard).
type ReportOwnerType string

// Owners.
const (
	OwnerOldScheduler        ReportOwnerType = "OldScheduler"
	OwnerAutomationScheduler ReportOwnerType = "AutomationScheduler"
)

// ReportOwnershipStatus is the state of a ReportRunOwnership row.
type ReportOwnershipStatus string

// Ownership statuses: Owned (the owner may create delivery artifacts), DeliveryCreated (it
// did; CoordinatesJSON says where; final), Cancelled (released before any delivery: any
// owner may acquire it again, with OwnerVersion+1).
const (
	OwnershipOwned           ReportOwnershipStatus = "Owned"
	OwnershipDeliveryCreated ReportOwnershipStatus = "DeliveryCreated"
	OwnershipCancelled       ReportOwnershipStatus = "Cancelled"
)

// ReportOwnership is one ReportRunOwnership row (docs/architecture.md#one-owner-guard): who may create the delivery artifacts
// of the run with SchedulerKey. OwnerVersion increases each time ownership changes hands and
// fences the owner's later writes; Version increases on every write. Instants UTC.
type ReportOwnership struct {
	SchedulerKey     string                `json:"schedulerKey"`
	SubscriptionGuid string                `json:"subscriptionGuid"`
	RunKind          ReportRunKind         `json:"runKind"`
	OwnerType        ReportOwnerType       `json:"ownerType"`
	OwnerVersion     int64                 `json:"ownerVersion"`
	Status           ReportOwnershipStatus `json:"status"`
	CoordinatesJSON  string                `json:"coordinatesJson,omitempty"` // "" until DeliveryCreated
	Version          int64                 `json:"version"`
	CreatedOn        time.Time             `json:"createdOn"`
	UpdatedOn        time.Time             `json:"updatedOn"`
}

// OwnershipOutcome is what an acquire did.
type OwnershipOutcome string

// Acquire outcomes (DecideOwnership).
const (
	// OwnershipAcquired: no row existed; the caller owns the run now (OwnerVersion 1).
	OwnershipAcquired OwnershipOutcome = "Acquired"
	// OwnershipReacquired: the caller already owned it (a retry): the row is returned
	// unchanged, with its coordinates when a delivery was created. Retries reuse both.
	OwnershipReacquired OwnershipOutcome = "Reacquired"
	// OwnershipTakenOver: the row was Cancelled; the caller owns it now (OwnerVersion+1).
	OwnershipTakenOver OwnershipOutcome = "TakenOver"
	// OwnershipConflict: the other owner holds it (Owned or DeliveryCreated); nothing changed
	// and the caller must not create any delivery artifact.
	OwnershipConflict OwnershipOutcome = "Conflict"
)

// DecideOwnership applies the one-owner rule to the existing row (nil when none) for an
// acquire by owner. It is pure, so every dialect decides alike inside its transaction.
func DecideOwnership(existing *ReportOwnership, owner ReportOwnerType) OwnershipOutcome {
	switch {
	case existing == nil:
		return OwnershipAcquired
	case existing.Status == OwnershipCancelled:
		return OwnershipTakenOver
	case existing.OwnerType == owner:
		return OwnershipReacquired
	default:
		return OwnershipConflict
	}
}

// ReportOwnershipAcquireParams asks for ownership of SchedulerKey for Owner at Now.
type ReportOwnershipAcquireParams struct {
	SchedulerKey     string
	SubscriptionGuid string
	RunKind          ReportRunKind
	Owner            ReportOwnerType
	Now              time.Time
	// Audit, when set, is inserted into OperatorAudit in the acquire's transaction when the
	// acquire writes (Acquired, TakenOver); a Reacquired or Conflict records nothing.
	Audit *OperatorAudit
}

// ReportOwnershipAcquireResult is the outcome and the row as it is afterwards.
type ReportOwnershipAcquireResult struct {
	Outcome   OwnershipOutcome
	Ownership ReportOwnership
}

// ReportOwnershipFenceParams names an owner's later write: it applies only while the row is
// owned by Owner with OwnerVersion.
type ReportOwnershipFenceParams struct {
	SchedulerKey    string
	Owner           ReportOwnerType
	OwnerVersion    int64
	CoordinatesJSON string // MarkDeliveryCreated only; required there
	Now             time.Time
}

// ReportOwnershipReleaseAllParams cancels every Owned (never DeliveryCreated) row of Owner
// for one subscription, of the given run kinds (rollback: ownership returns to the other
// scheduler, docs/architecture.md#report-subscriptions). At most Limit rows per call.
type ReportOwnershipReleaseAllParams struct {
	SubscriptionGuid string
	Owner            ReportOwnerType
	Kinds            []ReportRunKind
	Now              time.Time
	Limit            int
}

// ReportOwnershipListParams pages through one subscription's ownership rows by key.
type ReportOwnershipListParams struct {
	SubscriptionGuid string
	AfterKey         string
	Limit            int
}

// ReportRolloutScope is what a rollout mode applies to.
type ReportRolloutScope string

// Rollout scopes: a subscription's mode wins over its business unit's.
const (
	RolloutBusinessUnit ReportRolloutScope = "BusinessUnit"
	RolloutSubscription ReportRolloutScope = "Subscription"
)

// ReportRolloutRecord is one rollout mode (docs/architecture.md#rollout; the report package names the modes).
type ReportRolloutRecord struct {
	ScopeType ReportRolloutScope
	ScopeID   string
	Mode      string
	Version   int64
	UpdatedOn time.Time // UTC
	UpdatedBy string    // operator, "" when unnamed
}

// ReportRolloutListParams pages through rollout rows by (ScopeType, ScopeID).
type ReportRolloutListParams struct {
	AfterScopeType ReportRolloutScope
	AfterScopeID   string
	Limit          int
}

// ReportActivityParams asks for the automation activity of one business unit with writes in
// [From, To) (UTC), at most Limit groups.
type ReportActivityParams struct {
	BusinessUnitID string
	From, To       time.Time
	Limit          int
}

// ReportActivityRow counts one (AutomationType, SettingGuid) group of a business unit for a
// period: NotificationJobs Sent (SentOn in the period) and Failed (finished in the period),
// and scheduler rows that ended Failed or on support hold with their last write in the
// period.
type ReportActivityRow struct {
	BusinessUnitID   string
	AutomationType   automation.AutomationType
	SettingGuid      string // reminder setting or report subscription; "" when none
	DeliveriesSent   int
	DeliveriesFailed int
	RunsFailed       int
	RunsOnHold       int
}

// ReportStore holds report subscriptions, their run registry, the one-owner guard
// ReportRunOwnership, rollout modes and the activity aggregates (docs/architecture.md#report-subscriptions).
type ReportStore interface {
	// ReportSubscriptionInsert stores a new subscription (Version 1); ErrConflict when the
	// Guid exists (deleted ones included).
	ReportSubscriptionInsert(ctx context.Context, r ReportSubscriptionRecord) (ReportSubscriptionRecord, error)
	// ReportSubscriptionUpdate replaces a subscription guarded by its Version: ErrNotFound for
	// an unknown Guid, ErrLeaseLost when the Version moved on.
	ReportSubscriptionUpdate(ctx context.Context, p ReportSubscriptionUpdateParams) (ReportSubscriptionRecord, error)
	// ReportSubscriptionGet returns a subscription (deleted ones too), or ErrNotFound.
	ReportSubscriptionGet(ctx context.Context, guid string) (ReportSubscriptionRecord, error)
	// ReportSubscriptionList pages through subscriptions by Guid.
	ReportSubscriptionList(ctx context.Context, p ReportSubscriptionListParams) ([]ReportSubscriptionRecord, error)

	// ReportRunRegister inserts r unless a run with its SchedulerKey exists, and returns the
	// stored run (inserted=false: the existing one, unchanged). ErrConflict when another key
	// already has its RunKeyHash.
	ReportRunRegister(ctx context.Context, r ReportRunRecord) (stored ReportRunRecord, inserted bool, err error)
	// ReportRunGetByHash returns the run with that StorageRunKeyHash, or ErrNotFound.
	ReportRunGetByHash(ctx context.Context, runKeyHash string) (ReportRunRecord, error)
	// ReportRunGetByKey returns the run with that SchedulerKey, or ErrNotFound.
	ReportRunGetByKey(ctx context.Context, schedulerKey string) (ReportRunRecord, error)
	// ReportRunList pages through one subscription's runs, newest first.
	ReportRunList(ctx context.Context, p ReportRunListParams) ([]ReportRunRecord, error)
	// ReportSchedulerListOpen returns up to limit scheduler rows of one subscription that are
	// Pending, Processing or Failed, by Id (what pause, delete and updates look at).
	ReportSchedulerListOpen(ctx context.Context, subscriptionGuid string, limit int) ([]automation.SchedulerRow, error)
	// ReportSchedulerListFailed pages through report rows needing support (the failed-run queue).
	ReportSchedulerListFailed(ctx context.Context, p ReportFailedListParams) ([]automation.SchedulerRow, error)

	// ReportOwnershipAcquire applies DecideOwnership in one transaction and writes what it
	// names.
	ReportOwnershipAcquire(ctx context.Context, p ReportOwnershipAcquireParams) (ReportOwnershipAcquireResult, error)
	// ReportOwnershipGet returns the ownership row of a key, or ErrNotFound.
	ReportOwnershipGet(ctx context.Context, schedulerKey string) (ReportOwnership, error)
	// ReportOwnershipMarkDeliveryCreated moves Owned → DeliveryCreated with the coordinates,
	// fenced by owner and OwnerVersion. Marking again with the same coordinates is a no-op
	// returning the row; ErrLeaseLost when the caller no longer owns it (released, taken
	// over, or other coordinates recorded); ErrNotFound for no row.
	ReportOwnershipMarkDeliveryCreated(ctx context.Context, p ReportOwnershipFenceParams) (ReportOwnership, error)
	// ReportOwnershipRelease moves Owned → Cancelled, fenced by owner and OwnerVersion.
	// Releasing again is a no-op; ErrConflict once a delivery was created (it can never be
	// released); ErrLeaseLost when the caller does not own it; ErrNotFound for no row.
	ReportOwnershipRelease(ctx context.Context, p ReportOwnershipFenceParams) (ReportOwnership, error)
	// ReportOwnershipReleaseAll cancels Owned rows of one owner for a subscription and
	// returns how many.
	ReportOwnershipReleaseAll(ctx context.Context, p ReportOwnershipReleaseAllParams) (int, error)
	// ReportOwnershipList pages through one subscription's ownership rows by SchedulerKey.
	ReportOwnershipList(ctx context.Context, p ReportOwnershipListParams) ([]ReportOwnership, error)

	// ReportRolloutPut sets the mode of a scope (insert, or update with Version+1).
	ReportRolloutPut(ctx context.Context, r ReportRolloutRecord) (ReportRolloutRecord, error)
	// ReportRolloutGet returns a scope's mode, or ErrNotFound.
	ReportRolloutGet(ctx context.Context, scope ReportRolloutScope, scopeID string) (ReportRolloutRecord, error)
	// ReportRolloutDelete removes a scope's mode (rollback); deleted=false when none was set.
	// A non-nil audit is inserted into OperatorAudit in the delete's transaction, also when
	// nothing was set (the operator asked); an invalid audit refuses the delete.
	ReportRolloutDelete(ctx context.Context, scope ReportRolloutScope, scopeID string, audit *OperatorAudit) (deleted bool, err error)
	// ReportRolloutList pages through rollout rows.
	ReportRolloutList(ctx context.Context, p ReportRolloutListParams) ([]ReportRolloutRecord, error)

	// ReportActivity aggregates one business unit's automation activity for a period,
	// ordered by AutomationType, SettingGuid.
	ReportActivity(ctx context.Context, p ReportActivityParams) ([]ReportActivityRow, error)
}
