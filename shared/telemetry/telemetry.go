package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// InstrumentationName names the tracer and meter of the product's own spans and metrics.
const InstrumentationName = "github.com/automation-platform/automation"

// Sampler names, as OTEL_TRACES_SAMPLER spells them.
const (
	SamplerAlwaysOn                = "always_on"
	SamplerAlwaysOff               = "always_off"
	SamplerTraceIDRatio            = "traceidratio"
	SamplerParentBasedAlwaysOn     = "parentbased_always_on"
	SamplerParentBasedAlwaysOff    = "parentbased_always_off"
	SamplerParentBasedTraceIDRatio = "parentbased_traceidratio"
)

// Options configure Setup. The zero value sets nothing up (telemetry off).
type Options struct {
	// Disabled (OTEL_SDK_DISABLED=true) turns everything off, whatever else is set.
	Disabled bool
	// Endpoint is the OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT), e.g.
	// http://127.0.0.1:4318; traces go to {Endpoint}/v1/traces and metrics to
	// {Endpoint}/v1/metrics. Empty: no OTLP export.
	Endpoint string
	// Headers are sent with every export (OTEL_EXPORTER_OTLP_HEADERS), e.g. an API key.
	Headers map[string]string
	// ServiceName is the service.name resource attribute (OTEL_SERVICE_NAME).
	ServiceName string
	// ResourceAttributes are further resource attributes (OTEL_RESOURCE_ATTRIBUTES).
	ResourceAttributes map[string]string
	// Sampler is one of the Sampler* names; Ratio its argument, 0..1 (OTEL_TRACES_SAMPLER_ARG).
	Sampler string
	Ratio   float64
	// MetricsOTLP exports metrics over OTLP (OTEL_METRICS_EXPORTER has otlp; needs Endpoint);
	// MetricsPrometheus serves them on /metrics (OTEL_METRICS_EXPORTER has prometheus).
	MetricsOTLP       bool
	MetricsPrometheus bool
	// MetricInterval is the OTLP metric export interval (OTEL_METRIC_EXPORT_INTERVAL);
	// 0 means 60 s.
	MetricInterval time.Duration
}

// Tracing reports whether o exports traces.
func (o Options) Tracing() bool { return !o.Disabled && o.Endpoint != "" }

// Metrics reports whether o records metrics.
func (o Options) Metrics() bool {
	return !o.Disabled && ((o.MetricsOTLP && o.Endpoint != "") || o.MetricsPrometheus)
}

// Providers is what Setup installed. Its zero value (telemetry off) is valid: Shutdown does
// nothing and Prometheus is nil.
type Providers struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
	// Prometheus serves the Prometheus text format of the metrics (nil unless
	// Options.MetricsPrometheus); the composition root mounts it on /metrics behind a guard.
	Prometheus http.Handler
	// Registry is the Prometheus registry Prometheus serves (nil with it).
	Registry *prometheus.Registry
}

// Setup builds the providers o asks for and installs them as the OTel globals, with the W3C
// trace-context propagator. With o off it installs nothing and returns a zero Providers.
// Errors: an exporter that cannot be built (a malformed endpoint), naming the setting.
func Setup(ctx context.Context, o Options) (*Providers, error) {
	p := &Providers{}
	if o.Disabled || (!o.Tracing() && !o.Metrics()) {
		return p, nil
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	enabled.Store(o.Tracing())
	name := o.ServiceName
	if name == "" {
		name = "automation"
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	for k, v := range o.ResourceAttributes {
		if k != string(semconv.ServiceNameKey) {
			attrs = append(attrs, attribute.String(k, v))
		}
	}
	res := resource.NewSchemaless(attrs...)
	if o.Tracing() {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(o.Endpoint, "/")+"/v1/traces"),
			otlptracehttp.WithHeaders(o.Headers))
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: traces exporter: %w", err)
		}
		p.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(Sampler(o.Sampler, o.Ratio)))
		otel.SetTracerProvider(p.tp)
		t := p.tp.Tracer(InstrumentationName)
		tracer.Store(&t)
		followsParent.Store(ParentBased(o.Sampler))
	}
	if o.Metrics() {
		mopts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithView(Views()...)}
		if o.MetricsOTLP && o.Endpoint != "" {
			exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(strings.TrimRight(o.Endpoint, "/")+"/v1/metrics"),
				otlpmetrichttp.WithHeaders(o.Headers))
			if err != nil {
				return nil, errors.Join(p.Shutdown(ctx), fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: metrics exporter: %w", err))
			}
			iv := o.MetricInterval
			if iv <= 0 {
				iv = time.Minute
			}
			mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(iv))))
		}
		if o.MetricsPrometheus {
			reg := prometheus.NewRegistry()
			exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
			if err != nil {
				return nil, errors.Join(p.Shutdown(ctx), fmt.Errorf("OTEL_METRICS_EXPORTER prometheus: %w", err))
			}
			mopts = append(mopts, sdkmetric.WithReader(exp))
			p.Registry = reg
			p.Prometheus = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		}
		p.mp = sdkmetric.NewMeterProvider(mopts...)
		otel.SetMeterProvider(p.mp)
		current.Store(newInstruments(p.mp.Meter(InstrumentationName)))
	}
	return p, nil
}

// ParentBased reports whether the sampler named name (as Sampler reads it) follows a
// parent's decision: the parentbased_* samplers, and an empty or unknown name. Under them
// the child of a parent that was not sampled is never sampled (the SDK's ParentBased
// defaults), so Start need not ask the SDK.
func ParentBased(name string) bool {
	switch name {
	case SamplerAlwaysOn, SamplerAlwaysOff, SamplerTraceIDRatio:
		return false
	}
	return true
}

// Sampler returns the sampler named as OTEL_TRACES_SAMPLER names it (ratio is its
// argument, clamped to 0..1); an empty or unknown name is parentbased_traceidratio.
func Sampler(name string, ratio float64) sdktrace.Sampler {
	ratio = min(max(ratio, 0), 1)
	switch name {
	case SamplerAlwaysOn:
		return sdktrace.AlwaysSample()
	case SamplerAlwaysOff:
		return sdktrace.NeverSample()
	case SamplerTraceIDRatio:
		return sdktrace.TraceIDRatioBased(ratio)
	case SamplerParentBasedAlwaysOn:
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	case SamplerParentBasedAlwaysOff:
		return sdktrace.ParentBased(sdktrace.NeverSample())
	default:
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
	}
}

// Shutdown flushes what is buffered and stops the exporters (the spans of the last
// seconds are exported here, so a process calls it before it exits). Safe on a zero
// Providers and more than once.
func (p *Providers) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	if p.tp != nil {
		errs = append(errs, p.tp.Shutdown(ctx))
		if otel.GetTracerProvider() == trace.TracerProvider(p.tp) {
			otel.SetTracerProvider(tracenoop.NewTracerProvider())
			enabled.Store(false)
			tracer.Store(nil)
			followsParent.Store(false)
		}
		p.tp = nil
	}
	if p.mp != nil {
		errs = append(errs, p.mp.Shutdown(ctx))
		if otel.GetMeterProvider() == metric.MeterProvider(p.mp) {
			otel.SetMeterProvider(metricnoop.NewMeterProvider())
			current.Store(nil)
		}
		p.mp = nil
	}
	return errors.Join(errs...)
}

// ForceFlush exports the spans and metrics buffered so far (tests; a Functions invocation
// that must not lose its spans). Safe on a zero Providers.
func (p *Providers) ForceFlush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	if p.tp != nil {
		errs = append(errs, p.tp.ForceFlush(ctx))
	}
	if p.mp != nil {
		errs = append(errs, p.mp.ForceFlush(ctx))
	}
	return errors.Join(errs...)
}

// noSpan is the no-op span Start returns with telemetry off.
var noSpan = trace.SpanFromContext(context.Background())

// NoSpan returns the no-op span (what Start returns with telemetry off): for a caller that
// starts its span only on some paths and ends it on all.
func NoSpan() trace.Span { return noSpan }

// enabled is set by a Setup that installed a tracer provider (Enabled).
var enabled atomic.Bool

// Enabled reports whether a Setup in this process installed a tracer provider: code that
// would do work only to find a parent (parse a message's properties) asks first, so that
// telemetry off costs nothing.
func Enabled() bool { return enabled.Load() }

// tracer is the product's tracer of the provider the last Setup installed (nil: none), kept
// so that a span does not look its tracer up in the provider (a lock and a map) each time.
var tracer atomic.Pointer[trace.Tracer]

// followsParent is set by a Setup whose sampler is parent-based (ParentBased).
var followsParent atomic.Bool

// Tracer is the product's tracer (the provider Setup installed; else the global
// provider's, a no-op until Setup).
func Tracer() trace.Tracer {
	if t := tracer.Load(); t != nil {
		return *t
	}
	return otel.Tracer(InstrumentationName)
}

// unsampledParent reports whether ctx's span is a parent whose children are not sampled:
// valid, not sampled, and the sampler parent-based. Such a child records nothing, so Start
// returns no span for it and ctx as it is: what the child writes to an outbox row or a
// message is the parent's traceparent, which carries the same trace id and the same
// "not sampled" flag (W3C Trace Context), so every hop after it decides alike. Only the
// span id differs from a span the SDK would have made, and an unsampled span id is never
// exported.
func unsampledParent(ctx context.Context) bool {
	if !followsParent.Load() {
		return false
	}
	sc := trace.SpanContextFromContext(ctx)
	return sc.IsValid() && !sc.IsSampled()
}

// Meter is the product's meter (the global provider's; a no-op until Setup).
func Meter() metric.Meter { return otel.Meter(InstrumentationName) }

// Start starts a span named name as a child of the span in ctx, of kind kind (internal
// when 0). Attributes are best set after `if span.IsRecording()`, so that an unsampled or
// disabled trace builds none.
func Start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if !enabled.Load() || unsampledParent(ctx) {
		return ctx, noSpan // telemetry off, or not sampled: no context, no span, no allocation
	}
	return Tracer().Start(ctx, name, kindOptions(kind)...)
}

// StartLinked is Start for an internal span linked to link (when valid): the row the poll
// claimed, run in the trace of the transaction that created it, linked to the poll.
func StartLinked(ctx context.Context, name string, link trace.SpanContext) (context.Context, trace.Span) {
	if !enabled.Load() || unsampledParent(ctx) {
		return ctx, noSpan
	}
	if !link.IsValid() {
		return Tracer().Start(ctx, name, kindOptions(trace.SpanKindInternal)...)
	}
	return Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithLinks(trace.Link{SpanContext: link}))
}

// StartRoot starts an internal span named name that begins a trace of its own, whatever
// span ctx holds (ctx's values and cancellation are kept): work done at once for several
// traces, which belongs to none of them. Its caller links it to each with span.AddLink
// (OpenTelemetry's links, the specification's answer for a batch with many parents: the
// dispatcher's group commit, docs/operations.md#spans). A new root is sampled by the
// sampler's ratio. Telemetry off: ctx and the no-op span.
func StartRoot(ctx context.Context, name string) (context.Context, trace.Span) {
	if !enabled.Load() {
		return ctx, noSpan
	}
	return Tracer().Start(ctx, name, rootOptions...)
}

// rootOptions are StartRoot's start options, built once.
var rootOptions = []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal)}

// kindOptions returns the start options of a span of kind: built once per kind and passed
// with "...", so starting a span allocates no option and no variadic slice for them.
func kindOptions(kind trace.SpanKind) []trace.SpanStartOption {
	if kind == trace.SpanKindUnspecified {
		kind = trace.SpanKindInternal
	}
	if int(kind) < len(spanKinds) {
		return spanKinds[kind]
	}
	return []trace.SpanStartOption{trace.WithSpanKind(kind)}
}

var spanKinds = func() (o [trace.SpanKindConsumer + 1][]trace.SpanStartOption) {
	for k := range o {
		o[k] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKind(k))}
	}
	return o
}()

// End records err on span (status Error and an exception event; code, when not empty, as
// automation.error_code: the caller's automation.CodeOf, as this package imports no project
// package) and ends it. A nil err ends it unset.
func End(span trace.Span, err error, code string) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codesError, err.Error())
		if code != "" {
			span.SetAttributes(ErrorCode.String(code))
		}
	}
	span.End()
}
