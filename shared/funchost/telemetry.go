package funchost

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/telemetry"
)

// invocationSpan starts the span of one invocation (docs/operations.md#spans): named after
// the function, kind consumer for a Service Bus trigger and server otherwise, with the faas
// semantic-convention attributes. Its parent, first found: the trace context of the one
// message (ApplicationProperties traceparent or Diagnostic-Id, as bus.Message carries it),
// else the invocation request's own traceparent header (the Functions host's). A batch's
// span links to the context of each of its messages; each message's own work is a child of
// that message's context (MessageContext). Telemetry off: ctx and a no-op span.
func invocationSpan(ctx context.Context, traceParent, traceState string, inv *Invocation) (context.Context, trace.Span) {
	if !telemetry.Enabled() {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span, never the caller's
	}
	md := inv.Request.Metadata
	kind := trace.SpanKindServer
	trigger := "other"
	var links []trace.Link
	parent := telemetry.Extract(ctx, traceParent, traceState)
	batch := 0
	if md[MetaMessageIDArray] != nil || md[MetaApplicationPropertiesArray] != nil {
		kind, trigger = trace.SpanKindConsumer, "pubsub"
		for _, p := range propertiesArray(md) {
			batch++
			if sc := telemetry.SpanContext(telemetry.FromProperties(p)); sc.IsValid() {
				links = append(links, trace.Link{SpanContext: sc})
			}
		}
	} else if p, ok := propertiesObject(md[MetaApplicationProperties]); ok || md[MetaMessageID] != nil {
		kind, trigger = trace.SpanKindConsumer, "pubsub"
		if tp, ts := telemetry.FromProperties(p); tp != "" {
			parent = telemetry.Extract(ctx, tp, ts)
		}
	} else if _, timer := inv.Request.Data["timer"]; timer {
		trigger = "timer"
	}
	ctx, span := telemetry.Tracer().Start(parent, inv.FunctionName, trace.WithSpanKind(kind), trace.WithLinks(links...))
	if !span.IsRecording() {
		return ctx, span // not sampled: no attributes built
	}
	attrs := []attribute.KeyValue{telemetry.FunctionName.String(inv.FunctionName), attribute.String("faas.trigger", trigger)}
	if inv.InvocationID != "" {
		attrs = append(attrs, attribute.String("faas.invocation_id", inv.InvocationID))
	}
	if trigger == "pubsub" {
		attrs = append(attrs, attribute.String("messaging.system", "servicebus"), attribute.String("messaging.operation.type", "process"))
		if batch > 0 {
			attrs = append(attrs, attribute.Int("messaging.batch.message_count", batch))
		} else if id, ok := jsonString(md[MetaMessageID]); ok {
			attrs = append(attrs, attribute.String("messaging.message.id", id))
		}
	}
	span.SetAttributes(attrs...)
	return ctx, span
}

// MessageContext returns ctx with m's trace context (its application properties) as the
// parent of what follows: the work of one message of a batch joins that message's trace.
// Telemetry off, or m untraced: ctx.
func MessageContext(ctx context.Context, m *ServiceBusMessage) context.Context {
	if m == nil || !telemetry.Enabled() {
		return ctx
	}
	tp, ts := telemetry.FromProperties(m.ApplicationProperties)
	return telemetry.Extract(ctx, tp, ts)
}

// propertiesObject reads a single message's ApplicationProperties: an object, or a JSON
// string holding one.
func propertiesObject(raw json.RawMessage) (map[string]any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	if s, ok := jsonString(raw); ok {
		raw = json.RawMessage(s)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// propertiesArray reads a batch's ApplicationPropertiesArray (else UserPropertiesArray): an
// array of objects, or a JSON string holding one. Malformed: nil (the decoder reports it).
func propertiesArray(md map[string]json.RawMessage) []map[string]any {
	for _, k := range []string{MetaApplicationPropertiesArray, MetaUserPropertiesArray} {
		raw := md[k]
		if len(raw) == 0 {
			continue
		}
		if s, ok := jsonString(raw); ok {
			raw = json.RawMessage(s)
		}
		var out []map[string]any
		if json.Unmarshal(raw, &out) == nil {
			return out
		}
	}
	return nil
}

// jsonString decodes raw as a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	// The host sends a scalar metadata value JSON-encoded inside a JSON string.
	var inner string
	if len(s) > 0 && s[0] == '"' && json.Unmarshal([]byte(s), &inner) == nil {
		return inner, true
	}
	return s, true
}
