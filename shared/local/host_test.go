package local_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/local"
	"github.com/automation-platform/automation/shared/topology"
)

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"*/30 * * * * *", "0 0 * * * *", "0 */5 9-17 * * MON-FRI"} {
		if _, err := local.ParseSchedule(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"* * * * *", "61 * * * * *", "", "every minute"} {
		if _, err := local.ParseSchedule(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	s, _ := local.ParseSchedule("*/30 * * * * *")
	at := time.Date(2026, 9, 1, 0, 0, 10, 0, time.UTC)
	if got := s.Next(at); !got.Equal(at.Add(20 * time.Second)) {
		t.Fatalf("next %s", got)
	}
}

type recorder struct {
	timers []string
	msgs   []*funchost.ServiceBusMessage
	fail   int
}

func setup(t *testing.T, rec *recorder, clock automation.Clock, b *bus.Memory) *local.Host {
	t.Helper()
	r := funchost.NewRouter(nil)
	r.Register("Tick", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		ti, err := inv.Timer("timer")
		if err != nil {
			return funchost.Result{}, err
		}
		if ti.ScheduleStatus == nil {
			return funchost.Result{}, errors.New("local host must send a ScheduleStatus")
		}
		rec.timers = append(rec.timers, clock.Now().Format(time.RFC3339))
		return funchost.Result{}, nil
	})
	r.Register("Consume", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		m, err := inv.ServiceBus("message")
		if err != nil {
			return funchost.Result{}, err
		}
		rec.msgs = append(rec.msgs, m)
		if rec.fail > 0 {
			rec.fail--
			return funchost.Result{}, errors.New("try again")
		}
		return funchost.Result{}, nil
	})
	defs := []funchost.FunctionDef{
		{Name: "Tick", Trigger: funchost.BindingDef{Name: "timer", Type: funchost.TriggerTimer, Schedule: "%S%"}},
		{Name: "Consume", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "q"}},
	}
	h, err := local.NewHost(r, b, defs, func(n string) (string, bool) { return "0 */10 * * * *", n == "S" }, clock, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestTimersFireOnTheirSchedule(t *testing.T) {
	t.Parallel()
	clock := automation.NewManualClock(time.Date(2026, 9, 1, 0, 0, 1, 0, time.UTC))
	rec := &recorder{}
	h := setup(t, rec, clock, bus.NewMemory(nil))
	ctx := context.Background()
	for _, at := range []string{"2026-09-01T00:05:00Z", "2026-09-01T00:10:00Z", "2026-09-01T00:10:30Z", "2026-09-01T00:31:00Z"} {
		v, _ := time.Parse(time.RFC3339, at)
		clock.Set(v)
		if err := h.RunDue(ctx, 10); err != nil {
			t.Fatal(err)
		}
	}
	// Fires at 00:10 and, after missing 00:20 and 00:30, once at 00:31 (no burst of catch-ups).
	if strings.Join(rec.timers, " ") != "2026-09-01T00:10:00Z 2026-09-01T00:31:00Z" {
		t.Fatalf("fired at %v", rec.timers)
	}
	if _, _, err := h.FireTimer(ctx, "Nope"); err == nil {
		t.Fatal("unknown timer accepted")
	}
}

func TestMessagesArriveAsHostInvocationsAndFailuresAreRetried(t *testing.T) {
	t.Parallel()
	clock := automation.NewManualClock(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
	rec := &recorder{fail: 1}
	b := bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: 3})
	h := setup(t, rec, clock, b)
	body := `{"deliveryKey":"dlv_1","note":"quotes \" and \\ survive"}`
	if err := b.Publish(context.Background(), bus.Message{ID: "m-1", Destination: "q", SessionID: "s-1", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if err := h.RunDue(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if len(rec.msgs) != 2 {
		t.Fatalf("deliveries %d, want 2 (one failure, one retry)", len(rec.msgs))
	}
	m := rec.msgs[1]
	if string(m.Body) != body || m.MessageID != "m-1" || m.SessionID != "s-1" || m.DeliveryCount != 2 {
		t.Fatalf("decoded %+v", m)
	}
	// A handler that always fails ends in the dead-letter list after MaxDeliveryCount.
	rec.fail = 100
	_ = b.Publish(context.Background(), bus.Message{ID: "m-2", Destination: "q", Body: []byte(`{}`)})
	_ = h.RunDue(context.Background(), 10)
	if dl := b.DeadLetters(); len(dl) != 1 || dl[0].Message.ID != "m-2" || !strings.Contains(dl[0].Reason, "500") {
		t.Fatalf("dead letters %+v", dl)
	}
}

func TestNewHostRejectsBadSchedules(t *testing.T) {
	t.Parallel()
	defs := []funchost.FunctionDef{{Name: "Tick", Trigger: funchost.BindingDef{Name: "timer", Type: funchost.TriggerTimer, Schedule: "%Missing%"}}}
	_, err := local.NewHost(funchost.NewRouter(nil), bus.NewMemory(nil), defs, func(string) (string, bool) { return "", false }, automation.SystemClock{}, nil)
	if err == nil {
		t.Fatal("unresolved setting accepted")
	}
	defs[0].Trigger.Schedule = "not cron"
	_, err = local.NewHost(funchost.NewRouter(nil), bus.NewMemory(nil), defs, func(string) (string, bool) { return "", false }, automation.SystemClock{}, nil)
	if err == nil {
		t.Fatal("bad schedule accepted")
	}
}

// Start-up names the HTTP functions the listener serves, in one INFO line, and never logs
// them as triggers the local host "does not run" (which read like an error at start-up).
func TestNewHostLogsTheHTTPFunctionsItServes(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	defs := []funchost.FunctionDef{
		{Name: "SupportApi", Trigger: funchost.BindingDef{Name: "req", Type: funchost.TriggerHTTP, Route: "support/{*path}"}},
		{Name: "BusinessUnitsApi", Trigger: funchost.BindingDef{Name: "req", Type: funchost.TriggerHTTP, Route: "business-units/{*rest}"}},
	}
	h, err := local.NewHost(funchost.NewRouter(nil), bus.NewMemory(nil), defs, func(string) (string, bool) { return "", false }, automation.SystemClock{}, log)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/api/business-units/{*rest} (BusinessUnitsApi)", "/api/support/{*path} (SupportApi)"}
	if got := h.HTTPFunctions(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("HTTPFunctions = %q, want %q", got, want)
	}
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `"msg":"serving HTTP functions","count":2,"routes":["/api/business-units/{*rest} (BusinessUnitsApi)","/api/support/{*path} (SupportApi)"]`) {
		t.Fatalf("start-up log:\n%s", out)
	}
	if strings.Contains(out, "not run") {
		t.Fatalf("start-up log still says an HTTP function is not run:\n%s", out)
	}
}

// A function declared "cardinality": "many" gets the messages waiting at once in one
// invocation (up to topology.MaxMessageBatchSize), in the host's batch payload, which
// funchost decodes message by message; a failed batch comes again, each message with its
// own DeliveryCount.
func TestBatchFunctionGetsWaitingMessagesInOneInvocation(t *testing.T) {
	t.Parallel()
	clock := automation.NewManualClock(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
	b := bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: 3})
	r := funchost.NewRouter(nil)
	var calls [][]*funchost.ServiceBusMessage
	fail := 1
	r.Register("ConsumeMany", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		items, err := inv.ServiceBusBatch("message")
		if err != nil {
			return funchost.Result{}, err
		}
		var ms []*funchost.ServiceBusMessage
		for _, it := range items {
			if it.Err != nil {
				return funchost.Result{}, it.Err
			}
			ms = append(ms, it.Message)
		}
		calls = append(calls, ms)
		if fail > 0 {
			fail--
			return funchost.Result{}, errors.New("try again")
		}
		return funchost.Result{}, nil
	})
	defs := []funchost.FunctionDef{{Name: "ConsumeMany", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "q", Cardinality: "many"}}}
	h, err := local.NewHost(r, b, defs, func(string) (string, bool) { return "", false }, clock, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := topology.MaxMessageBatchSize + 20
	for i := range n {
		m := bus.Message{ID: fmt.Sprintf("m-%03d", i), Destination: "q", Body: []byte(fmt.Sprintf(`{"deliveryKey":"dlv_%d","note":"\" \\"}`, i))}
		if i == 1 {
			m.SessionID = "s-1"
		}
		if err := b.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.RunDue(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// The first batch fails and its messages go back at the tail: the next batch takes the
	// 20 not yet delivered and 80 of them, the last the remaining 20.
	if sizes := fmt.Sprint(len(calls[0]), len(calls[1]), len(calls[2])); len(calls) != 3 || sizes != fmt.Sprint(topology.MaxMessageBatchSize, topology.MaxMessageBatchSize, 20) {
		t.Fatalf("%d invocations, of %s messages", len(calls), sizes)
	}
	seen := map[string]bool{}
	for _, m := range append(calls[1], calls[2]...) {
		var i int
		if _, err := fmt.Sscanf(m.MessageID, "m-%03d", &i); err != nil || seen[m.MessageID] {
			t.Fatalf("message %q (%v) twice or unknown", m.MessageID, err)
		}
		seen[m.MessageID] = true
		wantCount := 1
		if i < topology.MaxMessageBatchSize {
			wantCount = 2
		}
		if string(m.Body) != fmt.Sprintf(`{"deliveryKey":"dlv_%d","note":"\" \\"}`, i) || m.DeliveryCount != wantCount ||
			(i == 1) != (m.SessionID == "s-1") || m.ContentType != "application/json" || !m.EnqueuedTimeUtc.Equal(clock.Now()) {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	if len(seen) != n || b.Len("q") != 0 {
		t.Fatalf("%d of %d messages completed; %d left", len(seen), n, b.Len("q"))
	}
	// Deliver (bypassing the queue) invokes a batch function with a batch of one.
	if code, _, err := h.Deliver(ctx, "q", bus.Message{ID: "direct", Destination: "q", Body: []byte(`{}`)}); err != nil || code != 200 ||
		len(calls) != 4 || len(calls[3]) != 1 || calls[3][0].MessageID != "direct" || calls[3][0].DeliveryCount != 1 {
		t.Fatalf("Deliver: %d %v, %d calls", code, err, len(calls))
	}
}
