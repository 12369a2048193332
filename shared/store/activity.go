package store

import (
	"context"
	"time"
)

// GatewayEventRecord is one accepted event's ledger row (GatewayEvent): which event, of
// whom, routed by which registry version, accepted when (UTC).
type GatewayEventRecord struct {
	Source, ID, Type string
	BusinessUnitID   string
	CustomerID       string
	RegistryVersion  int64
	Routes           string
	AcceptedOn       time.Time
}

// GatewayEventListParams lists a customer's accepted events newest first, below the cursor
// (BeforeOn, BeforeEventID): zero BeforeOn starts at the newest. At most Limit (1..MaxBatch).
type GatewayEventListParams struct {
	BusinessUnitID, CustomerID string
	BeforeOn                   time.Time
	BeforeEventID              string
	Limit                      int
}

// RecipientActivityStore is what a recipient's activity feed reads besides the inbox, the
// attributes and the campaign executions (docs/console.md#recipient-activity).
type RecipientActivityStore interface {
	// GatewayEventListByCustomer returns a customer's accepted events (see the params).
	GatewayEventListByCustomer(ctx context.Context, p GatewayEventListParams) ([]GatewayEventRecord, error)
}

// TemplateListStore lists notification templates for the console (docs/console.md#templates).
type TemplateListStore interface {
	// NotificationTemplateList returns the latest version of every key of the business
	// unit's overrides and of the platform defaults (BusinessUnitID ""), by key after
	// afterKey, the default before the override, at most limit rows, with Kind, Extra and
	// Deleted. A key whose latest version is a tombstone (Deleted) is left out: that unit
	// sends the default again, which is listed.
	NotificationTemplateList(ctx context.Context, businessUnitID, afterKey string, limit int) ([]NotificationTemplate, error)
	// NotificationTemplateVersions returns up to limit versions of key for the business unit
	// ("" = the default), newest first, tombstones included (Deleted: who deleted it, when).
	NotificationTemplateVersions(ctx context.Context, key, businessUnitID string, limit int) ([]NotificationTemplate, error)
}
