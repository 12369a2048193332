// Package publish lets domain apps send their events to the automation pipeline: a
// CloudEvent (structured JSON, docs/architecture.md#inputs) validated here and published to the
// domain-events topic with MessageID = events.Identity(source, id) (Service Bus duplicate
// detection drops a re-sent event, and two producers may both send id "1": CloudEvents
// identifies an event by source + id, docs/gateway.md#event-identity) and SessionID =
// entity guid (per-entity ordering).
//
//	pub, err := azure.NewServiceBusPublisher(azure.ServiceBusOptions{Namespace: "...", Credential: cred})
//	ev, err := publish.Event(ctx, pub, raw)
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
