// Package telemetrytest sets the process's OpenTelemetry up for a test (telemetry.Setup)
// and shuts it down when the test ends: Export to an in-process OTLP receiver
// (shared/telemetry/otlptest), Prometheus with the registry only; Series reads one
// metric's series from a registry. Setup installs the process's OTel globals, so the
// tests that call these are not parallel.
package telemetrytest
