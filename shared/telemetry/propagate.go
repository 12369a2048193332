package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The carrier names of trace context on the hops the product owns.
const (
	// HeaderTraceParent and HeaderTraceState are W3C Trace Context's names: the HTTP
	// headers, the CloudEvents distributed-tracing extension attributes and the bus
	// messages' application properties.
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
	// PropertyDiagnosticID is the application property the Azure Service Bus SDKs read and
	// write for the same traceparent value (Azure SDK distributed tracing conventions).
	PropertyDiagnosticID = "Diagnostic-Id"
)

// w3c is the propagator of every hop: W3C Trace Context, whatever the globals hold (the
// product's own carriers are always W3C; the global one is for libraries).
var w3c = propagation.TraceContext{}

// mapCarrier is a propagation.TextMapCarrier over two strings.
type pair struct{ parent, state string }

func (p *pair) Get(k string) string {
	switch k {
	case HeaderTraceParent:
		return p.parent
	case HeaderTraceState:
		return p.state
	}
	return ""
}

func (p *pair) Set(k, v string) {
	switch k {
	case HeaderTraceParent:
		p.parent = v
	case HeaderTraceState:
		p.state = v
	}
}

func (p *pair) Keys() []string { return []string{HeaderTraceParent, HeaderTraceState} }

// Inject returns the traceparent and tracestate of the span in ctx ("" and "" when ctx has
// no valid span context: telemetry off, or nothing traced).
func Inject(ctx context.Context) (traceparent, tracestate string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	var p pair
	w3c.Inject(ctx, &p)
	return p.parent, p.state
}

// Extract returns ctx with the remote span context traceparent/tracestate name as its
// parent. A malformed or empty traceparent leaves ctx as it is (a bad header never fails a
// request or a message).
func Extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return w3c.Extract(ctx, &pair{parent: traceparent, state: tracestate})
}

// SpanContext returns the span context traceparent/tracestate name (invalid when malformed
// or empty): the link of one message of a batch.
func SpanContext(traceparent, tracestate string) trace.SpanContext {
	return trace.SpanContextFromContext(Extract(context.Background(), traceparent, tracestate))
}

// FromProperties reads the trace context of a bus message's application properties:
// traceparent, else Diagnostic-Id (set by Azure SDK producers), and tracestate. Values that
// are not strings are ignored.
func FromProperties(props map[string]any) (traceparent, tracestate string) {
	str := func(k string) string { s, _ := props[k].(string); return s }
	traceparent = str(HeaderTraceParent)
	if traceparent == "" {
		traceparent = str(PropertyDiagnosticID)
	}
	return traceparent, str(HeaderTraceState)
}

// Properties returns the application properties that carry traceparent/tracestate on a bus
// message (traceparent, Diagnostic-Id, tracestate when set); nil when traceparent is empty.
func Properties(traceparent, tracestate string) map[string]any {
	if traceparent == "" {
		return nil
	}
	m := map[string]any{HeaderTraceParent: traceparent, PropertyDiagnosticID: traceparent}
	if tracestate != "" {
		m[HeaderTraceState] = tracestate
	}
	return m
}
