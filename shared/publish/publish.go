package publish

import (
	"context"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/topology"
)

// Event validates raw with events.Parse and publishes it. It returns the parsed event; a
// validation error is automation.Invalid and nothing is sent.
func Event(ctx context.Context, p bus.Publisher, raw []byte) (events.Event, error) {
	ev, err := events.Parse(raw)
	if err != nil {
		return ev, err
	}
	return ev, p.Publish(ctx, Message(ev, raw))
}

// Message is the bus message for a parsed event (raw is the event as received). Its
// MessageId is events.Identity(ev.Source, ev.ID) ("ev-" and 40 hex digits): with the id
// alone, duplicate detection on the topic silently dropped a second producer's event of
// the same id, and the id's own characters reached the broker.
func Message(ev events.Event, raw []byte) bus.Message {
	return bus.Message{ID: events.Identity(ev.Source, ev.ID), Destination: topology.DomainEventsTopic, SessionID: ev.EntityGuid, Body: raw}
}
