package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

var (
	burnRows   = flag.Int("burndown.rows", 100_000, "rows in BenchmarkBurnDown (a multiple of 100)")
	herdRows   = flag.Int("herd.rows", 100_000, "rows in BenchmarkHerd (a multiple of 100)")
	e2eRows    = flag.Int("e2e.rows", 20_000, "rows in BenchmarkEndToEnd (a multiple of 100)")
	drain      = flag.Bool("burndown.drain", false, "BenchmarkBurnDown and BenchmarkHerd burn down with Poller.Drain (the next batch claimed and executed while the last one's outcomes are written) instead of a RunOnce loop")
	stageProf  = flag.String("burndown.cpuprofile", "", "write a CPU profile of the burn-down stage alone (not the setup before it) to this file")
	stageTrace = flag.String("burndown.trace", "", "write an execution trace of the burn-down stage alone to this file")
	dispProf   = flag.String("e2e.dispatch.cpuprofile", "", "write a CPU profile of BenchmarkEndToEnd's dispatch stage (③) alone to this file")
	dispTrace  = flag.String("e2e.dispatch.trace", "", "write an execution trace of BenchmarkEndToEnd's dispatch stage (③) alone to this file")
	benchOTel  = flag.Bool("bench.otel", false, "BenchmarkBurnDown, BenchmarkHerd and BenchmarkEndToEnd run with OpenTelemetry on: spans sampled at -bench.otel.ratio and exported over OTLP/HTTP to an in-process endpoint that discards them, and metrics recorded (the cost of telemetry, docs/performance.md)")
	benchRatio = flag.String("bench.otel.ratio", "1", "OTEL_TRACES_SAMPLER_ARG of -bench.otel (1: every span, the worst case; the default setting is 0.1)")
	e2eBatch   = flag.Int("e2e.batch", topology.MaxMessageBatchSize, "waiting dispatch messages one dispatcher of BenchmarkEndToEnd takes at once through HandleBatch (default: the runtime's batch, topology.MaxMessageBatchSize); 1: Handle, one message at a time, as the runtime dispatched before it took batches")
)

// BenchmarkBurnDown (W1) inserts N due reminder rows (100 settings × N/100 sources, all due
// at the same instant) on SQLite, then runs the due-work poller until every row is Completed
// with its delivery queued (NotificationJob + outbox row), through the real reminder handler
// (revalidation reads setting, snapshot and business unit once per claimed batch). It
// reports rows/s, the process's CPU µs per row (cpu-us/row) and peak memory. Run with -benchtime=1x (make bench).
func BenchmarkBurnDown(b *testing.B) {
	for i := 0; i < b.N; i++ {
		w := openWorkload(b, []benchUnit{sydney}, *burnRows)
		r := w.burnDown(b)
		b.ReportMetric(r.rate, "rows/s")
		b.ReportMetric(r.cpuPerRow, "cpu-us/row")
		reportMemory(b, r.peakHeap)
		w.close()
	}
}

// BenchmarkHerd (W2) is the 09:00 herd: N rows due at one UTC instant across three business
// units (Sydney, Ho Chi Minh City, New York, each with its own local send time), burned
// down by the poller. Lateness is measured on the real clock: the simulated clock is set to
// the rows' ScheduledOn when the burn-down starts, so a row's lateness is the wall time from
// that start to the commit of its completion. It reports rows/s and p50/p99 lateness (ms).
func BenchmarkHerd(b *testing.B) {
	for i := 0; i < b.N; i++ {
		w := openWorkload(b, []benchUnit{sydney, hoChiMinh, newYork}, *herdRows)
		r := w.burnDown(b)
		b.ReportMetric(r.rate, "rows/s")
		b.ReportMetric(float64(percentile(r.lateness, 50).Milliseconds()), "p50-ms")
		b.ReportMetric(float64(percentile(r.lateness, 99).Milliseconds()), "p99-ms")
		reportMemory(b, r.peakHeap)
		w.close()
	}
}

// BenchmarkEndToEnd (W4) runs the whole pipeline for N rows: ① events accepted (each
// source's event ensures 100 rows), ② the rows burned down when due, ③ the outbox relayed
// and every delivery sent through the log channel by 4 dispatchers, each handed the waiting
// messages at once, up to topology.MaxMessageBatchSize, through Dispatcher.HandleBatch, as
// the runtime's NotificationDispatch takes them (-e2e.batch=1: one message at a time through
// Handle, as before the runtime took batches). It reports each stage's
// rate (events/s and rows/s at ①, rows/s at ②, deliveries/s at ③) and the end-to-end rate
// (rows from first event to last delivery sent).
func BenchmarkEndToEnd(b *testing.B) {
	for i := 0; i < b.N; i++ {
		w := openWorkload(b, []benchUnit{sydney}, *e2eRows)
		r := w.burnDown(b)
		var ru0, ru1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		w0, wok := writtenBytes()
		sent, deliver := w.deliver(b)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		if w1, ok := writtenBytes(); ok && wok {
			// Bytes the process wrote (WAL frames, checkpoints) per delivery: exact where
			// the rates are noisy, so a change in what stage ③ writes shows at once.
			b.ReportMetric(float64(w1-w0)/float64(sent), "dispatch-written-B/delivery")
		}
		if sent != w.rows {
			b.Fatalf("sent %d deliveries, want %d", sent, w.rows)
		}
		total := w.ingest + r.elapsed + deliver
		b.ReportMetric(float64(w.rows)/total.Seconds(), "rows/s")
		b.ReportMetric(float64(w.rows/100)/w.ingest.Seconds(), "ingest-events/s")
		b.ReportMetric(float64(w.rows)/w.ingest.Seconds(), "ingest-rows/s")
		b.ReportMetric(r.rate, "burndown-rows/s")
		b.ReportMetric(float64(sent)/deliver.Seconds(), "dispatch-deliveries/s")
		// CPU per row of each stage (every goroutine, user + system): steadier than the rates
		// on a machine shared with other work.
		b.ReportMetric(r.cpuPerRow, "burndown-cpu-us/row")
		if r.writtenPerRow > 0 {
			b.ReportMetric(r.writtenPerRow, "burndown-written-B/row")
		}
		b.ReportMetric(float64((ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/1000)/float64(sent), "dispatch-cpu-us/delivery")
		reportMemory(b, r.peakHeap)
		w.close()
	}
}

// benchUnit is one business unit of a workload and the local send time and date that put
// its rows at the workload's due instant, 2026-09-30T23:00:00Z.
type benchUnit struct {
	id, zone, sendLocal, date string
}

var (
	dueAt     = time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC)
	sydney    = benchUnit{"bu-syd", "Australia/Sydney", "09:00", "2026-10-01"} // AEST, +10
	hoChiMinh = benchUnit{"bu-hcm", "Asia/Ho_Chi_Minh", "06:00", "2026-10-01"} // +07
	newYork   = benchUnit{"bu-nyc", "America/New_York", "19:00", "2026-09-30"} // EDT, -4
)

type workload struct {
	e      *app.Runtime
	clock  *automation.ManualClock
	rows   int
	ingest time.Duration // stage ①: every event dispatched
}

// openWorkload opens the embedded runtime (batch 1000, concurrency 4) and dispatches the
// events that create rows due rows at dueAt: per unit, 100 settings (offset 0, the unit's
// send time) and rows/100 sources, dealt to the units in turn. The timer is stopped on return.
func openWorkload(b *testing.B, units []benchUnit, rows int) *workload {
	b.Helper()
	b.StopTimer()
	ctx := context.Background()
	dir := b.TempDir()
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	clock := automation.NewManualClock(start)
	env := map[string]string{"AUTOMATION_DATA_DIR": dir, "AUTOMATION_DUEWORK_BATCH_SIZE": strconv.Itoa(store.MaxBatch),
		"AUTOMATION_DUEWORK_CONCURRENCY": "4"}
	otelEnv(b, env)
	cfg, err := config.Load(func(name string) string { return env[name] })
	if err != nil {
		b.Fatal(err)
	}
	e, err := app.Open(ctx, cfg, app.Options{Clock: clock, Channels: map[string]delivery.Channel{"log": &delivery.LogChannel{W: io.Discard}}})
	if err != nil {
		b.Fatal(err)
	}
	return &workload{e: e, clock: clock, rows: rows, ingest: seedRows(b, e, units, rows, start)}
}

// seedRows dispatches, through e's domain event handler, the events that create rows due
// rows at dueAt: per unit, 100 settings (offset 0, the unit's send time) and rows/100
// sources, dealt to the units in turn. start is the settings' UpdatedOn. It returns the time
// the events took.
func seedRows(b *testing.B, e *app.Runtime, units []benchUnit, rows int, start time.Time) time.Duration {
	b.Helper()
	ctx := context.Background()
	const settings = 100
	if rows%settings != 0 {
		b.Fatalf("rows %d is not a multiple of %d", rows, settings)
	}
	for u, unit := range units {
		if err := e.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: unit.id, Name: unit.id, TimeZoneID: unit.zone}); err != nil {
			b.Fatal(err)
		}
		for s := 0; s < settings; s++ {
			set, err := reminder.ParseSetting([]byte(fmt.Sprintf(`{"guid":"00000000-0000-4000-8%03d-%012d","businessUnitId":%q,"name":"s%d",
			  "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[0],"sendLocalTime":%q,
			  "template":"t","channels":["log"],"recipients":{"field":"email"}}`, u, s, unit.id, s, unit.sendLocal)))
			if err != nil {
				b.Fatal(err)
			}
			rec, _ := reminder.SettingRecord(set, 1, start)
			if err := e.Store.ReminderSettingUpsert(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	began := time.Now()
	for src := 0; src < rows/settings; src++ {
		unit := units[src%len(units)]
		raw, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": fmt.Sprintf("e-%d", src), "source": "/bench", "type": "PoliceVetting.Upserted",
			"businessunitid": unit.id, "entitytype": "PoliceVetting", "entityguid": fmt.Sprintf("src-%d", src), "revision": 1,
			"data": map[string]any{"expiresOn": unit.date, "email": fmt.Sprintf("p%d@example.test", src)}})
		ev, err := events.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Events.Dispatch(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(began)
}

func (w *workload) close() { _ = w.e.Close() }

type burnResult struct {
	elapsed  time.Duration
	rate     float64         // rows/s
	lateness []time.Duration // one per completed row
	peakHeap uint64
	// cpuPerRow is the process's CPU time (user + system, every goroutine: the poller, the
	// trace write, the checkpointer, the GC) per row during the burn-down, in µs: steadier
	// than the rate on a machine shared with other work.
	cpuPerRow float64
	// writtenPerRow is the bytes the process wrote per row during the burn-down
	// (writtenBytes); 0 where that is not known.
	writtenPerRow float64
}

// burnDown sets the clock to dueAt and runs the poller until nothing is claimed; every row
// must end Completed with a delivery queued.
func (w *workload) burnDown(b *testing.B) burnResult {
	b.Helper()
	ctx := context.Background()
	w.clock.Set(dueAt)
	runtime.GC()
	var r burnResult
	r.lateness = make([]time.Duration, 0, w.rows)
	var ms runtime.MemStats
	defer stageProfile(b, *stageProf, *stageTrace)()
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	w0, wok := writtenBytes()
	b.StartTimer()
	began := time.Now()
	batch := func(res scheduler.Result) {
		late := time.Since(began) // the rows' ScheduledOn is dueAt, which is when began was taken
		for range res.Completed {
			r.lateness = append(r.lateness, late)
		}
		runtime.ReadMemStats(&ms)
		r.peakHeap = max(r.peakHeap, ms.HeapInuse)
	}
	if *drain {
		if _, err := w.e.Poller.Drain(ctx, 0, batch); err != nil {
			b.Fatal(err)
		}
	}
	for !*drain {
		res, err := w.e.Poller.RunOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		batch(res)
		if res.Claimed == 0 {
			break
		}
	}
	r.elapsed = time.Since(began)
	b.StopTimer()
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	r.cpuPerRow = float64(cpu.Microseconds()) / float64(w.rows)
	if w1, ok := writtenBytes(); ok && wok {
		r.writtenPerRow = float64(w1-w0) / float64(w.rows)
	}
	counts, _ := w.e.Store.SchedulerCountByStatus(ctx)
	if len(r.lateness) != w.rows || counts[automation.StatusCompleted] != w.rows {
		b.Fatalf("completed %d (counts %v), want %d", len(r.lateness), counts, w.rows)
	}
	msgs, _ := w.e.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 1})
	if len(msgs) == 0 {
		b.Fatal("no delivery queued")
	}
	r.rate = float64(w.rows) / r.elapsed.Seconds()
	return r
}

// stageProfile starts a CPU profile written to cpuPath and an execution trace written to
// tracePath (each skipped when its path is empty), and returns the function that stops them.
func stageProfile(b *testing.B, cpuPath, tracePath string) func() {
	var stops []func()
	for _, p := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{
		{cpuPath, pprof.StartCPUProfile, pprof.StopCPUProfile},
		{tracePath, trace.Start, trace.Stop},
	} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.start(f); err != nil {
			b.Fatal(err)
		}
		stops = append(stops, func() { p.stop(); _ = f.Close() })
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// deliver is stage ③: a relay (1000 messages per run) publishes the outbox to a channel that
// 4 dispatchers drain through the runtime's Dispatcher, each taking the waiting messages at
// once (bus.TakeWaiting, up to -e2e.batch) through HandleBatch, as the runtime's
// NotificationDispatch does (a claim transaction per batch, render, log channel, group
// commits of the outcomes), or with -e2e.batch=1 one message at a time through Handle (two
// transactions per delivery). It returns the deliveries sent and the stage's wall time.
func (w *workload) deliver(b *testing.B) (int, time.Duration) {
	b.Helper()
	ctx := context.Background()
	q := make(chan bus.Message, 4*store.MaxBatch)
	relay := &delivery.Relay{Store: w.e.Store, Publisher: chanPublisher(q), Clock: w.clock, Batch: store.MaxBatch}
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	stop := stageProfile(b, *dispProf, *dispTrace)
	b.StartTimer()
	began := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				batch, ok := bus.TakeWaiting(q, max(*e2eBatch, 1))
				if !ok {
					return
				}
				var err error
				if len(batch) == 1 && *e2eBatch <= 1 {
					err = w.e.Dispatcher.Handle(ctx, batch[0])
				} else {
					err = errors.Join(w.e.Dispatcher.HandleBatch(ctx, batch)...)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for {
		n, err := relay.RunOnce(ctx)
		if err != nil {
			errs <- err
			break
		}
		if n == 0 {
			break
		}
	}
	close(q)
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	stop()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	unsent, err := w.e.Store.NotificationListUnsent(ctx, 0, 10)
	if err != nil || len(unsent) != 0 {
		b.Fatalf("%d deliveries left unsent (%v)", len(unsent), err)
	}
	return w.rows, elapsed
}

type chanPublisher chan bus.Message

// Publish passes dispatch messages to the dispatchers; other destinations (delivery facts
// for the projection) are accepted and dropped, as they are not part of stage ③'s send.
func (c chanPublisher) Publish(_ context.Context, m bus.Message) error {
	if m.Destination == topology.NotificationDispatchQueue {
		c <- m
	}
	return nil
}

// percentile returns the p-th percentile (nearest rank) of ds, sorting ds in place.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[max(0, (len(ds)*p+99)/100-1)]
}

// reportMemory reports the peak Go heap in use and the process's peak RSS (MiB).
func reportMemory(b *testing.B, peakHeap uint64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
}

// writtenBytes returns the bytes the process has passed to write calls so far (wchar of
// /proc/self/io); false where that file is missing or unreadable (not Linux).
func writtenBytes() (int64, bool) {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// otelEnv turns telemetry on in env when -bench.otel is set: OTLP/HTTP to an in-process
// endpoint that reads and discards every export, every span sampled, metrics over OTLP.
func otelEnv(b *testing.B, env map[string]string) {
	if !*benchOTel {
		return
	}
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = sink.URL
	env["OTEL_TRACES_SAMPLER_ARG"] = *benchRatio
	env["OTEL_METRICS_EXPORTER"] = "otlp"
}
