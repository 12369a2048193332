package store

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// SupportAction is what an operator did to a scheduler row (docs/architecture.md#support-actions "Support can
// release a hold, retry now, or cancel — each an audited, versioned update").
type SupportAction string

// Support actions. Each is one guarded update of one row plus one SupportAudit record, in
// one transaction.
const (
	// SupportRelease clears IsOnSupportHold; a Failed row becomes Pending (RetryCount kept,
	// so a release buys one more attempt) and a Pending one is due at max(ScheduledOn,
	// NextRetryOn) where NextRetryOn is the given DueOn (nil: at once). Needs the row on hold.
	SupportRelease SupportAction = "Release"
	// SupportRetryNow makes a Failed row, or a Pending row waiting on backoff or hold, due at
	// once: Status Pending, hold cleared, NextRetryOn cleared.
	SupportRetryNow SupportAction = "RetryNow"
	// SupportRetry re-sends a row that ended (Completed, Deactivated, Cancelled): the row
	// itself only gets a new Version, and RetryCandidate (a support-retry key, see
	// automation.SupportRetryKey) is ensured in the same transaction.
	SupportRetry SupportAction = "SupportRetry"
	// SupportCancel sets a Pending, Failed or Deactivated row to Cancelled with ReasonCode
	// automation.ReasonSupportCancelled (never sent; ensure leaves it so while its InputHash
	// is unchanged).
	SupportCancel SupportAction = "Cancel"
	// SupportRunNow makes a Pending row that is not on support hold due at once (the
	// operator's "trigger"): ScheduledOn = Now when it was later, NextRetryOn cleared. Its
	// local intent (ScheduledLocalDate, ScheduledLocalTime, TimeZoneId) and key stay.
	SupportRunNow SupportAction = "RunNow"
)

// SupportActParams applies Action to the row ID whose Version is still Version, recording
// Operator and Reason. Errors: ErrNotFound (no such row), ErrLeaseLost (the Version moved on,
// or the row's state no longer allows the action: nothing is written).
type SupportActParams struct {
	ID       int64
	Version  int64
	Action   SupportAction
	Operator string // required
	Reason   string // required
	Now      time.Time
	// DueOn (SupportRelease only): the earliest instant the released row may run (UTC); nil
	// runs it at once.
	DueOn *time.Time
	// RetryCandidate (SupportRetry only): the new row to ensure.
	RetryCandidate *automation.Candidate
}

// SupportActResult is the row after the action, the audit record's id and, for
// SupportRetry, the ensured retry row.
type SupportActResult struct {
	Row      automation.SchedulerRow
	AuditID  int64
	RetryRow *EnsureResult
}

// SupportAuditRecord is one SupportAudit row. Instants UTC.
type SupportAuditRecord struct {
	ID                int64
	SchedulerID       int64
	SchedulerKey      string
	BusinessUnitID    string
	Action            SupportAction
	Operator          string
	Reason            string
	StatusBefore      automation.Status
	StatusAfter       automation.Status
	VersionBefore     int64
	VersionAfter      int64
	RetrySchedulerKey string     // SupportRetry: the new row's key
	DueOn             *time.Time // paced release: when the row became due
	BatchID           string     // bulk release: its id
	CreatedOn         time.Time
}

// SupportFindParams filters AutomationScheduler rows for the support API. Empty fields do
// not filter, except Scope: only rows of business units the caller's scope sees match (the
// zero Scope matches nothing). Pages are keyset pages:
// newest first (Id < BeforeID), except when ByScheduledOn reports true: then in schedule
// order after (AfterOn, AfterID).
type SupportFindParams struct {
	SchedulerKey     string
	SourceEntityType string // with SourceEntityGuid: one source
	SourceEntityGuid string
	BusinessUnitID   string
	Status           automation.Status
	OnHold           *bool
	ScheduledFrom    *time.Time // inclusive, UTC
	ScheduledTo      *time.Time // exclusive, UTC
	Scope            automation.Scope
	// BeforeID (newest-first pages): only rows with Id < BeforeID; 0 means no bound.
	BeforeID int64
	// AfterOn, AfterID (schedule-order pages): only rows after (AfterOn, AfterID); the zero
	// AfterOn means from ScheduledFrom.
	AfterOn time.Time
	AfterID int64
	Limit   int // 1..MaxBatch
}

// ByScheduledOn reports whether the find pages in schedule order: only a scheduledOn range
// narrows it (no key, source, business unit, status or on-hold filter), so the range index
// drives the query.
func (p SupportFindParams) ByScheduledOn() bool {
	return p.SchedulerKey == "" && p.SourceEntityType == "" && p.BusinessUnitID == "" && p.Status == "" &&
		(p.OnHold == nil || !*p.OnHold) && (p.ScheduledFrom != nil || p.ScheduledTo != nil)
}

// SupportReleaseFilter selects rows on support hold for a bulk release. Scope as in
// SupportFindParams.
type SupportReleaseFilter struct {
	SourceEntityType  string
	SourceEntityGuid  string
	BusinessUnitID    string
	Status            automation.Status
	FailureReasonCode automation.ReasonCode
	ScheduledFrom     *time.Time
	ScheduledTo       *time.Time
	Scope             automation.Scope
}

// SupportReleaseBatchParams releases one paced batch: up to Limit rows on hold matching
// Filter with Id > AfterID, by Id, in one transaction. The batch is due at
// max(Now, the release pace's next slot); the pace then moves to that instant + Interval,
// so batches of every bulk release follow each other at least Interval apart.
type SupportReleaseBatchParams struct {
	Filter   SupportReleaseFilter
	AfterID  int64
	Limit    int // 1..MaxBatch
	Now      time.Time
	Interval time.Duration // > 0
	Operator string
	Reason   string
	BatchID  string // the bulk release's id, kept in the audit
}

// SupportReleaseBatchResult lists the released rows (after the update) and when they are
// due; DueOn is the zero time when nothing matched (the pace is then unchanged).
type SupportReleaseBatchResult struct {
	Rows  []automation.SchedulerRow
	DueOn time.Time
}

// SupportMetricsParams: Now and Since (UTC) are the instants the figures are computed at;
// Scope as in SupportFindParams; every count reads at most Cap
// rows (1..MetricsMaxCap).
type SupportMetricsParams struct {
	Now   time.Time
	Since time.Time
	Scope automation.Scope
	Cap   int
}

// SupportThroughputParams selects the window of SupportThroughput (UTC, Until after Since,
// at most MaxThroughputWindow apart) and the business units (Scope as in SupportFindParams).
type SupportThroughputParams struct {
	Since, Until time.Time
	Scope        automation.Scope
}

// MaxThroughputWindow bounds a SupportThroughput window: the range it reads is an index
// seek on NotificationJob (UpdatedOn), bounded by time.
const MaxThroughputWindow = 24 * time.Hour

// ThroughputBucket is the count of deliveries of one status ("Sent", "Failed", "Unknown")
// and channel whose last change fell in the minute starting at Minute (UTC).
type ThroughputBucket struct {
	Minute  time.Time
	Status  NotificationStatus
	Channel string
	Count   int
}

// CommandThroughputBucket is the count of campaign commands of one status (SUCCEEDED,
// FAILED, UNKNOWN) whose last change fell in the minute starting at Minute (UTC).
type CommandThroughputBucket struct {
	Minute time.Time
	Status CommandStatus
	Count  int
}

// MetricsMaxCap bounds SupportMetricsParams.Cap.
const MetricsMaxCap = 1_000_000

// SupportMetrics are the pipeline's health figures (docs/operations.md#metrics). Counts are at most
// the Cap asked for. Outbox figures are platform-wide and only computed when Scope.All().
type SupportMetrics struct {
	PendingDue          int
	OldestDueOn         *time.Time // ScheduledOn of the oldest row due now
	Processing          int
	ExpiredLeases       int
	HeldByReason        map[string]int // FailureReasonCode → rows on support hold
	Failed              int
	DeactivatedByReason map[string]int // ReasonCode → rows deactivated since Since
	OutboxUnsent        int
	OutboxOldestOn      *time.Time
	UnknownDeliveries   int // NotificationJob rows with Status "Unknown"
	// ReservationsHeld / OldestHeldOn: BudgetReservation rows HELD and the earliest CreatedOn
	// among those counted.
	ReservationsHeld int
	OldestHeldOn     *time.Time
	// FeesByStatus: FeeTransfer rows per status (FeePending, FeeSucceeded, FeeFailed,
	// FeeUnknown), each capped.
	FeesByStatus map[string]int
}

// SourceStaleEvent is the latest event of a source ignored because its revision was older
// than the stored snapshot's (docs/architecture.md#inputs: out-of-order delivery).
type SourceStaleEvent struct {
	EntityType     string
	EntityGuid     string
	EventID        string
	Revision       int64
	StoredRevision int64
	StoredEventID  string
	ReceivedOn     time.Time
}

// SupportStore is what the support API reads and writes beyond the pipeline's stores.
type SupportStore interface {
	// SupportSchedulerFind returns one page of rows (see SupportFindParams).
	SupportSchedulerFind(ctx context.Context, p SupportFindParams) ([]automation.SchedulerRow, error)
	// SupportSchedulerGet returns the row with that Id, or ErrNotFound.
	SupportSchedulerGet(ctx context.Context, id int64) (automation.SchedulerRow, error)
	// SupportSchedulerGetByGuid returns the row with that Guid, or ErrNotFound.
	SupportSchedulerGetByGuid(ctx context.Context, guid string) (automation.SchedulerRow, error)
	// SupportSchedulerAct applies one audited, Version-guarded action (SupportActParams).
	SupportSchedulerAct(ctx context.Context, p SupportActParams) (SupportActResult, error)
	// SupportSchedulerReleaseBatch releases one paced batch (SupportReleaseBatchParams).
	SupportSchedulerReleaseBatch(ctx context.Context, p SupportReleaseBatchParams) (SupportReleaseBatchResult, error)
	// SupportAuditList returns up to limit audit records of the rows schedulerIDs (at most
	// MaxBatch ids), by row then Id.
	SupportAuditList(ctx context.Context, schedulerIDs []int64, limit int) ([]SupportAuditRecord, error)
	// SupportNotificationList returns up to limit NotificationJob rows of one SchedulerKey,
	// by Id.
	SupportNotificationList(ctx context.Context, schedulerKey string, limit int) ([]NotificationJob, error)
	// SupportMetrics computes the health figures with bounded queries.
	SupportMetrics(ctx context.Context, p SupportMetricsParams) (SupportMetrics, error)
	// SupportThroughput counts the deliveries that reached Sent, Failed or Unknown per
	// minute of UpdatedOn in [Since, Until), for the scope's business units: one bucket per
	// minute and status that has any, in time order.
	SupportThroughput(ctx context.Context, p SupportThroughputParams) ([]ThroughputBucket, error)
	// SupportCommandThroughput counts the campaign commands that reached SUCCEEDED, FAILED
	// or UNKNOWN per minute of UpdatedOn in [Since, Until), for the scope's business units:
	// one bucket per minute and status that has any, in time order (the same window rule).
	SupportCommandThroughput(ctx context.Context, p SupportThroughputParams) ([]CommandThroughputBucket, error)
	// MetricsSamplePut records samples of the console's metrics history (at most MaxBatch);
	// a sample whose business unit and instant are already recorded is left as it is (two
	// instances sampling the same minute write one row).
	MetricsSamplePut(ctx context.Context, samples []MetricsSample) error
	// MetricsSampleSeries returns the history of a scope since an instant (MetricsSeriesParams).
	MetricsSampleSeries(ctx context.Context, p MetricsSeriesParams) ([]MetricsSample, error)
	// MetricsSamplePurge deletes up to limit (1..MaxBatch) samples taken before an instant
	// and returns how many it deleted.
	MetricsSamplePurge(ctx context.Context, before time.Time, limit int) (int, error)
	// MetricsCountAdd adds each count to its persisted counter (MetricsCount: the minute,
	// flow, business unit, label and outcome), at most MaxBatch in one transaction; a counter
	// another instance already added to grows by N. flushID is the flush's idempotency key
	// (1..MaxMetricsCountFlushID printable ASCII characters, unique per flush: the caller
	// retries a flush it saw fail with the same id and the same counts): the transaction
	// also writes a ledger row of (the counts' earliest minute, flushID) (MetricsCountFlush,
	// migration 0072), and a flush whose row is already there (its earlier commit succeeded
	// though the caller saw an error) adds nothing and returns nil. Errors: a flushID out of
	// bounds, a count without a flow or outcome, with N < 1 or a member wider than its
	// column is automation.CodeInvalidInput, checked before anything reaches the database
	// (certainly nothing written); any other error may follow a commit that succeeded.
	MetricsCountAdd(ctx context.Context, flushID string, counts []MetricsCount) error
	// MetricsCountSeries returns one flow's counts per minute and outcome in [Since, Until)
	// (at most MaxThroughputWindow apart) for the scope's business units, in time order.
	MetricsCountSeries(ctx context.Context, p MetricsCountParams) ([]MetricsCountBucket, error)
	// MetricsCountPurge deletes up to limit (1..MaxBatch) counters of minutes before an
	// instant and returns how many it deleted; it also deletes up to limit flush ledger rows
	// of those minutes (not counted).
	MetricsCountPurge(ctx context.Context, before time.Time, limit int) (int, error)
	// SourceStaleEventGet returns the latest ignored event of a source, or ErrNotFound.
	// SourceSnapshotApply records it when it returns SnapshotStale.
	SourceStaleEventGet(ctx context.Context, entityType, entityGuid string) (SourceStaleEvent, error)
}

// PlatformUnit is the BusinessUnitID of the platform-wide metrics sample: every business unit
// together, plus the outbox (which carries no business unit).
const PlatformUnit = "*"

// MaxMetricsSeries bounds MetricsSeriesParams.Limit: 48 hours of one sample a minute.
const MaxMetricsSeries = 48 * 60

// MetricsSample is one business unit's pipeline figures at one instant, a point of the
// console's overview history (table MetricsSample, migration 0017). Ages are whole seconds;
// 0 means nothing was waiting. The outbox figures are set on the PlatformUnit sample only.
type MetricsSample struct {
	BusinessUnitID         string
	SampledOn              time.Time // UTC, a whole minute
	PendingDue             int
	OldestDueAgeSeconds    int64
	OnHold                 int
	OutboxUnsent           int
	OutboxOldestAgeSeconds int64
}

// MetricsSeriesParams selects at most Limit (1..MaxMetricsSeries) sample instants at or
// after Since, oldest first. A scope that sees every business unit reads the PlatformUnit
// samples; any other scope reads its units' samples added up per instant (the sums of the
// counts, the largest age; no outbox figures). The zero Scope reads nothing.
type MetricsSeriesParams struct {
	Scope automation.Scope
	Since time.Time
	Limit int
}

// MetricsCount is a persisted counter of the console's overview (table MetricsCount,
// migration 0063): how many things of one flow (FlowIngest, ...) and outcome happened in
// the minute starting at MinuteOn (UTC) for a business unit ("" when it was unknown) and a
// label (the flow's dimension: the event type for FlowIngest; "" when it was unknown).
// Processes count in memory and the metrics sampler adds the counts once a minute, so the
// figures survive restarts and add up across instances.
type MetricsCount struct {
	MinuteOn       time.Time
	Flow           string
	BusinessUnitID string
	Label          string
	Outcome        string
	N              int64
}

// The widths of MetricsCount's key members, in UTF-16 code units (SQL Server's nvarchar
// lengths, migration 0063): MetricsCountAdd refuses a longer member in every dialect, and
// the counters (gateway.Metrics, metricscount.Counts) never hold one.
const (
	MaxMetricsCountFlow    = 32
	MaxMetricsCountUnit    = 100
	MaxMetricsCountLabel   = 200
	MaxMetricsCountOutcome = 32
)

// MaxMetricsCountFlushID bounds a flush's idempotency key (MetricsCountAdd's flushID; the
// FlushId column of MetricsCountFlush, nvarchar(64) on SQL Server, migration 0072).
const MaxMetricsCountFlushID = 64

// FlowIngest is the MetricsCount flow of the event gateway's ingest results: Label is the
// event type, Outcome the result's status (accepted, duplicate, rejected).
const FlowIngest = "ingest"

// MetricsCountParams selects one flow's counts in [Since, Until) for the scope's business
// units (Scope as in SupportFindParams; a scope of every unit also reads the "" unit).
type MetricsCountParams struct {
	Flow         string
	Since, Until time.Time
	Scope        automation.Scope
}

// MetricsCountBucket is one flow's count of one outcome in the minute starting at Minute
// (UTC), summed over business units and labels.
type MetricsCountBucket struct {
	Minute  time.Time
	Outcome string
	Count   int
}
