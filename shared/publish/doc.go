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
