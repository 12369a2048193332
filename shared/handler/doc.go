// Package handler holds the thin adapters between the Functions custom-handler protocol
// (funchost) and the services: decode the trigger, call one service, map its errors to the
// host's retry semantics (docs/architecture.md#functions). No business logic lives here.
//
// Error mapping: bad input that can never succeed (a malformed message, an invalid event)
// is recorded as a dead-letter diagnostics blob and completed (automation.Permanent → 200),
// so the host does not retry it forever; any other error returns non-2xx and the host
// redelivers (Service Bus dead-letters after MaxDeliveryCount).
package handler
