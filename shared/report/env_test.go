package report_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/report"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace/localtrace"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// env is a real pipeline on SQLite: the report service, the due-work poller with the report
// handler, the outbox relay and the dispatcher on the in-process bus.
type env struct {
	st     *sqlstore.Store
	tr     *localtrace.Store
	clock  *automation.ManualClock
	svc    *report.Service
	poller *scheduler.Poller
	relay  *delivery.Relay
	bus    *bus.Memory
	render *countingRenderer
	// runs counts the pollers' runs for the overview (report.Handler.Runs).
	runs *metricscount.Counts

	mu   sync.Mutex
	sent []delivery.Message
}

// countingRenderer wraps the activity renderer and counts renders.
type countingRenderer struct {
	inner report.Renderer
	n     atomic.Int64
	fail  atomic.Pointer[error]
	delay time.Duration
}

func (c *countingRenderer) Formats() []string { return c.inner.Formats() }

func (c *countingRenderer) Render(ctx context.Context, r report.RenderRequest) (report.File, error) {
	c.n.Add(1)
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	if e := c.fail.Load(); e != nil {
		return report.File{}, *e
	}
	return c.inner.Render(ctx, r)
}

var (
	subGuid  = "5e0c8a52-3b1f-4d6e-9a7c-2f4b6d8e0a1c"
	subGuid2 = "6f1d9b63-4c2a-4e7f-8b8d-3a5c7e9f1b2d"
)

func newEnv(t *testing.T, start time.Time) *env {
	t.Helper()
	dir := t.TempDir()
	st := sqlitetest.OpenAt(t, filepath.Join(dir, "r.db"), nil)
	tr := sqlitetest.OpenTrace(t, dir)
	storetest.Units(t, st, storetest.SydneyAndNewYork...)
	e := &env{st: st, tr: tr, clock: automation.NewManualClock(start), bus: bus.NewMemory(nil)}
	e.render = &countingRenderer{inner: &report.ActivityRenderer{Store: st}}
	reg := report.NewRegistry()
	reg.Register(report.ActivityReportType, e.render)
	var err error
	e.svc, err = report.New(report.Config{Store: st, Blobs: tr, Renderers: reg, Channels: map[string]bool{"log": true}, Clock: e.clock, Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	e.poller = e.newPoller(t)
	e.relay = &delivery.Relay{Store: st, Publisher: e.bus, Clock: e.clock}
	disp := &delivery.Dispatcher{Store: st, Clock: e.clock, Channels: map[string]delivery.Channel{"log": delivery.FuncChannel(func(_ context.Context, m delivery.Message) (string, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.sent = append(e.sent, m)
		return m.DeliveryKey, nil
	})}}
	e.bus.Subscribe(topology.NotificationDispatchQueue, disp.Handle)
	return e
}

func (e *env) newPoller(t *testing.T) *scheduler.Poller {
	t.Helper()
	sreg := scheduler.NewRegistry()
	if e.runs == nil {
		e.runs = metricscount.New(metricscount.FlowReport)
	}
	sreg.Register(automation.TypeReportSubscription, &report.Handler{Service: e.svc, Runs: e.runs})
	p, err := scheduler.NewPoller(scheduler.Config{Concurrency: 1, Lease: time.Minute, Backoff: scheduler.Backoff{Steps: scheduler.DefaultBackoff, Rand: func() float64 { return 0 }}},
		e.st, sreg, e.clock, e.tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tick runs stages ② and ③ at the clock's now.
func (e *env) tick(t *testing.T) scheduler.Result {
	t.Helper()
	ctx := context.Background()
	var total scheduler.Result
	for {
		res, err := e.poller.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total.Add(res)
		if res.Claimed == 0 {
			break
		}
	}
	for {
		n, err := e.relay.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.bus.Drain(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return total
		}
	}
}

// runUntil ticks at every wake-up up to until.
func (e *env) runUntil(t *testing.T, until time.Time) {
	t.Helper()
	for i := 0; i < 10_000; i++ {
		w, err := e.st.SchedulerNextWakeUp(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if w == nil || w.After(until) {
			e.clock.Set(until)
			e.tick(t)
			return
		}
		if w.After(e.clock.Now()) {
			e.clock.Set(*w)
		}
		e.tick(t)
	}
	t.Fatal("runUntil did not settle")
}

func (e *env) sentMessages() []delivery.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]delivery.Message(nil), e.sent...)
}

func weekly() report.Input {
	return report.Input{BusinessUnitID: "bu-syd", Name: "Weekly activity", ReportType: report.ActivityReportType,
		Recurrence: report.Recurrence{RRule: "FREQ=WEEKLY;BYDAY=MO", DTStart: "2027-03-01T08:00"},
		Format:     "csv", Template: "report-ready", Channels: []string{"log"}, Recipients: []string{"ops@example.test", "lead@example.test"}}
}

// cutoverEnv is newEnv(t, start) holding the weekly() subscription subGuid in cutover mode.
func cutoverEnv(t *testing.T, start time.Time) *env {
	t.Helper()
	e := newEnv(t, start)
	e.create(t, subGuid, weekly())
	e.setMode(t, subGuid, report.ModeCutover)
	return e
}

func (e *env) setMode(t *testing.T, guid string, m report.Mode) {
	t.Helper()
	if _, err := e.svc.SetRollout(context.Background(), automation.AllBusinessUnits(), store.RolloutSubscription, guid, m, "test"); err != nil {
		t.Fatal(err)
	}
}

func (e *env) create(t *testing.T, guid string, in report.Input) report.View {
	t.Helper()
	v, err := e.svc.Create(context.Background(), automation.AllBusinessUnits(), guid, in)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (e *env) open(t *testing.T, guid string) []automation.SchedulerRow {
	t.Helper()
	rows, err := e.st.ReportSchedulerListOpen(context.Background(), guid, 100)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func payloadOf(t *testing.T, m delivery.Message) report.Payload {
	t.Helper()
	var p report.Payload
	if err := json.Unmarshal([]byte(m.PayloadJSON), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func countRows(t *testing.T, st store.SchedulerStore) map[automation.Status]int {
	t.Helper()
	c, err := st.SchedulerCountByStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
