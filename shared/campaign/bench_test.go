package campaign_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
)

var benchCommands = flag.Int("campaign.commands", 5000, "commands BenchmarkWorkerCommands runs")

// BenchmarkWorkerCommands measures commands/s through the worker platform on SQLite with the
// simulated HTTP provider: each command is claimed (lease, Version, parameters frozen), sent
// over HTTP with its Idempotency-Key, and recorded with its fact and result message; 16
// workers at once, the provider limited to 16 calls in flight. `make bench` runs it.
func BenchmarkWorkerCommands(b *testing.B) {
	for range b.N {
		b.StopTimer()
		r := newRig(b, campaign.ProviderConfig{Concurrency: 16, Timeout: 10 * time.Second})
		r.topUpOnly("bench", "sim")
		ctx := context.Background()
		for i := range *benchCommands {
			if _, err := r.Dispatcher.HandleEvent(ctx, event(fmt.Sprintf("e-%d", i), fmt.Sprintf("c-%d", i))); err != nil {
				b.Fatal(err)
			}
		}
		msgs, err := r.Store.OutboxClaim(ctx, store.OutboxClaimParams{Now: r.Clock.Now(), Lease: time.Hour, Limit: store.MaxBatch})
		if err != nil {
			b.Fatal(err)
		}
		var bodies [][]byte
		for len(msgs) > 0 {
			for _, m := range msgs {
				bodies = append(bodies, m.Body)
			}
			if msgs, err = r.Store.OutboxClaim(ctx, store.OutboxClaimParams{Now: r.Clock.Now(), Lease: time.Hour, Limit: store.MaxBatch}); err != nil {
				b.Fatal(err)
			}
		}
		work := make(chan []byte)
		var wg sync.WaitGroup
		b.StartTimer()
		start := time.Now()
		for range 16 {
			wg.Go(func() {
				for body := range work {
					if err := r.Worker.Handle(ctx, body); err != nil {
						b.Error(err)
					}
				}
			})
		}
		for _, body := range bodies {
			work <- body
		}
		close(work)
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		m, err := r.Store.CampaignMetricsRead(ctx, "", r.Clock.Now())
		if err != nil || m.Waiting != 0 {
			b.Fatalf("%d commands still waiting: %v", m.Waiting, err)
		}
		if got := r.sims["sim"].Stats().Applied; got != len(bodies) {
			b.Fatalf("%d effects for %d commands", got, len(bodies))
		}
		b.ReportMetric(float64(len(bodies))/elapsed.Seconds(), "commands/s")
	}
}
