package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
)

// FactStore is what the Projector needs from SQL.
type FactStore interface {
	DeliveryFactApply(ctx context.Context, facts []store.DeliveryFact, now time.Time) (store.DeliveryFactApplyResult, error)
}

// Projector keeps the reporting projection of delivery facts (docs/architecture.md#facts): the highest revision per
// command, so a fact delivered twice, replayed later or out of order never double-counts.
type Projector struct {
	Store FactStore
	Clock automation.Clock
}

// DecodeFact decodes a fact message body strictly (unknown fields rejected) and checks the
// fields the projection needs.
func DecodeFact(body []byte) (store.DeliveryFact, error) {
	var f store.DeliveryFact
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("delivery fact: %w", err)
	}
	if dec.More() {
		return f, fmt.Errorf("delivery fact: trailing data")
	}
	if f.EventID == "" || f.CommandID == "" || f.BusinessUnitID == "" || f.Status == "" || f.Revision <= 0 || f.OccurredOn.IsZero() {
		return f, fmt.Errorf("delivery fact %q: eventId, commandId, businessUnitId, status, revision > 0 and occurredOn are required", f.EventID)
	}
	if f.EventID != store.FactEventID(f.CommandID, f.Revision) {
		return f, fmt.Errorf("delivery fact %q: eventId must be %q", f.EventID, store.FactEventID(f.CommandID, f.Revision))
	}
	return f, nil
}

// Handle is the bus handler of topology.DeliveryFactsTopic: a malformed fact is dead-lettered,
// a store failure is retried (applying a fact twice is harmless).
func (p *Projector) Handle(ctx context.Context, m bus.Message) error {
	f, err := DecodeFact(m.Body)
	if err != nil {
		return automation.Permanent(fmt.Errorf("message %s: %w", m.ID, err))
	}
	_, err = p.Store.DeliveryFactApply(ctx, []store.DeliveryFact{f}, p.Clock.Now())
	return err
}
