// Package eventsapi is the event gateway's HTTP front door (the EventIngest function,
// docs/gateway.md#ingest): POST /api/events takes one CloudEvent or a batch in any content
// mode of the CloudEvents HTTP binding and answers one result per event, after the commit;
// GET /api/events/metrics gives the gateway's counters. Thin: decode, one service, encode.
package eventsapi
