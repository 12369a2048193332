package delivery_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
)

var (
	benchDeliveries  = flag.Int("dispatch.deliveries", 20000, "deliveries queued for BenchmarkDispatch")
	benchConcurrency = flag.Int("dispatch.concurrency", 4, "dispatchers running at once in BenchmarkDispatch")
	benchBatch       = flag.Int("dispatch.batch", 100, "messages one dispatcher takes at once (HandleBatch) in BenchmarkDispatch; 1: Handle, one by one")
)

// BenchmarkDispatch measures dispatch throughput on SQLite (make bench): deliveries/s through
// the real path - send claim (read, guarded update, fact), template render, the log channel,
// outcome (guarded update, fact) - for -dispatch.deliveries queued jobs, with
// -dispatch.concurrency dispatchers, each taking up to -dispatch.batch waiting messages at
// once (HandleBatch: one claim and one record transaction per batch). Run it with
// -benchtime 1x.
func BenchmarkDispatch(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		clock := automation.NewManualClock(storetest.T0)
		tpl := &delivery.Templates{Store: st, Clock: clock}
		if _, err := tpl.Save(ctx, store.NotificationTemplate{Key: "reminder", Subject: "Reminder for {{.recipient}}",
			Text: "Hello {{.recipient}}, due {{.targetDate}}", CreatedBy: "bench"}, nil); err != nil {
			b.Fatal(err)
		}
		keys := queueMany(b, st, *benchDeliveries)
		d := &delivery.Dispatcher{Store: st, Templates: tpl, Channels: map[string]delivery.Channel{"log": &delivery.LogChannel{W: io.Discard}}, Clock: clock}
		work := make(chan bus.Message, len(keys))
		for _, k := range keys {
			work <- bus.Message{ID: k, Body: []byte(`{"deliveryKey":"` + k + `"}`)}
		}
		close(work)
		b.StartTimer()
		began := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, *benchConcurrency)
		for w := 0; w < *benchConcurrency; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					batch, ok := bus.TakeWaiting(work, max(1, *benchBatch))
					if !ok {
						return
					}
					if len(batch) == 1 && *benchBatch <= 1 {
						if err := d.Handle(ctx, batch[0]); err != nil {
							errs <- err
							return
						}
						continue
					}
					if err := errors.Join(d.HandleBatch(ctx, batch)...); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(began)
		b.StopTimer()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		unsent, _ := st.NotificationListUnsent(ctx, 0, 10)
		if len(unsent) != 0 {
			b.Fatalf("%d deliveries left unsent", len(unsent))
		}
		b.ReportMetric(float64(len(keys))/elapsed.Seconds(), "deliveries/s")
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
		st.Close()
		b.StartTimer()
	}
}

// queueMany queues n deliveries (one per scheduler row) in batches.
func queueMany(b *testing.B, st store.Store, n int) []string {
	b.Helper()
	ctx := context.Background()
	var keys []string
	for done := 0; done < n; {
		size := min(n-done, store.MaxBatch)
		var cs []automation.Candidate
		for i := 0; i < size; i++ {
			cs = append(cs, storetest.Candidate(done+i, storetest.T0))
		}
		if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: storetest.T0, Candidates: cs}); err != nil {
			b.Fatal(err)
		}
		rows, err := st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: storetest.T0, Lease: time.Hour, Limit: size})
		if err != nil || len(rows) != size {
			b.Fatalf("claimed %d of %d: %v", len(rows), size, err)
		}
		var items []store.SchedulerCompleteParams
		for _, r := range rows {
			jobs, msgs, err := delivery.Build([]delivery.Request{{SchedulerKey: r.SchedulerKey, BusinessUnitID: "bu-1", Channel: "log",
				Recipient: fmt.Sprintf("user%d@example.test", r.ID), Template: "reminder", Payload: map[string]string{"targetDate": "2026-10-31"}, LocalDate: "2026-10-01"}})
			if err != nil {
				b.Fatal(err)
			}
			items = append(items, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: storetest.T0, Deliveries: jobs, Outbox: msgs})
			keys = append(keys, jobs[0].DeliveryKey)
		}
		if _, err := st.SchedulerCompleteBatch(ctx, items); err != nil {
			b.Fatal(err)
		}
		done += size
	}
	return keys
}
