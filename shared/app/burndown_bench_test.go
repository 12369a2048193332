package app_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

var burnRows = flag.Int("burndown.rows", 100_000, "rows in BenchmarkBurnDown (a multiple of 100)")

// BenchmarkBurnDown inserts N due reminder rows (100 settings × N/100 sources, all due at
// the same instant) on SQLite, then runs the due-work poller until every row is Completed
// with its delivery queued (NotificationJob + outbox row), through the real reminder handler
// (revalidation reloads setting, snapshot and business unit per row). It reports rows/s
// and peak memory. Run with -benchtime=1x (make bench).
func BenchmarkBurnDown(b *testing.B) {
	for i := 0; i < b.N; i++ {
		burnDown(b, *burnRows)
	}
}

func burnDown(b *testing.B, rows int) {
	b.StopTimer()
	ctx := context.Background()
	dir := b.TempDir()
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	clock := automation.NewManualClock(start)
	cfg, err := config.Load(func(name string) string {
		return map[string]string{"AUTOMATION_DATA_DIR": dir, "AUTOMATION_DUEWORK_BATCH_SIZE": strconv.Itoa(store.MaxBatch),
			"AUTOMATION_DUEWORK_CONCURRENCY": "4"}[name]
	})
	if err != nil {
		b.Fatal(err)
	}
	e, err := app.Open(ctx, cfg, app.Options{Clock: clock, Channels: map[string]delivery.Channel{"log": &delivery.LogChannel{W: io.Discard}}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "Bench", TimeZoneID: "Australia/Sydney"}); err != nil {
		b.Fatal(err)
	}
	const settings = 100
	for s := 0; s < settings; s++ {
		set, err := reminder.ParseSetting([]byte(fmt.Sprintf(`{"guid":"00000000-0000-4000-8000-%012d","businessUnitId":"bu-1","name":"s%d",
		  "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[0],"sendLocalTime":"09:00",
		  "template":"t","channels":["log"],"recipients":{"field":"email"}}`, s, s)))
		if err != nil {
			b.Fatal(err)
		}
		rec, _ := reminder.SettingRecord(set, 1, start)
		if err := e.Store.ReminderSettingUpsert(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	for src := 0; src < rows/settings; src++ {
		raw, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": fmt.Sprintf("e-%d", src), "source": "/bench", "type": "PoliceVetting.Upserted",
			"businessunitid": "bu-1", "entitytype": "PoliceVetting", "entityguid": fmt.Sprintf("src-%d", src), "revision": 1,
			"data": map[string]any{"expiresOn": "2026-10-01", "email": fmt.Sprintf("p%d@example.test", src)}})
		ev, err := events.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Events.Dispatch(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	clock.Set(time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC)) // 2026-10-01 09:00 AEST: all due
	runtime.GC()
	var peakHeap uint64
	var ms runtime.MemStats
	done := 0
	b.StartTimer()
	began := time.Now()
	for {
		r, err := e.Poller.RunOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		done += r.Completed
		runtime.ReadMemStats(&ms)
		peakHeap = max(peakHeap, ms.HeapInuse)
		if r.Claimed == 0 {
			break
		}
	}
	elapsed := time.Since(began)
	b.StopTimer()
	counts, _ := e.Store.SchedulerCountByStatus(ctx)
	if done != rows || counts[automation.StatusCompleted] != rows {
		b.Fatalf("completed %d (counts %v), want %d", done, counts, rows)
	}
	msgs, _ := e.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 1})
	if len(msgs) == 0 {
		b.Fatal("no delivery queued")
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
	b.StartTimer()
}
