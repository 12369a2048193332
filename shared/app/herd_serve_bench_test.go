package app_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlstore"
)

var (
	herdServeRows      = flag.Int("herdserve.rows", 100_000, "BenchmarkHerdServe: rows due at one instant (a multiple of 100)")
	herdServeTimeout   = flag.Duration("herdserve.timeout", 15*time.Minute, "BenchmarkHerdServe: how long to wait, after the due instant, for every delivery to be recorded Sent")
	herdServeConsumers = flag.String("herdserve.consumers", "", "BenchmarkHerdServe: AUTOMATION_CONSUMER_CONCURRENCY for the run (empty: the default)")
	herdServeWriter    = flag.Bool("herdserve.writer", false, "BenchmarkHerdServe: print, on standard error, the SQLite writer's hold from the due instant to the last Sent, by store method (the top 12 kinds, COMMIT included)")
)

// BenchmarkHerdServe (W2 behind serve) is the 09:00 herd sent, not only queued: N rows due at
// one UTC instant across three business units (as BenchmarkHerd makes them), then the whole
// runtime as serve runs it (app.Open with serve's defaults, the local host with the real
// timers of functions/*/function.json and its consumers, the eager publisher) until every
// row's delivery is recorded Sent by NotificationDispatch (the "log" channel, to io.Discard).
// The clock stands still while the rows are made and then jumps to the rows' ScheduledOn
// and runs on in real time from there (jumpClock), so every timer sees 09:00 arrive as it
// would behind serve. A row's lateness is the wall time from that jump to its Sent outcome
// being recorded (Dispatcher.OnOutcome, after the commit). It reports rows/s sent (N over
// the time to the last Sent), p50/p99 lateness (ms) and the process's peak RSS; it fails
// when a delivery is sent twice, or is left unsent after -herdserve.timeout.
func BenchmarkHerdServe(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := runHerdServe(b, *herdServeRows)
		b.ReportMetric(r.rate, "rows/s")
		b.ReportMetric(float64(percentile(r.lateness, 50).Milliseconds()), "p50-ms")
		b.ReportMetric(float64(percentile(r.lateness, 99).Milliseconds()), "p99-ms")
		b.ReportMetric(r.setup.Seconds(), "s-setup")
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
	}
}

// jumpClock reads a fixed instant until Jump, then the jumped-to instant plus the wall time
// since the jump (UTC). Safe for concurrent use.
type jumpClock struct {
	mu   sync.Mutex
	at   time.Time
	wall time.Time // zero until Jump
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wall.IsZero() {
		return c.at
	}
	return c.at.Add(time.Since(c.wall)).UTC()
}

// Jump sets the clock to at and starts it; it returns the wall instant of the jump.
func (c *jumpClock) Jump(at time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.wall = at.UTC(), time.Now()
	return c.wall
}

var _ automation.Clock = (*jumpClock)(nil)

type herdServeResult struct {
	rate     float64         // rows sent per second, from the due instant to the last Sent
	lateness []time.Duration // one per Sent delivery
	setup    time.Duration   // making the rows (not measured in the rate)
}

func runHerdServe(b *testing.B, rows int) herdServeResult {
	b.Helper()
	b.StopTimer()
	ctx := context.Background()
	dir := b.TempDir()
	env := map[string]string{"AUTOMATION_DATA_DIR": dir, "AUTOMATION_LOG_LEVEL": "warn"}
	if *herdServeConsumers != "" {
		env["AUTOMATION_CONSUMER_CONCURRENCY"] = *herdServeConsumers
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // the limit before the run, restored after it
	app.ApplyMemoryLimit(cfg, os.Getenv)                 // as serve does
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	clock := &jumpClock{at: start}
	var (
		mu       sync.Mutex
		due      time.Time // wall instant of the jump to dueAt
		sent     = make(map[int64]bool, rows)
		twice    []string
		lateness = make([]time.Duration, 0, rows)
		last     time.Time
		done     = make(chan struct{})
	)
	rt, err := app.Open(ctx, cfg, app.Options{Clock: clock, OnOutcome: func(o delivery.Outcome) {
		if o.Status != store.NotificationSent {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if sent[o.Job.ID] {
			twice = append(twice, o.Job.DeliveryKey)
			return
		}
		sent[o.Job.ID] = true
		lateness = append(lateness, now.Sub(due))
		last = now
		if len(sent) == rows {
			close(done)
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	began := time.Now()
	seedRows(b, rt, []benchUnit{sydney, hoChiMinh, newYork}, rows, start)
	h, err := rt.LocalHost(filepath.Join("..", "..", "functions"), cfg, true, nil)
	if err != nil {
		b.Fatal(err)
	}
	hostCtx, stopHost := context.WithCancel(ctx)
	hostDone := make(chan struct{})
	go func() { defer close(hostDone); _ = h.Run(hostCtx, 200*time.Millisecond) }()
	stopPublisher := rt.StartPublisher(ctx, h)
	defer func() { stopPublisher(); stopHost(); <-hostDone }()
	setup := time.Since(began)
	runtime.GC()

	var writer *w6Writer // the writer's holds by kind (-herdserve.writer)
	if o, ok := rt.Store.(interface{ SetTxObserver(sqlstore.TxObserver) }); ok && *herdServeWriter {
		writer = newW6Writer(time.Now())
		o.SetTxObserver(writer.observe)
		defer o.SetTxObserver(nil)
	}
	b.StartTimer()
	mu.Lock()
	due = clock.Jump(dueAt)
	mu.Unlock()
	select {
	case <-done:
	case <-time.After(*herdServeTimeout):
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	if len(twice) > 0 {
		b.Fatalf("%d deliveries recorded Sent twice, e.g. %s", len(twice), twice[0])
	}
	if len(sent) != rows {
		counts, _ := rt.Store.SchedulerCountByStatus(ctx)
		b.Fatalf("%d of %d deliveries Sent after %s (scheduler rows %v)", len(sent), rows, *herdServeTimeout, counts)
	}
	if unsent, err := rt.Store.NotificationListUnsent(ctx, 0, 1); err != nil || len(unsent) != 0 {
		b.Fatalf("deliveries left unsent: %v (%v)", unsent, err)
	}
	elapsed := last.Sub(due)
	c := &rt.Relay.Claims
	b.Logf("relay claims: %d (found nothing %d), from the oldest row %d (stopped below the held destinations' floors %d), taking a held destination back %d, leaving a held destination out from below its floor %d, rows %d",
		c.Claims.Load(), c.Empty.Load(), c.FromOldest.Load(), c.Bounded.Load(), c.TakenBack.Load(), c.HeldWalks.Load(), c.Rows.Load())
	if writer != nil {
		fmt.Fprintf(os.Stderr, "W2 writer: %s\n", describeHolds(writer.span(0, math.MaxInt), 12))
	}
	b.Logf("W2 behind serve: %d rows made in %s, all Sent %s after the due instant", rows, setup.Round(time.Millisecond), elapsed.Round(time.Millisecond))
	return herdServeResult{rate: float64(rows) / elapsed.Seconds(), lateness: lateness, setup: setup}
}
