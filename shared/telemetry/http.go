package telemetry

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// HTTPMiddleware wraps h with an OTel server span per request (otelhttp: HTTP semantic
// conventions, the http.server.request.duration metric), its parent the request's W3C
// traceparent header. The span is named "{method} {route}", the route being the path's
// first two segments ("/api/events"), so an id in a path never becomes a span name; its
// url.path attribute is that route too, never the whole path (which names recipients,
// customers and device tokens). With
// telemetry off (p nil or zero) h is returned as it is: nothing is added to a request.
func (p *Providers) HTTPMiddleware(h http.Handler) http.Handler {
	if p == nil || (p.tp == nil && p.mp == nil) {
		return h
	}
	// otelhttp records the request's URL.Path as url.path at the span's start. The product's
	// paths carry recipient ids (e-mail addresses, phone numbers), customer ids and push device
	// tokens, which no span may hold (docs/operations.md#spans), so otelhttp is handed the
	// request with its path cut to the route, and the whole URL is put back before the
	// handler runs.
	inner := otelhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, ok := r.Context().Value(fullURLKey{}).(*url.URL); ok {
			r.URL = u // r is otelhttp's own copy: the ServeMux sets its Pattern for the span
		}
		h.ServeHTTP(w, r)
	}), "http.server",
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + Route(r.URL.Path) }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cut := *r.URL
		cut.Path, cut.RawPath = Route(r.URL.Path), ""
		r2 := r.WithContext(context.WithValue(r.Context(), fullURLKey{}, r.URL))
		r2.URL = &cut
		// As otelhttp does for its copy: net/http removes the temporary files of the form
		// the original request names.
		defer func() {
			if r2.MultipartForm != nil {
				r.MultipartForm = r2.MultipartForm
			}
		}()
		inner.ServeHTTP(w, r2)
	})
}

// fullURLKey carries a request's whole URL past otelhttp (HTTPMiddleware).
type fullURLKey struct{}

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
