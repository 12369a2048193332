package telemetry

import sdkmetric "go.opentelemetry.io/otel/sdk/metric"

// durationBuckets are the explicit bucket bounds, in seconds, of every duration histogram
// (unit "s"): from 5 ms to 5 minutes, since a provider call takes milliseconds and the
// lateness of due work can be minutes.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Views are the SDK views of the product's instruments: every histogram in seconds gets
// durationBuckets.
func Views() []sdkmetric.View {
	return []sdkmetric.View{sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: durationBuckets}},
	)}
}
