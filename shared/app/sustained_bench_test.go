package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlstore"
)

var (
	w6Rate     = flag.Int("sustained.rate", 2000, "BenchmarkSustained: offered logins per second")
	w6Duration = flag.Duration("sustained.duration", 5*time.Minute, "BenchmarkSustained: how long the load is offered")
	w6First    = flag.Float64("sustained.first", 0.10, "BenchmarkSustained: share of logins that are a customer's first")
	w6Batch    = flag.Int("sustained.batch", 100, "BenchmarkSustained: events per POST /api/events")
	w6Drain    = flag.Duration("sustained.drain", 60*time.Second, "BenchmarkSustained: how long to wait after the load for the last logins to be processed")
	w6Conc     = flag.String("sustained.concurrency", "", "BenchmarkSustained: AUTOMATION_CONSUMER_CONCURRENCY for the run (empty: its default)")
	w6Burst    = flag.Bool("sustained.burst", false, "BenchmarkSustained: offer 20,000 logins from 2,000 customers at once (as fast as ingest takes them) instead of a fixed rate")
)

// BenchmarkSustained (W6) runs the whole pipeline as serve does: app.Open with the SQLite
// store and the in-process bus, the local host with the real timers (functions/*/function.json)
// and consumers, and the eager publisher (StartPublisher), driven through HTTP
// (POST /api/events on the runtime's listener). The welcome campaign of docs/loyalty-in-ten-minutes.md is saved
// (first-login-welcome: an inbox message and a log message on First_Login_Reward). Logins
// are offered at -sustained.rate for -sustained.duration, a -sustained.first share of them
// a customer's first login (the rest repeat an earlier customer's), in batches of
// -sustained.batch; a batch answered 503 (backpressure) is sent again later, with the same
// ids. It reports the sustained rate (logins applied by the attribute engine per second of
// the run, until the last was applied), the event → attribute and event → inbox (first
// logins' welcome message) lags p50 and p99, the largest outbox backlog seen (sampled every
// second; the series is logged), the 503 answers, peak RSS and the process's CPU per applied
// login (cpu-us/login: user + system, the load's own HTTP client included), the peak Go heap
// in use, the mean write transactions per commit on the SQLite writer (tx/commit), and per
// applied login the write transactions (tx/login) and the messages the eager publisher
// published (msgs/login). With
// W6_QUEUES set it prints, every second, each in-process destination's waiting messages and
// the process's memory (Go heap, stacks, RssAnon/RssFile) and, per destination, the
// messages delivered, the handler invocations and the time spent in the handler (w6Meters)
// to stderr; with W6_HEAP=file it writes a heap profile there at each new peak of the Go
// heap in use (what holds the memory at the peak); AUTOMATION_* variables of
// the shell override the run's settings (A/B runs). With -sustained.burst it
// offers 20,000 logins from 2,000 customers at once instead.
func BenchmarkSustained(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := runSustained(b)
		b.ReportMetric(r.applied, "logins/s")
		b.ReportMetric(r.offered, "offered/s")
		b.ReportMetric(r.toLast, "s-to-last-applied")
		b.ReportMetric(r.unapplied, "unapplied")
		b.ReportMetric(r.noWelcome, "no-welcome")
		b.ReportMetric(r.attrP50, "p50-ms/attribute")
		b.ReportMetric(r.attrP99, "p99-ms/attribute")
		b.ReportMetric(r.inboxP50, "p50-ms/inbox")
		b.ReportMetric(r.inboxP99, "p99-ms/inbox")
		b.ReportMetric(r.peakBacklog, "peak-backlog")
		b.ReportMetric(r.refused, "refused-503")
		b.ReportMetric(r.rssMiB, "peak-rss-MiB")
		b.ReportMetric(r.cpuPerLogin, "cpu-us/login")
		b.ReportMetric(r.txPerCommit, "tx/commit")
		b.ReportMetric(r.heapMiB, "peak-heap-MiB")
		b.ReportMetric(r.txPerLogin, "tx/login")
		b.ReportMetric(r.msgsPerLogin, "msgs/login")
		b.ReportMetric(r.writerPerLogin, "writer-us/login")
	}
}

// w6Result is one W6 run's figures (BenchmarkSustained reports them).
type w6Result struct {
	applied, offered, toLast, unapplied, noWelcome                     float64
	attrP50, attrP99, inboxP50, inboxP99, peakBacklog, refused, rssMiB float64
	heapMiB                                                            float64 // peak Go heap in use (the rest of the RSS: SQLite's page caches, stacks, the runtime)
	txPerCommit                                                        float64 // write transactions per physical commit on the SQLite writer (group commit)
	cpuPerLogin                                                        float64 // CPU µs of the process per applied login
	txPerLogin                                                         float64 // write transactions on the SQLite writer per applied login
	msgsPerLogin                                                       float64 // messages the eager publisher published per applied login
	writerPerLogin                                                     float64 // µs the writer's transactions held it (fn and commit) per applied login
}

func runSustained(b *testing.B) w6Result {
	ctx := context.Background()
	dir := b.TempDir()
	env := map[string]string{"AUTOMATION_LOG_LEVEL": "warn", "AUTOMATION_CONSUMER_CONCURRENCY": *w6Conc}
	for _, kv := range os.Environ() { // AUTOMATION_* settings of the shell, for A/B runs
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AUTOMATION_") {
			env[k] = v
		}
	}
	env["AUTOMATION_DATA_DIR"] = dir
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // the limit before the run, restored after it
	app.ApplyMemoryLimit(cfg, os.Getenv)                 // as serve does
	var mu sync.Mutex
	posted := &pendingLogins{}        // login -> first POST, until applied
	firstOf := map[string]time.Time{} // first-login customer -> its login's first POST
	var attrLags, inboxLags []time.Duration
	var lastApplied time.Time
	applied := 0
	var logOut *os.File
	if p := os.Getenv("W6_LOG"); p != "" { // warnings and errors of the run, for diagnosis
		if logOut, err = os.Create(p); err != nil {
			b.Fatal(err)
		}
		defer logOut.Close()
	}
	var logger *slog.Logger
	if logOut != nil {
		logger = slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if os.Getenv("W6_QUEUES") != "" {
		sqliteMemWatch() // the connections app.Open opens, for the memory series
	}
	rt, err := app.Open(ctx, cfg, app.Options{Clock: automation.SystemClock{}, Log: logger,
		OnAttributes: func(r attribute.Result) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if t, ok := posted.take(r.EventID); ok {
				attrLags = append(attrLags, now.Sub(t))
				applied++
				lastApplied = now
			}
		},
		OnCampaignAction: func(c store.CampaignCommand) {
			if c.ActionKey != "welcome" || c.Status != store.CommandSucceeded {
				return
			}
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if t, ok := firstOf[c.RecipientID]; ok {
				delete(firstOf, c.RecipientID)
				inboxLags = append(inboxLags, now.Sub(t))
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "registry", "loyalty.json"))
	if err != nil {
		b.Fatal(err)
	}
	doc, err := gateway.ParseDocument(raw)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rt.Registry.Import(ctx, doc, "W6"); err != nil {
		b.Fatal(err)
	}
	if err := rt.Store.BusinessUnitInsert(ctx, store.BusinessUnitRecord{BusinessUnit: store.BusinessUnit{ID: "bu-hcm", Name: "Ho Chi Minh City", TimeZoneID: "Asia/Ho_Chi_Minh"},
		Version: 1, UpdatedOn: time.Now().UTC()}); err != nil {
		b.Fatal(err)
	}
	h, err := rt.LocalHost(filepath.Join("..", "..", "functions"), cfg, true, nil)
	if err != nil {
		b.Fatal(err)
	}
	var meters w6Meters
	if os.Getenv("W6_QUEUES") != "" {
		meters = meterConsumers(rt)
	}
	writer := newW6Writer(time.Now())
	if o, ok := rt.Store.(interface{ SetTxObserver(sqlstore.TxObserver) }); ok {
		o.SetTxObserver(writer.observe)
		defer o.SetTxObserver(nil)
	}
	var destDB *sql.DB // the per-destination backlog (W6_QUEUES), read on a connection of its own
	if os.Getenv("W6_QUEUES") != "" {
		if destDB, err = sql.Open("sqlite", filepath.Join(dir, "automation.db")); err != nil {
			b.Fatal(err)
		}
		destDB.SetMaxOpenConns(1)
		defer destDB.Close()
	}
	srv := httptest.NewServer(rt.ListenerHandler(false))
	defer srv.Close()
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Automation-Operator", "w6")
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		var out bytes.Buffer
		_, _ = out.ReadFrom(res.Body)
		return res.StatusCode, out.String()
	}
	if code, body := call(http.MethodPut, "/api/campaigns/first-login-welcome", `{"businessUnitId":"bu-hcm","name":"First login welcome","status":"ACTIVE","triggers":["First_Login_Reward"],"actions":[{"key":"welcome","type":"NOTIFICATION_INBOX","provider":"inbox","params":{"subject":"Welcome to the club","text":"Your first login earned a welcome reward."}},{"key":"ott","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Welcome offer","text":"Your welcome offer is waiting in the app.","template":"welcome-ott"}}]}`); code/100 != 2 {
		b.Fatalf("campaign: %d %s", code, body)
	}
	if code, body := call(http.MethodPut, "/api/budgets/campaigns/first-login-welcome?businessUnitId=bu-hcm", `{"maxCost":1000000,"currency":"VND"}`); code/100 != 2 {
		b.Fatalf("budget: %d %s", code, body)
	}
	hostCtx, stopHost := context.WithCancel(ctx)
	hostDone := make(chan struct{})
	go func() { defer close(hostDone); _ = h.Run(hostCtx, 200*time.Millisecond) }()
	stopPublisher := rt.StartPublisher(ctx, h)
	defer func() { stopPublisher(); stopHost(); <-hostDone }()

	// The load: each login a CloudEvent of the registry's Login type.
	rng := rand.New(rand.NewPCG(6, 6))
	var customers []string
	seq := 0
	next := func() (id, customer string, first bool) {
		seq++
		if len(customers) == 0 || rng.Float64() < *w6First {
			customer = fmt.Sprintf("CUST-W6-%07d", len(customers))
			customers = append(customers, customer)
			first = true
		} else {
			customer = customers[rng.IntN(len(customers))]
		}
		return fmt.Sprintf("w6-login-%08d", seq), customer, first
	}
	type login struct{ id, customer string }
	var burstQueue []login
	if *w6Burst { // 20,000 logins from 2,000 customers: each customer's first login among them
		for i := 0; i < 20_000; i++ {
			burstQueue = append(burstQueue, login{fmt.Sprintf("w6-burst-%06d", i), fmt.Sprintf("CUST-B-%05d", i%2000)})
		}
	}
	var retry [][]login
	refused := 0
	body := func(ls []login) string {
		var sb strings.Builder
		sb.WriteByte('[')
		for i, l := range ls {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"specversion":"1.0","id":%q,"source":"/w6","type":"Login","businessunitid":"bu-hcm","customerid":%q,"data":{"channel":"APP","deviceId":"DEV-1"}}`, l.id, l.customer)
		}
		sb.WriteByte(']')
		return sb.String()
	}
	send := func(ls []login) bool {
		now := time.Now()
		mu.Lock()
		for _, l := range ls {
			posted.post(l.id, now)
		}
		mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/events", strings.NewReader(body(ls)))
		req.Header.Set("Content-Type", "application/cloudevents-batch+json")
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		_, _ = out.ReadFrom(res.Body)
		res.Body.Close()
		switch {
		case res.StatusCode == http.StatusServiceUnavailable:
			return false
		case res.StatusCode != http.StatusOK:
			b.Fatalf("ingest: %d %s", res.StatusCode, out.String())
		}
		return true
	}
	var backlog []int
	sampleDone := make(chan struct{})
	stopSample := make(chan struct{})
	var peakBacklog int
	var peakHeap uint64 // the Go heap in use, sampled with the backlog
	var lastGC uint32   // the collections and their pauses (ns) at the last sample (W6_QUEUES)
	var lastPause uint64
	lastAppliedN := 0 // logins applied at the last sample (W6_QUEUES)
	go func() {
		defer close(sampleDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopSample:
				return
			case <-t.C:
			}
			n0 := -1
			if n, err := rt.Store.(store.OutboxBacklogReader).OutboxBacklog(ctx); err == nil {
				n0 = n
				backlog = append(backlog, n)
				peakBacklog = max(peakBacklog, n)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if p := os.Getenv("W6_HEAP"); p != "" && ms.HeapInuse > peakHeap {
				// The heap profile at the peak so far (what holds the memory), overwritten.
				if f, err := os.Create(p); err == nil {
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			}
			peakHeap = max(peakHeap, ms.HeapInuse)
			if os.Getenv("W6_QUEUES") != "" {
				st, _ := os.ReadFile("/proc/self/status")
				var rss []string
				for _, l := range strings.Split(string(st), "\n") {
					if strings.HasPrefix(l, "Rss") {
						rss = append(rss, strings.Join(strings.Fields(l), " "))
					}
				}
				// The collections of this second and their pauses, to line up with the seconds
				// where the applied rate drops.
				fmt.Fprintf(os.Stderr, "W6 memory %d: heap in use %d MiB, heap sys %d MiB, heap released %d MiB, stacks %d MiB, Go runtime total %d MiB, %v, GC %d in %s\n", len(backlog), ms.HeapInuse>>20, ms.HeapSys>>20, ms.HeapReleased>>20, ms.StackSys>>20, (ms.Sys-ms.HeapReleased)>>20, rss,
					ms.NumGC-lastGC, time.Duration(ms.PauseTotalNs-lastPause))
				lastGC, lastPause = ms.NumGC, ms.PauseTotalNs
				if len(backlog)%10 == 0 {
					fmt.Fprintf(os.Stderr, "W6 sqlite %d: %s\n", len(backlog), sqliteMemLine())
					fmt.Fprintf(os.Stderr, "W6 writer %d: %s\n", len(backlog), writer.line(len(backlog)/10-1))
				}
			}
			if os.Getenv("W6_QUEUES") != "" && rt.Memory != nil {
				mu.Lock()
				appliedNow := applied
				mu.Unlock()
				wal := int64(-1) // the log's size: it starts over after a checkpoint that copied all of it
				if fi, err := os.Stat(filepath.Join(dir, "automation.db-wal")); err == nil {
					wal = fi.Size() >> 10
				}
				fmt.Fprintf(os.Stderr, "W6 queues %d: applied %d, wal %d KiB, backlog %d %v by destination %s\n", len(backlog), appliedNow-lastAppliedN, wal, n0, rt.Memory.Lengths(), w6DestBacklog(ctx, destDB))
				lastAppliedN = appliedNow
				fmt.Fprintf(os.Stderr, "W6 consumers %d: %s\n", len(backlog), meters.second())
			}
		}
	}()

	start := time.Now()
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	offered := 0
	b.ResetTimer()
	if *w6Burst {
		mu.Lock() // before the first send: a welcome may come before the last batch is sent
		for i := 0; i < 2000; i++ {
			firstOf[fmt.Sprintf("CUST-B-%05d", i)] = start
		}
		mu.Unlock()
		for len(burstQueue) > 0 {
			n := min(500, len(burstQueue))
			if send(burstQueue[:n]) {
				offered += n
				burstQueue = burstQueue[n:]
			} else {
				refused++
				time.Sleep(200 * time.Millisecond)
			}
		}
	} else {
		tick := 100 * time.Millisecond
		perTick := max(1, *w6Rate/10)
		t := time.NewTicker(tick)
		for time.Since(start) < *w6Duration {
			<-t.C
			// Refused batches first, with their ids: nothing accepted is dropped, nothing refused is lost.
			for len(retry) > 0 {
				if !send(retry[0]) {
					refused++
					break
				}
				retry = retry[1:]
			}
			for left := perTick; left > 0; {
				n := min(left, *w6Batch)
				ls := make([]login, n)
				for i := range ls {
					id, c, first := next()
					ls[i] = login{id, c}
					if first {
						mu.Lock()
						firstOf[c] = time.Now()
						mu.Unlock()
					}
				}
				left -= n
				offered += n
				if !send(ls) {
					refused++
					retry = append(retry, ls)
				}
			}
		}
		t.Stop()
		for len(retry) > 0 {
			if !send(retry[0]) {
				refused++
				time.Sleep(200 * time.Millisecond)
				continue
			}
			retry = retry[1:]
		}
	}
	offeredFor := time.Since(start)
	// Wait for the last logins (and welcome messages) to be processed.
	deadline := time.Now().Add(*w6Drain)
	for time.Now().Before(deadline) {
		mu.Lock()
		left, inboxLeft := posted.n, len(firstOf)
		mu.Unlock()
		if left == 0 && inboxLeft == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stopSample)
	<-sampleDone
	sqliteMemStop()
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	elapsed := lastApplied.Sub(start)
	if elapsed <= 0 {
		elapsed = offeredFor
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	res := w6Result{applied: float64(applied) / elapsed.Seconds(), offered: float64(offered) / offeredFor.Seconds(), toLast: elapsed.Seconds(),
		unapplied: float64(posted.n), noWelcome: float64(len(firstOf)), attrP50: pct(attrLags, 50), attrP99: pct(attrLags, 99),
		inboxP50: pct(inboxLags, 50), inboxP99: pct(inboxLags, 99), peakBacklog: float64(peakBacklog), refused: float64(refused),
		rssMiB: float64(ru.Maxrss) / 1024, heapMiB: float64(peakHeap) / (1 << 20)}
	if applied > 0 { // the process's CPU (user + system, the load's HTTP client included) per applied login
		cpu := time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime) - syscall.TimevalToNsec(ru0.Utime) - syscall.TimevalToNsec(ru0.Stime))
		res.cpuPerLogin = float64(cpu.Microseconds()) / float64(applied)
	}
	b.Logf("W6: %d offered in %s, %d applied, last %s after start; backlog per second: %v", offered, offeredFor.Round(time.Millisecond),
		applied, elapsed.Round(time.Millisecond), backlog)
	if len(firstOf) > 0 { // name what the missing welcome messages wait for
		db, err := sql.Open("sqlite", filepath.Join(dir, "automation.db"))
		if err == nil {
			n := 0
			for c := range firstOf {
				if n++; n > 5 {
					break
				}
				var st, ak string
				var attempts int
				err := db.QueryRowContext(ctx, `SELECT Status, ActionKey, AttemptCount FROM CampaignCommand WHERE RecipientId = ? ORDER BY Id LIMIT 1`, c).Scan(&st, &ak, &attempts)
				var attr int
				_ = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM Outbox WHERE SessionId = ? AND PublishedOn IS NULL`, c).Scan(&attr)
				b.Logf("W6: no welcome for %s: first command %s %s attempts %d (%v); unpublished outbox rows of the session %d", c, ak, st, attempts, err, attr)
			}
			db.Close()
		}
	}
	if rt.Pump != nil && applied > 0 {
		res.msgsPerLogin = float64(rt.Pump.Metrics.Published.Load()) / float64(applied)
	}
	if rt.Pump != nil {
		b.Logf("W6: eager publisher: %d wakes, %d drains, %d published; events log lines %d (%d at DEBUG)", rt.Pump.Metrics.Wakes.Load(),
			rt.Pump.Metrics.Drains.Load(), rt.Pump.Metrics.Published.Load(), rt.EventLog.Lines.Load(), rt.EventLog.Demoted.Load())
	}
	if applied > 0 {
		res.writerPerLogin = float64(writer.held().Microseconds()) / float64(applied)
	}
	if minutes := int(offeredFor / time.Minute); minutes >= 2 { // what costs the writer more as the tables grow
		last := int(offeredFor / w6WriterWindow)
		b.Logf("W6: writer, first minute: %s", describeHolds(writer.span(0, 6), 12))
		b.Logf("W6: writer, last minute of the load: %s", describeHolds(writer.span(last-6, last), 12))
	}
	if w, ok := rt.Store.(interface{ WriteStats() sqlstore.WriteStats }); ok {
		ws := w.WriteStats()
		b.Logf("W6: writer: %d write transactions in %d commits", ws.Transactions, ws.Commits)
		if ws.Commits > 0 {
			res.txPerCommit = float64(ws.Transactions) / float64(ws.Commits)
		}
		if applied > 0 {
			res.txPerLogin = float64(ws.Transactions) / float64(applied)
		}
	}
	return res
}

// pct is the p-th percentile of ds in milliseconds (0 when empty).
func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, len(s)*p/100)
	return float64(s[i]) / float64(time.Millisecond)
}

// w6Meter counts one destination's deliveries on the in-process bus: messages, handler
// invocations (a batch is one) and the time spent in its handler (summed over consumers,
// so above a second per second when several run at once).
type w6Meter struct {
	dest                string
	msgs, calls, busyNs atomic.Int64
	lastMsgs, lastCalls int64
	lastBusy            int64
}

// w6Meters are the meters of every destination with a consumer (W6_QUEUES).
type w6Meters []*w6Meter

// meterConsumers wraps the handler of every Service Bus destination the local host
// subscribed to on rt's in-process bus with a meter (call it after LocalHost).
func meterConsumers(rt *app.Runtime) w6Meters {
	if rt.Memory == nil {
		return nil
	}
	var dests []string
	dests = append(dests, topology.Queues()...)
	for _, sub := range topology.Subscriptions() {
		if !slices.Contains(dests, sub.Topic) {
			dests = append(dests, sub.Topic)
		}
	}
	var ms w6Meters
	for _, d := range dests {
		m := &w6Meter{dest: d}
		if bh, most := rt.Memory.BatchHandler(d); bh != nil {
			rt.Memory.SubscribeBatch(d, most, func(ctx context.Context, batch []bus.Message) error {
				t := time.Now()
				err := bh(ctx, batch)
				m.msgs.Add(int64(len(batch)))
				m.calls.Add(1)
				m.busyNs.Add(int64(time.Since(t)))
				return err
			})
		} else if h := rt.Memory.Handler(d); h != nil {
			rt.Memory.Subscribe(d, func(ctx context.Context, msg bus.Message) error {
				t := time.Now()
				err := h(ctx, msg)
				m.msgs.Add(1)
				m.calls.Add(1)
				m.busyNs.Add(int64(time.Since(t)))
				return err
			})
		} else {
			continue
		}
		ms = append(ms, m)
	}
	return ms
}

// second returns, per destination with deliveries since the last call, the messages,
// invocations and handler time of that interval ("campaign-commands 410/410 in 1.32s").
func (ms w6Meters) second() string {
	var parts []string
	for _, m := range ms {
		msgs, calls, busy := m.msgs.Load(), m.calls.Load(), m.busyNs.Load()
		if msgs != m.lastMsgs {
			parts = append(parts, fmt.Sprintf("%s %d/%d in %s", m.dest, msgs-m.lastMsgs, calls-m.lastCalls,
				time.Duration(busy-m.lastBusy).Round(10*time.Millisecond)))
		}
		m.lastMsgs, m.lastCalls, m.lastBusy = msgs, calls, busy
	}
	return strings.Join(parts, ", ")
}

// pendingLogins holds the first POST instant (Unix nanoseconds; 0: none) of each login not
// yet applied, by the number its id ends in (w6-login-%08d, w6-burst-%06d): a slice, not a
// map of ids, so that the harness's own memory stays small beside the process whose RSS it
// reports (a map of ids never shrinks: at a backlog of 35,000 logins it held 8 MiB, a third
// of the heap in use 100 s into a run; an id costs 8 bytes here). n counts the pending ones.
type pendingLogins struct {
	at []int64
	n  int
}

// loginSeq is the number id ends in, and whether it has one.
func loginSeq(id string) (int, bool) {
	i := strings.LastIndexByte(id, '-')
	k, err := strconv.Atoi(id[i+1:])
	return k, err == nil && k >= 0
}

// post notes the first POST of login id at t (a later one of the same login keeps the first).
func (p *pendingLogins) post(id string, t time.Time) {
	k, ok := loginSeq(id)
	if !ok {
		return
	}
	if k >= len(p.at) {
		p.at = append(p.at, make([]int64, k+1-len(p.at))...)
	}
	if p.at[k] == 0 {
		p.at[k] = t.UnixNano()
		p.n++
	}
}

// take returns the first POST of login id and forgets it (false: not pending).
func (p *pendingLogins) take(id string) (time.Time, bool) {
	k, ok := loginSeq(id)
	if !ok || k >= len(p.at) || p.at[k] == 0 {
		return time.Time{}, false
	}
	t := p.at[k]
	p.at[k] = 0
	p.n--
	return time.Unix(0, t), true
}
