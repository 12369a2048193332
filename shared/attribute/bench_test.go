package attribute_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var benchEvents = flag.Int("counter.events", 4000, "tracking messages per case for BenchmarkCounterOps")

// BenchmarkCounterOps applies tracking messages on SQLite from 4 concurrent consumers and
// reports counter operations/s for two cases (make bench): every message for a distinct
// customer (a weekly INCREMENT with a threshold: read, write under Version, processed row),
// and every message for one hot item (a hot INCREMENT: processed row and delta, no lock on
// the counter row) while the flusher folds deltas every 50 ms. hot/distinct is the ratio the
// hot-counter design must keep at 0.8 or more.
func BenchmarkCounterOps(b *testing.B) {
	for range b.N {
		distinct := runCounterCase(b, func(i int) []byte {
			return payload(fmt.Sprint("d-", i), "bu-syd", "2026-07-07T01:00:00Z", `{"attribute_code":"weekly_view_count","entity_type":"CUSTOMER","target_entity_id":"CUST-`+fmt.Sprint(i)+
				`","operation":"INCREMENT","period_type":"WEEKLY","thresholds":[{"value":10,"trigger_event":"View_10","reset_policy":"RESET_ON_TRIGGER"}]}`)
		}, false)
		hot := runCounterCase(b, func(i int) []byte {
			return payload(fmt.Sprint("h-", i), "bu-syd", "2026-07-07T01:00:00Z", `{"attribute_code":"item_view_count","entity_type":"ITEM","target_entity_id":"SKU-HOT","operation":"INCREMENT","hot":true}`)
		}, true)
		b.ReportMetric(distinct, "distinct-ops/s")
		b.ReportMetric(hot, "hot-item-ops/s")
		b.ReportMetric(hot/distinct, "hot/distinct")
	}
}

func runCounterCase(b *testing.B, body func(int) []byte, flush bool) float64 {
	e := newEnv(b)
	ctx := context.Background()
	n := *benchEvents
	var next atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var flushWG sync.WaitGroup
	if flush {
		f := attributeFlusher(e)
		flushWG.Add(1)
		go func() {
			defer flushWG.Done()
			tk := time.NewTicker(50 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
					if _, err := f.RunOnce(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	start := time.Now()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, err := e.svc.Handle(ctx, body(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	flushWG.Wait()
	if flush { // every increment counted exactly once, folded or not
		if got := fmt.Sprint(e.value(b, "ITEM", "SKU-HOT", "item_view_count", time.Now())); got != fmt.Sprint(n) {
			b.Fatalf("hot counter = %s, want %d", got, n)
		}
	}
	return float64(n) / elapsed.Seconds()
}
