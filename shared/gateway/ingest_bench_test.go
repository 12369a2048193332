package gateway_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
)

var benchBatches = flag.Int("ingest.batches", 40, "batches of 500 events for BenchmarkIngestBatch")

// BenchmarkIngestBatch ingests batches of 500 ViewItem events (three counter instructions,
// one tracking outbox row each) on SQLite through the whole ingest path — envelope,
// registry, schema, enrichment, one transaction per batch — and reports accepted events/s
// and the p99 latency of a batch (make bench).
func BenchmarkIngestBatch(b *testing.B) {
	for range b.N {
		e := newEnv(b)
		ctx := context.Background()
		var lat []time.Duration
		start := time.Now()
		accepted := 0
		for n := 0; n < *benchBatches; n++ {
			raws := make([]events.Raw, 500)
			for i := range raws {
				raws[i] = ce(fmt.Sprintf("b%d-%d", n, i), "ViewItem", `{"itemId":"SKU-`+fmt.Sprint(i%97)+`"}`)
			}
			t0 := time.Now()
			res, err := e.svc.Ingest(ctx, automation.AllBusinessUnits(), raws)
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			for _, r := range res {
				if r.Status == "accepted" {
					accepted++
				}
			}
		}
		elapsed := time.Since(start)
		slices.Sort(lat)
		p99 := lat[min(len(lat)-1, len(lat)*99/100)]
		b.ReportMetric(float64(accepted)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(p99.Milliseconds()), "p99-ms/batch")
	}
}
