package store

import (
	"context"
	"time"
)

// BusinessUnit is a tenant with its IANA time zone (docs/architecture.md#inputs).
type BusinessUnit struct {
	ID         string
	Name       string
	TimeZoneID string
}

// ReminderSettingRecord is a stored reminder setting. The reminder package owns the JSON
// shape (Body); the columns here are what queries filter on.
type ReminderSettingRecord struct {
	Guid           string // lower-case GUID
	BusinessUnitID string
	SourceType     string
	TriggerType    string
	IsActive       bool
	Body           string // the setting as JSON
	Version        int64
	UpdatedOn      time.Time
	// UpdatedBy is who wrote this version: the operator's principal first ("key:admin /
	// jane", docs/security.md#audit); "" (stored NULL) when the write names nobody (replay).
	// Written, not read back.
	UpdatedBy string
}

// SourceSnapshot is the latest revision of one source entity's fields, so revalidation
// can reload the source without calling the domain app (docs/architecture.md#inputs).
type SourceSnapshot struct {
	EntityType     string
	EntityGuid     string
	BusinessUnitID string
	Revision       int64
	IsDeleted      bool
	DataJSON       string
	LastEventID    string
	UpdatedOn      time.Time
}

// SnapshotOutcome is what SourceSnapshotApply did.
type SnapshotOutcome string

// Snapshot outcomes.
const (
	// SnapshotApplied: the snapshot was new or newer and is now stored.
	SnapshotApplied SnapshotOutcome = "Applied"
	// SnapshotReapplied: the same revision from the same event was seen again (a redelivery
	// after a crash mid-processing); nothing was written and processing may continue.
	SnapshotReapplied SnapshotOutcome = "Reapplied"
	// SnapshotStale: an older revision, or the same revision from another event; ignored.
	SnapshotStale SnapshotOutcome = "Stale"
)

// ReminderStore holds business units, reminder settings, source snapshots and the
// processed-event ledger used for event-id dedupe.
type ReminderStore interface {
	BusinessUnitUpsert(ctx context.Context, bu BusinessUnit) error
	// BusinessUnitGet returns ErrNotFound for an unknown id.
	BusinessUnitGet(ctx context.Context, id string) (BusinessUnit, error)
	ReminderSettingUpsert(ctx context.Context, s ReminderSettingRecord) error
	// ReminderSettingGet returns ErrNotFound for an unknown guid.
	ReminderSettingGet(ctx context.Context, guid string) (ReminderSettingRecord, error)
	// ReminderSettingListBySource lists settings (active or not) of one BU and source type.
	ReminderSettingListBySource(ctx context.Context, businessUnitID, sourceType string) ([]ReminderSettingRecord, error)
	// SourceSnapshotGet returns ErrNotFound when the entity was never seen.
	SourceSnapshotGet(ctx context.Context, entityType, entityGuid string) (SourceSnapshot, error)
	// SourceSnapshotApply stores s if its Revision is newer than the stored one
	// (out-of-order events are ignored, docs/architecture.md#inputs). An ignored one is kept as the source's latest
	// stale event (SupportStore.SourceStaleEventGet) in the same transaction.
	SourceSnapshotApply(ctx context.Context, s SourceSnapshot) (SnapshotOutcome, error)
	// EventProcessed reports whether the event (source + id) completed processing before.
	EventProcessed(ctx context.Context, source, id string) (bool, error)
	// EventMarkProcessed records the event as fully processed (idempotent).
	EventMarkProcessed(ctx context.Context, source, id string, now time.Time) error
}

// Store is everything a SQL dialect provides.
type Store interface {
	SchedulerStore
	DeliveryStore
	DeliverySupportStore
	ReminderStore
	IdempotencyStore
	ReportStore
	SupportStore
	LifecycleStore
	GatewayStore
	InboxStore
	PushDeviceStore
	PreferenceStore
	AttributeStore
	CampaignStore
	OutboxLeaseStore
	BudgetStore
	KeyStore
	SessionStore
	DeadLetterAuditStore
	RecipientActivityStore
	TemplateListStore
	OperatorAuditStore
	Close() error
}
