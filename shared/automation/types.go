package automation

import (
	"slices"
	"time"
)

// Status is the state of an AutomationScheduler row (docs/architecture.md#the-row).
type Status string

// Row statuses. See the package doc for the state diagram.
const (
	StatusPending     Status = "Pending"
	StatusProcessing  Status = "Processing"
	StatusCompleted   Status = "Completed"
	StatusFailed      Status = "Failed"
	StatusDeactivated Status = "Deactivated"
	StatusCancelled   Status = "Cancelled"
)

// AllStatuses lists every status in a stable order (for summaries and metrics).
var AllStatuses = []Status{StatusPending, StatusProcessing, StatusCompleted, StatusFailed, StatusDeactivated, StatusCancelled}

// AutomationType is the kind of work a row carries (docs/architecture.md#the-row).
type AutomationType string

// Automation types.
const (
	TypeReminder           AutomationType = "Reminder"
	TypeReportSubscription AutomationType = "ReportSubscription"
	TypeUserMessage        AutomationType = "UserMessage"
	TypeAutomationJob      AutomationType = "AutomationJob"
)

// TriggerType says what made a row due (docs/architecture.md#the-row).
type TriggerType string

// Trigger types.
const (
	TriggerDateBased          TriggerType = "DateBased"
	TriggerThresholdCondition TriggerType = "ThresholdCondition"
	TriggerRecurring          TriggerType = "Recurring"
	TriggerScheduledRun       TriggerType = "ScheduledRun"
	TriggerManualRun          TriggerType = "ManualRun"
)

// ReasonCode says why a row was Deactivated or Cancelled, or why an attempt failed.
// Deactivation is an outcome, not a failure (docs/architecture.md#failure-backoff-and-rescue).
type ReasonCode string

// Reason codes (docs/architecture.md#failure-backoff-and-rescue, docs/architecture.md#revalidation, docs/architecture.md#date-based-reminders, docs/architecture.md#threshold-reminders).
const (
	ReasonSourceNoLongerValid     ReasonCode = "SourceNoLongerValid"
	ReasonReminderSettingInactive ReasonCode = "ReminderSettingInactive"
	ReasonSuperseded              ReasonCode = "Superseded"
	ReasonMissedWindow            ReasonCode = "MissedWindow"
	ReasonTooLate                 ReasonCode = "TooLate"
	ReasonConditionNoLongerMet    ReasonCode = "ConditionNoLongerMet"
	ReasonInputHashConflict       ReasonCode = "InputHashConflict"
	ReasonLeaseExpired            ReasonCode = "LeaseExpired"
	ReasonHandlerError            ReasonCode = "HandlerError"
	ReasonPermanentError          ReasonCode = "PermanentError"
	ReasonNoHandler               ReasonCode = "NoHandler"
	ReasonRetriesExhausted        ReasonCode = "RetriesExhausted"
)

// FailureReasonCodes are the reason codes a failed attempt records in FailureReasonCode, the
// ones a held row can carry: the scheduler's (HandlerError, PermanentError, NoHandler,
// LeaseExpired, RetriesExhausted) and ensure's InputHashConflict. The support API's release
// filter accepts exactly these.
var FailureReasonCodes = []ReasonCode{ReasonHandlerError, ReasonPermanentError, ReasonNoHandler, ReasonLeaseExpired,
	ReasonRetriesExhausted, ReasonInputHashConflict}

// IsFailureReason reports whether c is one of FailureReasonCodes (exact spelling).
func (c ReasonCode) IsFailureReason() bool { return slices.Contains(FailureReasonCodes, c) }

// SchedulerRow is one row of AutomationScheduler. It is compact on purpose: no large
// input, recipient lists or rendered output (docs/architecture.md#the-row). All instants are UTC.
type SchedulerRow struct {
	ID             int64
	Guid           string // deterministic: UUIDv5 of SchedulerKey
	AutomationType AutomationType
	TriggerType    TriggerType
	SchedulerKey   string
	// SettingGuid is the reminder setting or subscription that produced the row ("" if none);
	// revalidation and setting deactivation use it.
	SettingGuid      string
	SourceEntityType string
	SourceEntityGuid string
	BusinessUnitID   string
	ScheduledOn      time.Time // UTC instant the row becomes due
	// ScheduledLocalDate ("YYYY-MM-DD"), ScheduledLocalTime ("HH:MM") and TimeZoneID (IANA)
	// are the business unit's local intent that ScheduledOn was computed from.
	ScheduledLocalDate       string
	ScheduledLocalTime       string
	TimeZoneID               string
	Status                   Status
	ProcessingLeaseExpiresOn *time.Time // UTC; set only while Processing
	RetryCount               int
	NextRetryOn              *time.Time // UTC; nil = no backoff pending
	FailureReasonCode        ReasonCode
	ReasonCode               ReasonCode
	IsOnSupportHold          bool
	InputHash                string // lower-case hex sha256
	ConflictInputHash        string // the rejected InputHash when a conflict put the row on hold
	DispatchResultJSON       string
	TraceBlobName            string
	Version                  int64
	CreatedOn                time.Time
	UpdatedOn                time.Time
	CompletedOn              *time.Time
	// TraceParent is the W3C traceparent of the transaction that created the row (migration
	// 0044): its execution runs in that trace. Empty: untraced.
	TraceParent string
}

// Candidate is what a trigger provider asks the scheduler to ensure: the identity (key +
// InputHash) and schedule of one occurrence. It carries no recipients (docs/architecture.md#event-flow).
type Candidate struct {
	AutomationType     AutomationType
	TriggerType        TriggerType
	SchedulerKey       string
	InputHash          string
	SettingGuid        string
	SourceEntityType   string
	SourceEntityGuid   string
	BusinessUnitID     string
	ScheduledOn        time.Time // UTC
	ScheduledLocalDate string    // "YYYY-MM-DD" in TimeZoneID
	ScheduledLocalTime string    // "HH:MM" in TimeZoneID
	TimeZoneID         string
	// MissedReason, when set (ReasonMissedWindow), asks to record the occurrence as
	// Deactivated with that reason instead of Pending: its send time passed before it was
	// ensured and it must never be sent (docs/architecture.md#late-rule). An existing row is left as it is.
	MissedReason ReasonCode
}
