package store

import (
	"context"
	"time"
)

// AttributeEntity names one entity of a business unit whose attributes the attribute engine
// keeps (docs/attributes.md#store): a customer, a card, an item.
type AttributeEntity struct {
	BusinessUnitID string
	EntityType     string // CUSTOMER, ITEM, … (upper case)
	EntityID       string
}

// AttributeRow is one attribute of one entity (the AttributeValue EAV row). ValueText is the
// value as text (an exact decimal, "true"/"false", an RFC 3339 UTC instant, a JSON array of
// strings) of ValueType (number, boolean, instant, list); numbers are never floats. OrderKey
// is a fixed-width text that sorts like the number (the ranking index); "" for other types.
// Period is the calendar period the value belongs to and PeriodRule how it was computed.
type AttributeRow struct {
	AttributeEntity
	AttributeCode string
	ValueType     string
	ValueText     string
	OrderKey      string
	Period        string
	PeriodRule    string
	LastEventOn   time.Time // the latest event applied (UTC)
	UpdatedOn     time.Time
	Version       int64 // 1, 2, …; 0 in a write means "no row was read: insert"
}

// AttributeDelta is one increment of a hot counter (docs/attributes.md#hot-counters), in
// micro-units (1 = 0.000001) so that sums are exact integers.
type AttributeDelta struct {
	AttributeEntity
	AttributeCode string
	Micros        int64
	EventID       string
}

// AttributeDecision is what the engine writes for one event once it has seen the rows: rows
// (each guarded by the Version it read; 0 inserts), hot-counter deltas and outbox messages
// (triggers; an existing MessageId is left alone).
type AttributeDecision struct {
	Rows   []AttributeRow
	Deltas []AttributeDelta
	Outbox []OutboxMessage
}

// AttributeApplyParams applies one event to its entities in one transaction: each entity's
// (business unit, type, id, EventID) is recorded as processed, every entity's rows are loaded
// and Decide gets them (by entity, then attribute code) and returns the writes. Decide must be
// pure: it may run again when the transaction is retried.
type AttributeApplyParams struct {
	Now      time.Time
	EventID  string
	Entities []AttributeEntity
	Decide   func(rows map[AttributeEntity]map[string]AttributeRow) (AttributeDecision, error)
	// AfterWrite, when set, runs inside the transaction once the attribute rows and deltas
	// are written and before the outbox rows are: the step boundary between the attribute
	// update and its trigger events. A non-nil error rolls everything back and is returned
	// (the deterministic simulator's fault point, shared/sim; nil in production).
	AfterWrite func(ctx context.Context) error
}

// AttributeApplyOutcome is what became of an event.
type AttributeApplyOutcome string

// Outcomes of AttributeApply.
const (
	AttributeApplied   AttributeApplyOutcome = "Applied"
	AttributeDuplicate AttributeApplyOutcome = "Duplicate" // an entity had processed EventID: nothing written
)

// AttributeTopParams ranks the entities of one type by a number attribute, highest first.
type AttributeTopParams struct {
	BusinessUnitID string
	EntityType     string
	AttributeCode  string
	Limit          int // 1..MaxBatch
}

// AttributeFlushResult counts one flush batch: delta rows folded and counter rows written.
type AttributeFlushResult struct {
	Deltas   int
	Counters int
}

// AttributeStore is the attribute engine's EAV table, its processed-event ledger and the
// hot counters' delta table (docs/attributes.md#store).
type AttributeStore interface {
	// AttributeApply runs p in one transaction. Errors: Decide's error (nothing written);
	// ErrLeaseLost when a row's Version moved since it was read (or a row to insert exists):
	// nothing written, the caller runs it again; a store error.
	AttributeApply(ctx context.Context, p AttributeApplyParams) (AttributeApplyOutcome, error)
	// AttributeApplyBatch applies 1..MaxBatch events in order in one transaction, each as
	// AttributeApply would: an event sees the writes of the events before it, and an event
	// processed before (by the batch's earlier events too) is AttributeDuplicate with nothing
	// of it written. It returns each event's outcome at its place. Errors: the first event's
	// error (Decide's, ErrLeaseLost, an event whose later entity had processed it while its
	// first had not, a store error), naming its index; the whole batch is rolled back and
	// nothing is written, so the caller applies the events one at a time
	// (attribute.Service.HandleBatch).
	AttributeApplyBatch(ctx context.Context, ps []AttributeApplyParams) ([]AttributeApplyOutcome, error)
	// AttributeList returns every attribute row of one entity, by code.
	AttributeList(ctx context.Context, e AttributeEntity) ([]AttributeRow, error)
	// AttributeDeltaSums returns, by attribute code, the sum (micro-units) of one entity's
	// deltas not folded yet.
	AttributeDeltaSums(ctx context.Context, e AttributeEntity) (map[string]int64, error)
	// AttributeTop returns up to Limit rows of p's type and code, highest OrderKey first,
	// from the ranking index (no scan).
	AttributeTop(ctx context.Context, p AttributeTopParams) ([]AttributeRow, error)
	// AttributeFlushDeltas folds up to limit (1..MaxBatch) of the oldest deltas into their
	// counter rows in one transaction: each counter's row gets the sum added (Version+1; a
	// missing row is created as a LIFETIME number) and the folded delta rows are deleted.
	// fold gives the new value text and OrderKey from the old text ("" when no row) and the
	// sum. A crash before commit leaves the deltas to fold again; after it, they are gone
	// with their sum in the row: idempotent.
	AttributeFlushDeltas(ctx context.Context, now time.Time, limit int, fold func(oldText string, micros int64) (text, orderKey string, err error)) (AttributeFlushResult, error)
	// AttributeProcessedPurge deletes up to limit (1..MaxBatch) processed-event ledger rows
	// processed before before and returns how many it deleted. The caller picks before from
	// the dedupe window (docs/attributes.md#retention): an event id deleted is no longer
	// recognised as a duplicate.
	AttributeProcessedPurge(ctx context.Context, before time.Time, limit int) (int, error)
}
