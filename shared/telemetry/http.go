package telemetry

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// HTTPMiddleware wraps h with an OTel server span per request (otelhttp: HTTP semantic
// conventions, the http.server.request.duration metric), its parent the request's W3C
// traceparent header. The span is named "{method} {route}", the route being the path's
// first two segments ("/api/events"), so an id in a path never becomes a span name. With
// telemetry off (p nil or zero) h is returned as it is: nothing is added to a request.
func (p *Providers) HTTPMiddleware(h http.Handler) http.Handler {
	if p == nil || (p.tp == nil && p.mp == nil) {
		return h
	}
	return otelhttp.NewHandler(h, "http.server",
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + Route(r.URL.Path) }))
}

// HTTPTransport wraps rt (nil: http.DefaultTransport) with an OTel client span per request
// and the traceparent header on it (the provider and billing calls). With telemetry off
// rt is returned as it is.
func (p *Providers) HTTPTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if p == nil || (p.tp == nil && p.mp == nil) {
		return rt
	}
	return otelhttp.NewTransport(rt, otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + Route(r.URL.Path) }))
}

// Route is the first two segments of path ("/api/events/abc" → "/api/events"): the
// low-cardinality name of an HTTP span.
func Route(path string) string {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return "/" + strings.Join(parts, "/")
}
