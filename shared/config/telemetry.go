package config

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// samplers are the OTEL_TRACES_SAMPLER values accepted (the OpenTelemetry SDK environment
// variable specification's names; jaeger and xray samplers are not supported).
var samplers = map[string]bool{"always_on": true, "always_off": true, "traceidratio": true,
	"parentbased_always_on": true, "parentbased_always_off": true, "parentbased_traceidratio": true}

// loadTelemetry reads the OTEL_* settings; each bad value is reported through bad.
func loadTelemetry(get func(string) string, bad func(name, f string, a ...any)) TelemetryConfig {
	t := TelemetryConfig{Endpoint: get("OTEL_EXPORTER_OTLP_ENDPOINT"), ServiceName: get("OTEL_SERVICE_NAME"),
		Sampler: strings.ToLower(get("OTEL_TRACES_SAMPLER")), MetricsToken: get("AUTOMATION_METRICS_TOKEN")}
	switch v := strings.ToLower(get("OTEL_SDK_DISABLED")); v {
	case "true", "false":
		t.Disabled = v == "true"
	default:
		bad("OTEL_SDK_DISABLED", "must be true or false, got %q", v)
	}
	if t.Endpoint != "" {
		if u, err := url.Parse(t.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("OTEL_EXPORTER_OTLP_ENDPOINT", "must be an http or https URL, got %s", shownURL(t.Endpoint))
		}
	}
	if !samplers[t.Sampler] {
		bad("OTEL_TRACES_SAMPLER", "must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, got %q", t.Sampler)
	}
	r, err := strconv.ParseFloat(get("OTEL_TRACES_SAMPLER_ARG"), 64)
	if err != nil || r < 0 || r > 1 {
		bad("OTEL_TRACES_SAMPLER_ARG", "must be a number from 0 to 1, got %q", get("OTEL_TRACES_SAMPLER_ARG"))
	}
	t.SamplerRatio = r
	for _, e := range strings.Split(strings.ToLower(get("OTEL_METRICS_EXPORTER")), ",") {
		switch strings.TrimSpace(e) {
		case "otlp":
			t.MetricsOTLP = true
		case "prometheus":
			t.MetricsPrometheus = true
		case "none", "":
		default:
			bad("OTEL_METRICS_EXPORTER", "must list otlp, prometheus or none, got %q", e)
		}
	}
	ms, err := strconv.Atoi(get("OTEL_METRIC_EXPORT_INTERVAL"))
	if err != nil || ms < 1000 || ms > 3_600_000 {
		bad("OTEL_METRIC_EXPORT_INTERVAL", "must be a whole number of milliseconds from 1000 to 3600000, got %q", get("OTEL_METRIC_EXPORT_INTERVAL"))
	}
	t.MetricInterval = time.Duration(ms) * time.Millisecond
	var ok bool
	if t.Headers, ok = keyValues(get("OTEL_EXPORTER_OTLP_HEADERS")); !ok {
		// Never the value: it holds keys.
		bad("OTEL_EXPORTER_OTLP_HEADERS", "must be key=value pairs separated by commas")
	}
	if t.ResourceAttributes, ok = keyValues(get("OTEL_RESOURCE_ATTRIBUTES")); !ok {
		bad("OTEL_RESOURCE_ATTRIBUTES", "must be key=value pairs separated by commas, got %q", get("OTEL_RESOURCE_ATTRIBUTES"))
	}
	return t
}

// keyValues parses the W3C Baggage-like list of the OTEL_* variables: key=value pairs
// separated by commas, values percent-encoded. Empty: nil, true.
func keyValues(s string) (map[string]string, bool) {
	if strings.TrimSpace(s) == "" {
		return nil, true
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, found := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !found || k == "" {
			return nil, false
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, false
		}
		out[k] = dv
	}
	return out, true
}
