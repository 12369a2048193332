// Package gateway is the event gateway (docs/gateway.md): one front door that checks every
// inbound event against a versioned registry, classifies it and routes it through the
// outbox. It never calculates rules: counter events leave with their instructions (the fat
// payload of docs/gateway.md#fat-payload) for the attribute engine, direct events for the
// rule engine, notification events for our own delivery stage, and source events for the
// reminder path's trigger providers.
//
// The registry (Definition, Document) holds one versioned definition per event type: its
// class, routes, a JSON Schema (draft 2020-12) for data, filter conditions, counter
// instructions (validated when saved: CheckDefinition, which also runs the attribute engine's
// own check, attribute.CheckInstruction) and, for notifications, the template
// and channels. Registry is the compiled set in force; Cache reloads it from the store when
// its version moves (hot reload, bounded by Cache.Interval).
//
// An event's state machine:
//
//	received ──► rejected        (unregistered type, schema violation, missing id/source/type/
//	   │                           customer id, data over MaxDataBytes, a business unit that
//	   │                           does not exist or is outside the caller's scope, a time more
//	   │                           than attribute.MaxFutureSkew ahead, a control character in
//	   │                           the id, a number out of range (numbers.go), or a check that
//	   │                           panicked: nothing stored or routed, the rest of the request
//	   │                           goes on)
//	   ├──────► duplicate        ((source, id) already accepted: nothing new written)
//	   └──────► accepted ──► routed per route
//	              (one SQL transaction: the GatewayEvent ledger row (source, id) and one outbox
//	               row per route, MessageId "{eventId}:{route}", SessionId = customer or entity
//	               id; the relay publishes each row once the transaction committed, so an
//	               accepted event is never lost and a route is published at least once and
//	               de-duplicated by MessageId)
//
// A filtered event (its filter conditions say "not for us") is accepted with no routes: its
// id is remembered, nothing is published.
//
// Per-key state is bounded: Metrics holds at most MaxMetricKeys (unit, type, status) keys,
// labelled only by units that exist and are in scope; an Ingest call's memo of business
// units holds at most a batch's units; the Registry one definition (and at most one
// left-out reason) per stored type. Metrics' counts not yet persisted have the same bound;
// the metrics sampler drains them once a minute into MetricsCount (Metrics.DrainCounts), so
// the console's ingest chart survives restarts without a write on the ingest path.
package gateway
