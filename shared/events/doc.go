// Package events parses domain events - CloudEvents 1.0 in structured JSON mode
// (docs/architecture.md#inputs) - into a typed Event, and routes them to the handlers registered
// for their entity type (a registry, never one giant switch).
package events
