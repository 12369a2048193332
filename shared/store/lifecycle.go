package store

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// BusinessUnitRecord is a business unit as the management API sees it (docs/architecture.md#inputs): the IANA
// zone the pipeline uses, the zone id as the client gave it (a Windows id such as "AUS
// Eastern Standard Time" is stored mapped, with the original kept here), the recipient
// role lists that reminder recipient policies may name, and the optimistic-concurrency
// Version (the API's ETag).
type BusinessUnitRecord struct {
	BusinessUnit
	TimeZoneIDGiven string              // as given; "" when it was the IANA id itself
	Roles           map[string][]string // role name → recipient addresses (resolved at execution, docs/architecture.md#revalidation)
	Version         int64
	UpdatedOn       time.Time // UTC
	// UpdatedBy is who wrote this version: the operator's principal first ("key:admin /
	// jane", docs/security.md#audit); "" (stored NULL) when the write names nobody. Written,
	// not read back.
	UpdatedBy string
}

// BusinessUnitListParams pages business units by Id: at most Limit (1..MaxBatch) units in
// Scope with Id > AfterID, by Id. The zero Scope lists none.
type BusinessUnitListParams struct {
	Scope   automation.Scope
	AfterID string
	Limit   int
}

// ReminderSettingListParams pages reminder settings by Guid: at most Limit (1..MaxBatch)
// settings in Scope with Guid > AfterGuid, optionally of one business unit, one source type
// and one activity state. The zero Scope lists none.
type ReminderSettingListParams struct {
	Scope          automation.Scope
	BusinessUnitID string // "" = any
	SourceType     string // "" = any
	Active         *bool  // nil = any
	AfterGuid      string
	Limit          int
}

// SettingSourcePair is one (business unit, source type) that has at least one active
// reminder setting: the unit a source sweep runs for (docs/architecture.md#reconciliation).
type SettingSourcePair struct {
	BusinessUnitID string
	SourceType     string
}

// SourceSnapshotListParams pages source snapshots of one business unit and entity type by
// (UpdatedOn, EntityGuid): those changed at or after ChangedSince (zero = all) and strictly
// after the keyset position (AfterUpdatedOn, AfterGuid) when AfterGuid is set. Deleted
// snapshots are included only with IncludeDeleted. At most Limit (1..MaxBatch).
type SourceSnapshotListParams struct {
	BusinessUnitID string
	EntityType     string
	ChangedSince   time.Time
	AfterUpdatedOn time.Time
	AfterGuid      string
	IncludeDeleted bool
	Limit          int
}

// SchedulerListBySettingParams pages the open (Pending or Failed) rows of one setting by Id.
type SchedulerListBySettingParams struct {
	SettingGuid string
	AfterID     int64
	Limit       int
}

// SchedulerListFuturePendingParams pages Pending rows whose ScheduledOn is after Now, by
// Id (the tzdata resync, docs/architecture.md#date-based-reminders).
type SchedulerListFuturePendingParams struct {
	Now     time.Time
	AfterID int64
	Limit   int
}

// ThresholdEdge is the rising-edge state of one threshold level of one setting for one
// source (docs/architecture.md#threshold-reminders, firing policy FalseToTrue): whether the condition was met at Revision and
// how many false→true crossings were counted.
type ThresholdEdge struct {
	SettingGuid      string
	SourceEntityType string
	SourceEntityGuid string
	Level            string // canonical decimal text of the level
	IsMet            bool
	EdgeCount        int64
	Revision         int64 // source revision the state was computed from
	UpdatedOn        time.Time
}

// ThresholdEdgeApplyParams reports the condition of one level at source revision Revision.
type ThresholdEdgeApplyParams struct {
	SettingGuid      string
	SourceEntityType string
	SourceEntityGuid string
	Level            string
	IsMet            bool
	Revision         int64
	Now              time.Time
}

// ReconcileState is the progress of one bounded sweep (docs/architecture.md#reconciliation), keyed by SweepKey (e.g.
// "source:{bu}:{sourceType}", "setting:{guid}", "tzdata"). Generation counts requested
// passes and DoneGeneration completed ones (Generation > DoneGeneration: a pass is owed).
// WatermarkOn is the changed-since instant of the current pass, PassHighOn the latest change
// seen in it, Cursor the keyset position inside it; Marker is free text (the tzdata version
// resynced). Every save is guarded by Version.
type ReconcileState struct {
	SweepKey       string
	Generation     int64
	DoneGeneration int64
	WatermarkOn    *time.Time
	PassHighOn     *time.Time
	Cursor         string
	Marker         string
	Version        int64 // 0: not stored yet
	UpdatedOn      time.Time
}

// LifecycleStore is what the reminder lifecycle needs beyond ReminderStore: management of
// business units and settings, paging for propagation and reconciliation, threshold edge
// state and sweep progress (docs/architecture.md#reminders).
type LifecycleStore interface {
	// BusinessUnitInsert stores a new business unit with Version 1; ErrConflict if the id exists.
	BusinessUnitInsert(ctx context.Context, bu BusinessUnitRecord) error
	// BusinessUnitGetRecord returns the business unit with its roles and Version, or ErrNotFound.
	BusinessUnitGetRecord(ctx context.Context, id string) (BusinessUnitRecord, error)
	// BusinessUnitUpdate replaces name, zones and roles of bu.ID when its Version is
	// expectedVersion and returns the stored record (Version+1). ErrNotFound for an unknown
	// id; ErrLeaseLost when the Version moved on.
	BusinessUnitUpdate(ctx context.Context, bu BusinessUnitRecord, expectedVersion int64) (BusinessUnitRecord, error)
	// BusinessUnitList pages business units.
	BusinessUnitList(ctx context.Context, p BusinessUnitListParams) ([]BusinessUnitRecord, error)

	// ReminderSettingInsert stores a new setting; ErrConflict if the guid exists.
	ReminderSettingInsert(ctx context.Context, s ReminderSettingRecord) error
	// ReminderSettingUpdate replaces the setting s.Guid when its Version is expectedVersion;
	// the stored Version becomes s.Version (expectedVersion+1). ErrNotFound, ErrLeaseLost.
	ReminderSettingUpdate(ctx context.Context, s ReminderSettingRecord, expectedVersion int64) error
	// ReminderSettingList pages settings.
	ReminderSettingList(ctx context.Context, p ReminderSettingListParams) ([]ReminderSettingRecord, error)
	// ReminderSettingListPairs pages the (business unit, source type) pairs with an active
	// setting, by business unit then source type, after the given pair.
	ReminderSettingListPairs(ctx context.Context, after SettingSourcePair, limit int) ([]SettingSourcePair, error)

	// SourceSnapshotList pages snapshots of one business unit and entity type.
	SourceSnapshotList(ctx context.Context, p SourceSnapshotListParams) ([]SourceSnapshot, error)

	// SchedulerListBySetting pages the Pending/Failed rows of one setting.
	SchedulerListBySetting(ctx context.Context, p SchedulerListBySettingParams) ([]automation.SchedulerRow, error)
	// SchedulerListFuturePending pages Pending rows due after Now.
	SchedulerListFuturePending(ctx context.Context, p SchedulerListFuturePendingParams) ([]automation.SchedulerRow, error)

	// ThresholdEdgeApply records the condition of one level at a source revision and returns
	// the state after it, in one transaction: no state yet → stored with EdgeCount 1 if met
	// (0 if not); a newer revision → a false→true change adds one edge, any change stores
	// IsMet; the same or an older revision (redelivery, out of order) → nothing changes and
	// the stored state is returned.
	ThresholdEdgeApply(ctx context.Context, p ThresholdEdgeApplyParams) (ThresholdEdge, error)
	// ThresholdEdgeGet returns the stored state of one level, or ErrNotFound.
	ThresholdEdgeGet(ctx context.Context, settingGuid, sourceType, sourceGuid, level string) (ThresholdEdge, error)

	// ReconcileStateGet returns the state of one sweep, or ErrNotFound.
	ReconcileStateGet(ctx context.Context, sweepKey string) (ReconcileState, error)
	// ReconcileStateSave stores st: inserted when st.Version is 0 (ErrLeaseLost if it exists
	// by then), else updated when the stored Version is still st.Version (ErrLeaseLost
	// otherwise). It returns the stored state (Version+1).
	ReconcileStateSave(ctx context.Context, st ReconcileState) (ReconcileState, error)
	// ReconcileStateRequest asks for a new pass of the sweep (Generation+1, cursor and
	// pass high-water mark cleared; created when missing).
	ReconcileStateRequest(ctx context.Context, sweepKey string, now time.Time) error
	// ReconcileStateListRequested pages sweeps whose key starts with prefix and that owe a
	// pass (Generation > DoneGeneration), oldest request first.
	ReconcileStateListRequested(ctx context.Context, prefix string, limit int) ([]ReconcileState, error)
}
