// Package telemetry sets up OpenTelemetry for one process and carries trace context across
// the hops the product owns (docs/observability.md, docs/operations.md#telemetry).
//
// Setup builds the tracer and meter providers from Options (filled by shared/config from the
// standard OTEL_* variables; nothing here reads the environment) and installs them as the
// OTel globals, which is how the OTel API hands a provider to instrumented code: every
// package starts its spans with Start and its instruments with Meter, and they stay no-ops
// (a non-recording span, no allocation for attributes guarded by span.IsRecording) until
// Setup installs an SDK. With no exporter configured Setup installs nothing: telemetry off
// costs a no-op call per stage.
//
// Sampling: parent-based around a trace-id ratio by default (OTEL_TRACES_SAMPLER
// parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG the ratio): a message whose traceparent
// says "sampled" is traced in every process it reaches, and a new trace is started for the
// given share of roots.
//
// Context crosses every hop as a W3C traceparent (and tracestate):
//
//	incoming HTTP            the traceparent header (HTTPMiddleware)
//	CloudEvents              the distributed-tracing extension attributes traceparent/tracestate
//	bus messages             the application properties traceparent, tracestate and
//	                         Diagnostic-Id (the Service Bus SDKs' name; it holds the same
//	                         traceparent value), bus.Message.TraceParent/TraceState
//	outbox rows              the TraceParent column, written from the context of the
//	                         transaction that wrote the row (Carrier at insert), so a publish
//	                         minutes later, by another process, still joins the trace
//
// Metrics: counters and histograms are recorded where the work happens (CountIngest,
// CountCommand, CountDueClaimed, CountDueOutcome, CountDelivery, RecordProviderCall,
// RecordPublish); levels are observable gauges (Providers.RegisterLevels) whose one callback
// reads a Levels through the composition root's reader — the support and campaign metrics'
// store queries, the JSON routes' own — at most once per TTL, since it runs on every export
// and scrape. Labels are enums of the product or configured names, never ids.
//
// The span names, attributes (automation.* and the OTel semantic conventions) and metrics are
// listed in docs/operations.md#telemetry.
package telemetry
