package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
)

// TestServeRunsTheScenarioThroughTheFunctionRoutes feeds the realistic scenario's events to
// `serve`'s routes (POST /api/local/domain-events → in-process topic → DomainEventHandler as
// a host invocation), fires DueWorkPoller and OutboxRelay as timer invocations whenever work
// is due, and lets NotificationDispatch send through the log channel. The deliveries must be
// exactly the replay golden file's (key, recipient, local time).
func TestServeRunsTheScenarioThroughTheFunctionRoutes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../testdata/scenarios/realistic.json")
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Start, Until  time.Time
		BusinessUnits []struct{ ID, Name, TimeZone string }
		Settings      []json.RawMessage `json:"reminderSettings"`
		Inputs        []struct {
			At    time.Time
			Event json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg, _ := config.Load(func(k string) string {
		if k == "AUTOMATION_DATA_DIR" {
			return dir
		}
		return ""
	})
	clock := automation.NewManualClock(sc.Start)
	out := &logsink.Buffer{}
	logs := &logsink.Buffer{}
	log := slog.New(logmask.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: clock, LogOutput: out, Seed: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	host, err := rt.LocalHost("../../functions", cfg, true, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, bu := range sc.BusinessUnits {
		if err := rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: bu.ID, Name: bu.Name, TimeZoneID: bu.TimeZone}); err != nil {
			t.Fatal(err)
		}
	}
	for _, js := range sc.Settings {
		set, err := reminder.ParseSetting(js)
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := reminder.SettingRecord(set, 1, sc.Start)
		if err := rt.Store.ReminderSettingUpsert(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	sort.SliceStable(sc.Inputs, func(i, j int) bool { return sc.Inputs[i].At.Before(sc.Inputs[j].At) })
	rejectedAtRoute, rejectedByHandler := 0, 0
	fire := func() {
		for _, fn := range []string{topology.DueWorkPoller, topology.OutboxRelay} {
			if code, body, err := host.FireTimer(ctx, fn); err != nil || code != 200 {
				t.Fatalf("%s at %s: %d %s %v", fn, clock.Now(), code, body, err)
			}
		}
		if err := host.RunDue(ctx, 10_000); err != nil {
			t.Fatal(err)
		}
	}
	next := 0
	for {
		wake, err := rt.Store.SchedulerNextWakeUp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var inputAt time.Time
		if next < len(sc.Inputs) {
			inputAt = sc.Inputs[next].At
		}
		switch {
		case !inputAt.IsZero() && (wake == nil || !inputAt.After(*wake)):
			clock.Set(inputAt)
			req := httptest.NewRequest(http.MethodPost, app.LocalEventsPath, bytes.NewReader(sc.Inputs[next].Event))
			rec := httptest.NewRecorder()
			rt.Functions.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK:
			case http.StatusBadRequest, http.StatusNotFound:
				rejectedAtRoute++
			case http.StatusUnprocessableEntity:
				rejectedByHandler++
			default:
				t.Fatalf("input %d: %d %s", next, rec.Code, rec.Body.String())
			}
			next++
		case wake != nil && !wake.After(sc.Until):
			w := *wake
			if w.Before(clock.Now()) {
				w = clock.Now()
			}
			clock.Set(w)
			fire()
		default:
			goto done
		}
	}
done:
	var got []string
	for _, l := range out.Lines() {
		if l == "" {
			continue
		}
		var m delivery.Message
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log channel line: %s", l)
		}
		var p reminder.Payload
		_ = json.Unmarshal(m.Payload, &p)
		got = append(got, m.SchedulerKey+"|"+m.Recipient+"|"+p.LocalTime)
	}
	want := goldenDeliveries(t)
	t.Logf("%d deliveries through the routes", len(got))
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("deliveries through the function routes differ from replay:\n got %d %v\nwant %d %v", len(got), got, len(want), want)
	}
	// The three bad events: two refused by the route before anything is stored (not a
	// CloudEvent; an unknown business unit, 404), one dead-lettered by DomainEventHandler
	// (an impossible date).
	// A dead letter is named by the broker MessageId, events.Identity(source, id)
	// (publish.Message).
	messageID := map[string]string{}
	for _, in := range sc.Inputs {
		if ev, err := events.Parse(in.Event); err == nil {
			messageID[ev.ID] = events.Identity(ev.Source, ev.ID)
		}
	}
	deadLettered := 0
	for _, id := range []string{"evt-bad-2", "evt-bad-3"} {
		if _, err := rt.Trace.GetBlob(ctx, trace.DeadLetterBlobName(topology.DomainEventHandler, messageID[id])); err == nil {
			deadLettered++
		}
	}
	if rejectedAtRoute != 2 || rejectedByHandler != 1 || deadLettered != 1 {
		t.Fatalf("rejected at route %d, by the handler %d, dead-lettered %d", rejectedAtRoute, rejectedByHandler, deadLettered)
	}
	// The bus's dead-letter list holds exactly that one (kept there by the runtime so the
	// dead-letter API lists them): nothing else was given up on after retries.
	var listed []string
	for _, d := range rt.Memory.DeadLetters() {
		listed = append(listed, d.Message.Destination+"/"+d.Message.ID)
	}
	if strings.Join(listed, " ") != "domain-events/"+messageID["evt-bad-3"] {
		t.Fatalf("bus dead letters: %v", listed)
	}
	// The run's logs carry row context but no personal data (docs/operations.md#logs).
	all := strings.Join(logs.Lines(), "\n")
	if n := strings.Count(all, "***@"); n < 23 {
		t.Fatalf("expected a masked recipient on each of the 23 delivery log lines, found %d", n)
	}
	if !strings.Contains(all, `"schedulerKey"`) || !strings.Contains(all, `"businessUnitId"`) {
		t.Fatalf("logs lack row context:\n%.2000s", all)
	}
	if leak := regexp.MustCompile(`[A-Za-z0-9._%+-]{2,}@[A-Za-z0-9.-]+\.[a-z]{2,}`).FindString(all); leak != "" {
		t.Fatalf("unmasked address %q in the logs", leak)
	}
	checkLogLines(t, logs.Lines())
}

func goldenDeliveries(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../testdata/golden/realistic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["kind"] == "delivery" {
			out = append(out, m["schedulerKey"].(string)+"|"+m["recipient"].(string)+"|"+m["localTime"].(string))
		}
	}
	sort.Strings(out)
	return out
}
