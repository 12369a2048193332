package store

import (
	"context"
	"time"
)

// EventRegistryEntry is one stored version of an event type's registry definition
// (docs/gateway.md#the-registry). Every version is kept.
type EventRegistryEntry struct {
	EventType      string
	Version        int64 // 1, 2, … per event type
	Seq            int64 // global, increasing with every save: the registry version in force is the highest
	DefinitionJSON string
	Operator       string // who saved it
	CreatedOn      time.Time
}

// EventRegistrySaveParams saves a new version of EventType. ExpectedVersion is the version
// the caller read (0: the type must not exist yet). Errors: ErrConflict when ExpectedVersion
// is 0 and the type exists; ErrLeaseLost when the latest version is not ExpectedVersion
// (also when it changed between the caller's read and this write).
type EventRegistrySaveParams struct {
	EventType       string
	ExpectedVersion int64
	DefinitionJSON  string
	Operator        string
	Now             time.Time
}

// EventRegistryGetParams reads one version of EventType; Version 0 = the latest.
type EventRegistryGetParams struct {
	EventType string
	Version   int64
}

// GatewayEvent is one event the gateway accepts: its ledger row (Source, ID) and the outbox
// rows of its routes, written in one transaction (docs/gateway.md#ingest).
type GatewayEvent struct {
	Source          string
	ID              string
	Type            string
	BusinessUnitID  string
	CustomerID      string
	RegistryVersion int64  // the definition's version the event was routed by
	Routes          string // comma-separated, for support
	Outbox          []OutboxMessage
}

// GatewayEventAcceptParams accepts up to MaxBatch events at Now.
type GatewayEventAcceptParams struct {
	Now    time.Time
	Events []GatewayEvent
}

// GatewayAcceptOutcome is what became of one event of GatewayEventAccept.
type GatewayAcceptOutcome string

// Outcomes of GatewayEventAccept.
const (
	GatewayAccepted  GatewayAcceptOutcome = "Accepted"
	GatewayDuplicate GatewayAcceptOutcome = "Duplicate" // (Source, ID) was accepted before: nothing written
	// GatewayMessageIDTaken: an outbox MessageId of the event already exists (another
	// source used the same event id): nothing written for this event.
	GatewayMessageIDTaken GatewayAcceptOutcome = "MessageIdTaken"
)

// OutboxLag is the unpublished backlog of one destination at Now.
type OutboxLag struct {
	Destination string
	Unpublished int
	OldestOn    *time.Time // the oldest unpublished row's CreatedOn; nil when none
}

// GatewayStore holds the event registry and the gateway's (source, id) ledger.
type GatewayStore interface {
	// EventRegistrySave stores a new version (see EventRegistrySaveParams for errors).
	EventRegistrySave(ctx context.Context, p EventRegistrySaveParams) (EventRegistryEntry, error)
	// EventRegistryGet returns one version, or ErrNotFound.
	EventRegistryGet(ctx context.Context, p EventRegistryGetParams) (EventRegistryEntry, error)
	// EventRegistryListLatest returns the latest version of every event type, by type.
	EventRegistryListLatest(ctx context.Context) ([]EventRegistryEntry, error)
	// EventRegistryListVersions returns every version of one type, oldest first (empty
	// when the type is unknown).
	EventRegistryListVersions(ctx context.Context, eventType string) ([]EventRegistryEntry, error)
	// EventRegistryStamp returns the highest Seq (0 for an empty registry): one index seek,
	// polled by the hot reload.
	EventRegistryStamp(ctx context.Context) (int64, error)
	// GatewayEventAccept writes, for each event in order and all in one transaction, its
	// ledger row and its outbox rows, or nothing for a duplicate (Source, ID) or a taken
	// MessageId; one outcome per event. The caller answers only after it returned.
	GatewayEventAccept(ctx context.Context, p GatewayEventAcceptParams) ([]GatewayAcceptOutcome, error)
	// OutboxLagGet returns the unpublished backlog of each destination (platform-wide).
	OutboxLagGet(ctx context.Context, destinations []string) ([]OutboxLag, error)
	// BusinessUnitGet returns ErrNotFound for an unknown id: ingest refuses an event of a
	// unit that does not exist (the attribute engine would dead-letter it).
	BusinessUnitGet(ctx context.Context, id string) (BusinessUnit, error)
	NotificationEnqueuer
}

// NotificationEnqueueParams writes immediate deliveries (NotificationJob rows, an existing
// DeliveryKey left alone) and their dispatch outbox messages (an existing MessageId left
// alone) in one transaction: the noti route's user messages (docs/gateway.md#noti).
type NotificationEnqueueParams struct {
	Now        time.Time
	Deliveries []NotificationRequest
	Outbox     []OutboxMessage
}

// NotificationEnqueuer writes immediate deliveries.
type NotificationEnqueuer interface {
	NotificationEnqueue(ctx context.Context, p NotificationEnqueueParams) error
}
