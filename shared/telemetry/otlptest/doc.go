// Package otlptest is an in-process OTLP/HTTP receiver for tests: a real endpoint that
// decodes the exporters' protobuf requests (go.opentelemetry.io/proto/otlp), so a test sees
// exactly what a collector would receive, with no mocked SDK. Handler and Line also serve
// `automation otlp-sim`, which prints each received span on a line for a local serve.
package otlptest
