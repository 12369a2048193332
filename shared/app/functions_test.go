package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/funchost/funchosttest"
	"github.com/automation-platform/automation/shared/handler"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/local"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
)

const fixtures = "../../testdata/funchost/functions/"

type fnEnv struct {
	rt    *app.Runtime
	host  *local.Host
	clock *automation.ManualClock
	cfg   config.Config
	out   *logsink.Buffer
}

func newFnEnv(t *testing.T, env map[string]string) *fnEnv {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		if k == "AUTOMATION_DATA_DIR" {
			return dir
		}
		return env[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &fnEnv{clock: automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC)), cfg: cfg, out: &logsink.Buffer{}}
	e.rt, err = app.Open(context.Background(), cfg, app.Options{Clock: e.clock, LogOutput: e.out, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.rt.Close() })
	e.host, err = e.rt.LocalHost("../../functions", cfg, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	upsertPoliceCheckSetting(t, e.rt, "30,7,0", "log", "staffEmail", e.clock.Now())
	return e
}

// upsertPoliceCheckSetting stores bu-syd's "Police check expiry" setting the tests share
// (a DateBased reminder on PoliceVetting's expiresOn at 09:00 local, template
// police-vetting-expiry) with offsetsDays offsets (a JSON list's inside: "30,7,0"), one
// channel and the recipients' field, version 1 updated at now.
func upsertPoliceCheckSetting(t *testing.T, rt *app.Runtime, offsets, channel, field string, now time.Time) {
	t.Helper()
	set, err := reminder.ParseSetting([]byte(`{"guid":"0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f","businessUnitId":"bu-syd","name":"Police check expiry",
	  "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[` + offsets + `],"sendLocalTime":"09:00",
	  "template":"police-vetting-expiry","channels":["` + channel + `"],"recipients":{"field":"` + field + `"}}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := reminder.SettingRecord(set, 1, now)
	if err := rt.Store.ReminderSettingUpsert(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// post sends a recorded host payload to /{function} through the Functions router.
func (e *fnEnv) post(t *testing.T, function string, payload []byte) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/"+function, bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Azure-Functions-InvocationId", "inv-1")
	rec := httptest.NewRecorder()
	e.rt.Functions.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || rec.Body.Len() == 0 {
		t.Fatalf("%s: reply must be non-empty JSON, got %q %q", function, ct, rec.Body.String())
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: reply not JSON: %s", function, rec.Body.String())
	}
	return rec.Code, body
}

// postBatchTwice posts the host-shaped batch payload to function fn twice (the host
// redelivers it): each answer must be 200 with messages messages of which one, poison
// (named in the logs), was dead-lettered, and check(round) runs after each. Then, unless
// inRecord is "", poison's dead-letter record must exist and contain inRecord.
func (e *fnEnv) postBatchTwice(t *testing.T, fn string, payload []byte, messages int, poison, inRecord string, check func(round int)) {
	t.Helper()
	for round := 1; round <= 2; round++ {
		code, body := e.post(t, fn, payload)
		rv, _ := body["ReturnValue"].(map[string]any)
		if logs, _ := json.Marshal(body["Logs"]); code != 200 || rv["messages"] != float64(messages) || rv["deadLettered"] != float64(1) || !strings.Contains(string(logs), poison) {
			t.Fatalf("%s round %d: %d %v", fn, round, code, body)
		}
		check(round)
	}
	if inRecord == "" {
		return
	}
	if rec, err := e.rt.Trace.GetBlob(context.Background(), trace.DeadLetterBlobName(fn, poison)); err != nil || !strings.Contains(string(rec), inRecord) {
		t.Fatalf("%s: the dead-letter record of %s: %s %v", fn, poison, rec, err)
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixtures + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withBody rewrites a Service Bus fixture's body and MessageId, keeping the host's shape.
func withBody(t *testing.T, name string, body []byte, messageID string) []byte {
	t.Helper()
	var p map[string]map[string]any
	if err := json.Unmarshal(fixture(t, name), &p); err != nil {
		t.Fatal(err)
	}
	once, _ := json.Marshal(string(body))
	twice, _ := json.Marshal(string(once))
	p["Data"]["message"] = json.RawMessage(twice)
	id, _ := json.Marshal(messageID)
	p["Metadata"]["MessageId"] = string(id)
	out, _ := json.Marshal(p)
	return out
}

func rows(t *testing.T, e *fnEnv) map[automation.Status]int {
	t.Helper()
	c, err := e.rt.Store.SchedulerCountByStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every function answers the host's recorded payloads: the happy path end to end, then
// redelivery and bad input.
func TestFunctionsAnswerHostPayloads(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, nil)
	ctx := context.Background()

	code, body := e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_event.json"))
	if code != 200 || rows(t, e)[automation.StatusPending] != 3 {
		t.Fatalf("DomainEventHandler: %d %v rows %v", code, body, rows(t, e))
	}
	// Redelivery of the same event (same MessageId, DeliveryCount 2): no change.
	code, _ = e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_event.json"))
	if code != 200 || rows(t, e)[automation.StatusPending] != 3 {
		t.Fatalf("redelivery: %d rows %v", code, rows(t, e))
	}
	// Bad input that can never succeed: completed (200) into our dead-letter record.
	for _, f := range []string{"DomainEventHandler_unknown_bu.json", "DomainEventHandler_not_json.json"} {
		code, body = e.post(t, topology.DomainEventHandler, fixture(t, f))
		logs, _ := json.Marshal(body["Logs"])
		if code != 200 || !strings.Contains(string(logs), "dead-lettered") {
			t.Fatalf("%s: %d %v", f, code, body)
		}
	}
	if _, err := e.rt.Trace.GetBlob(ctx, trace.DeadLetterBlobName(topology.DomainEventHandler, "evt-fx-2")); err != nil {
		t.Fatalf("dead-letter record: %v", err)
	}
	if rows(t, e)[automation.StatusPending] != 3 {
		t.Fatal("a rejected event stored rows")
	}

	// Due time of the first occurrence (2026-10-01 09:00 AEST): the poller completes it and
	// queues the delivery; the relay publishes; dispatch sends once.
	e.clock.Set(time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC))
	code, body = e.post(t, topology.DueWorkPoller, fixture(t, "DueWorkPoller_timer.json"))
	rv, _ := body["ReturnValue"].(map[string]any)
	if code != 200 || rv["completed"] != float64(1) {
		t.Fatalf("DueWorkPoller: %d %v", code, body)
	}
	code, body = e.post(t, topology.OutboxRelay, fixture(t, "OutboxRelay_timer.json"))
	if rv, _ := body["ReturnValue"].(map[string]any); code != 200 || rv["published"] != float64(1) || e.rt.Memory.Len(topology.NotificationDispatchQueue) != 1 {
		t.Fatalf("OutboxRelay: %d %v", code, body)
	}
	if err := e.host.RunDue(ctx, 100); err != nil { // delivers the dispatch message as the host would
		t.Fatal(err)
	}
	lines := e.out.Lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "amelia.nguyen@example.test") {
		t.Fatalf("log channel: %q", lines)
	}
	var sent delivery.Message
	_ = json.Unmarshal([]byte(lines[0]), &sent)
	// The same dispatch message again (the host redelivers after a lost ack): not sent twice.
	code, _ = e.post(t, topology.NotificationDispatch, withBody(t, "NotificationDispatch_malformed.json", []byte(`{"deliveryKey":"`+sent.DeliveryKey+`"}`), sent.DeliveryKey))
	if code != 200 || len(e.out.Lines()) != 1 {
		t.Fatalf("redelivered dispatch: %d, %d lines", code, len(e.out.Lines()))
	}
	code, body = e.post(t, topology.NotificationDispatch, fixture(t, "NotificationDispatch_malformed.json"))
	if logs, _ := json.Marshal(body["Logs"]); code != 200 || !strings.Contains(string(logs), "dead-lettered") {
		t.Fatalf("malformed dispatch: %d %v", code, body)
	}
	// A malformed invocation is a 400; an unknown function a 404.
	if code, _ := e.post(t, topology.DueWorkPoller, []byte(`{"Data":`)); code != 400 {
		t.Fatalf("malformed invocation: %d", code)
	}
	if code, _ := e.post(t, "NoSuchFunction", fixture(t, "DueWorkPoller_timer.json")); code != 404 {
		t.Fatalf("unknown function: %d", code)
	}
	// A retryable failure (the store is gone) answers non-2xx so the host retries.
	e.rt.Store.Close()
	if code, body := e.post(t, topology.DueWorkPoller, fixture(t, "DueWorkPoller_timer.json")); code/100 == 2 {
		t.Fatalf("store failure must not be acknowledged: %d %v", code, body)
	}
}

// Fan-out mode: the poller claims and sends one due-work message per row; DueWorkExecutor
// executes it; a redelivered message after completion is a no-op.
func TestFanOutThroughDueWorkExecutor(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, map[string]string{"AUTOMATION_DUEWORK_MODE": "fanout"})
	if code, _ := e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_event.json")); code != 200 {
		t.Fatal(code)
	}
	e.clock.Set(time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC))
	code, body := e.post(t, topology.DueWorkPoller, fixture(t, "DueWorkPoller_timer.json"))
	if rv, _ := body["ReturnValue"].(map[string]any); code != 200 || rv["fannedOut"] != float64(1) || e.rt.Memory.Len(topology.DueWorkQueue) != 1 {
		t.Fatalf("fan out: %d %v", code, body)
	}
	if rows(t, e)[automation.StatusProcessing] != 1 {
		t.Fatalf("claimed row: %v", rows(t, e))
	}
	if err := e.host.RunDue(context.Background(), 100); err != nil { // DueWorkExecutor via the bus
		t.Fatal(err)
	}
	if rows(t, e)[automation.StatusCompleted] != 1 {
		t.Fatalf("after executor: %v", rows(t, e))
	}
	r, _ := e.rt.Store.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: "3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b", Limit: 10})
	var done automation.SchedulerRow
	for _, x := range r {
		if x.Status == automation.StatusCompleted {
			done = x
		}
	}
	msg, _ := json.Marshal(handler.DueWorkMessage{SchedulerKey: done.SchedulerKey, Token: done.Version - 1})
	code, body = e.post(t, topology.DueWorkExecutor, withBody(t, "NotificationDispatch_malformed.json", msg, "dup"))
	if rv, _ := body["ReturnValue"].(map[string]any); code != 200 || rv["outcome"] != "Stale" {
		t.Fatalf("redelivered due-work: %d %v", code, body)
	}
	code, body = e.post(t, topology.DueWorkExecutor, withBody(t, "NotificationDispatch_malformed.json", []byte(`{"schedulerKey":""}`), "bad"))
	if logs, _ := json.Marshal(body["Logs"]); code != 200 || !strings.Contains(string(logs), "dead-lettered") {
		t.Fatalf("malformed due-work: %d %v", code, body)
	}
}

func TestLocalEventsRoute(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, nil)
	var last string
	post := func(body string, ct ...string) int {
		req := httptest.NewRequest(http.MethodPost, app.LocalEventsPath, strings.NewReader(body))
		if len(ct) > 0 {
			req.Header.Set("Content-Type", ct[0])
		}
		rec := httptest.NewRecorder()
		e.rt.Functions.ServeHTTP(rec, req)
		if rec.Code != 200 && rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%d answered as %q, want problem details", rec.Code, rec.Header().Get("Content-Type"))
		}
		last = rec.Body.String()
		return rec.Code
	}
	raw := `{"specversion":"1.0","id":"evt-l","source":"/hr","type":"PoliceVetting.Upserted","businessunitid":"bu-syd","entitytype":"PoliceVetting","entityguid":"g-9","revision":1,"data":{"expiresOn":"2026-12-01","staffEmail":"x@example.test"}}`
	// Processed before the answer: nothing waits in memory.
	if code := post(raw); code != 200 || rows(t, e)[automation.StatusPending] != 3 || !strings.Contains(last, `"status":"processed"`) {
		t.Fatalf("valid event: %d %s rows %v", code, last, rows(t, e))
	}
	// The same source and id again: answered "duplicate", never a bare "processed" (nothing
	// is done, even when the data changed under the old id).
	changed := strings.Replace(raw, "2026-12-01", "2026-12-24", 1)
	if code := post(changed); code != 200 || last != `{"eventId":"evt-l","status":"duplicate"}`+"\n" || rows(t, e)[automation.StatusPending] != 3 {
		t.Fatalf("re-sent event id: %d %q rows %v", code, last, rows(t, e))
	}
	batch := "[" + raw + "," + strings.Replace(raw, `"evt-l"`, `"evt-l2"`, 1) + "]"
	if code := post(batch, "application/cloudevents-batch+json"); code != 200 ||
		!strings.Contains(last, `{"eventId":"evt-l","status":"duplicate"},{"eventId":"evt-l2","status":"processed"}`) {
		t.Fatalf("batch with a duplicate: %d %s", code, last)
	}
	// The same id from a second producer (another source) is another event (CloudEvents:
	// source + id): processed, not a duplicate; each source's re-send is its duplicate.
	other := strings.Replace(strings.Replace(raw, `"/hr"`, `"/pos"`, 1), `"g-9"`, `"g-10"`, 1)
	if code := post(other); code != 200 || !strings.Contains(last, `"status":"processed"`) || rows(t, e)[automation.StatusPending] != 6 {
		t.Fatalf("the same id from another source: %d %s rows %v", code, last, rows(t, e))
	}
	if code := post(other); code != 200 || !strings.Contains(last, `"status":"duplicate"`) || rows(t, e)[automation.StatusPending] != 6 {
		t.Fatalf("the other source's re-send: %d %s rows %v", code, last, rows(t, e))
	}
	if code := post(`{"id":1}`); code != 400 {
		t.Fatalf("invalid event: %d", code)
	}
	if code := post(strings.Replace(strings.Replace(raw, `"bu-syd"`, `"bu-mel"`, 1), `"evt-l"`, `"evt-m"`, 1)); code != 404 {
		t.Fatalf("event of an unknown business unit: %d, want 404 (refused before anything is stored, as POST /api/events does)", code)
	}
	// Its title is spelled as every API route's 404 (httpapi's table), not net/http's
	// "Not Found"; so is the router's own 404 of a path no function serves.
	if !strings.Contains(last, `"title":"Not found"`) || httpapi.ProblemTitle(automation.CodeNotFound, 404) != "Not found" {
		t.Fatalf("404 of /api/local/domain-events: %s, want the title \"Not found\" of /api/events", last)
	}
	{
		rec := httptest.NewRecorder()
		e.rt.Functions.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/no-such-function", nil))
		if rec.Code != 404 || !strings.Contains(rec.Body.String(), `"title":"Not found"`) {
			t.Fatalf("the router's 404: %d %s, want the title \"Not found\"", rec.Code, rec.Body.String())
		}
	}
	// A dead letter of the route is named by the MessageId, events.Identity(source, id).
	if n, err := e.rt.Trace.GetBlob(context.Background(), trace.DeadLetterBlobName(topology.DomainEventHandler, events.Identity("/hr", "evt-m"))); err == nil {
		t.Fatalf("an event of an unknown business unit was dead-lettered (%d bytes) instead of refused", len(n))
	}
	if e.rt.Memory.Len("domain-events") != 0 {
		t.Fatal("events must not wait in the in-process queue")
	}
}

// The Functions router, the function folders and the handler registrations must not drift.
func TestFunctionFoldersMatchRoutes(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, nil)
	defs := funchosttest.Folders(t, "../../functions")
	var folders []string
	for _, d := range defs {
		if d.Trigger.Type == funchost.TriggerHTTP {
			continue // TestHTTPFunctionFoldersCoverRoutes
		}
		folders = append(folders, d.Name)
		want := "message"
		if d.Trigger.Type == funchost.TriggerTimer {
			want = "timer"
		}
		if d.Trigger.Name != want {
			t.Errorf("%s: trigger binding %q, the handler reads %q", d.Name, d.Trigger.Name, want)
		}
	}
	routes := e.rt.Functions.Functions()
	sort.Strings(folders)
	sort.Strings(routes)
	if strings.Join(folders, ",") != strings.Join(routes, ",") {
		t.Fatalf("function folders %v, registered functions %v", folders, routes)
	}
	recs, err := e.rt.Trace.JobsByKey(context.Background(), "deadletter:DomainEventHandler:m-3")
	if err != nil || len(recs) != 0 {
		t.Fatalf("%v %v", recs, err)
	}
	e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_not_json.json"))
	recs, _ = e.rt.Trace.JobsByKey(context.Background(), "deadletter:DomainEventHandler:m-3")
	if len(recs) != 1 || recs[0].Outcome != trace.OutcomeDeadLettered || recs[0].TraceBlobName == "" {
		t.Fatalf("dead-letter trace row: %+v", recs)
	}
}

// A restart forgets the in-process queue but not the jobs: RedispatchUnsent re-queues every
// job not yet sent, and the send claim keeps each to one send.
func TestRedispatchAfterRestart(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, nil)
	if code, _ := e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_event.json")); code != 200 {
		t.Fatal(code)
	}
	e.clock.Set(time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC))
	e.post(t, topology.DueWorkPoller, fixture(t, "DueWorkPoller_timer.json"))
	e.post(t, topology.OutboxRelay, fixture(t, "OutboxRelay_timer.json"))
	// "Restart": a fresh runtime on the same data folder; the queued dispatch message is gone.
	e.rt.Close()
	out := &logsink.Buffer{}
	rt, err := app.Open(context.Background(), e.cfg, app.Options{Clock: e.clock, LogOutput: out, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	host, err := rt.LocalHost("../../functions", e.cfg, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // twice: the second finds nothing unsent
		n, err := rt.RedispatchUnsent(context.Background())
		if err != nil || n != 1-i {
			t.Fatalf("round %d: redispatched %d %v", i, n, err)
		}
		if err := host.RunDue(context.Background(), 100); err != nil {
			t.Fatal(err)
		}
	}
	if lines := out.Lines(); len(lines) != 1 || !strings.Contains(lines[0], "dlv_") {
		t.Fatalf("sent after restart: %q", lines)
	}
}

// checkHTTPFolders: every HTTP route the app registers is covered by one HTTP function
// folder (route prefix and method, authLevel "function"), each folder covers at least one
// route, and each route is served by the router (not the router's "no HTTP function" 404).

// With AUTOMATION_RELAY_AFTER_POLL (the low traffic profile) the poll that completed a row
// publishes its delivery at once, on the commit path; without it the delivery waits for the
// OutboxRelay timer.
func TestRelayAfterPoll(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		env := map[string]string{"AUTOMATION_RELAY_AFTER_POLL": "false"}
		if on {
			env["AUTOMATION_RELAY_AFTER_POLL"] = "true"
		}
		e := newFnEnv(t, env)
		if code, body := e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_event.json")); code != 200 {
			t.Fatalf("event: %d %v", code, body)
		}
		e.clock.Set(time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC))
		code, body := e.post(t, topology.DueWorkPoller, fixture(t, "DueWorkPoller_timer.json"))
		if rv, _ := body["ReturnValue"].(map[string]any); code != 200 || rv["completed"] != float64(1) {
			t.Fatalf("DueWorkPoller: %d %v", code, body)
		}
		want := 0
		if on {
			want = 1
		}
		if got := e.rt.Memory.Len(topology.NotificationDispatchQueue); got != want {
			t.Fatalf("relay after poll %v: %d dispatch messages after the poll, want %d", on, got, want)
		}
		// The timer (the safety net) finds nothing left when the poll relayed.
		_, body = e.post(t, topology.OutboxRelay, fixture(t, "OutboxRelay_timer.json"))
		if rv, _ := body["ReturnValue"].(map[string]any); rv["published"] != float64(1-want) {
			t.Fatalf("relay after poll %v: OutboxRelay published %v", on, rv["published"])
		}
	}
}

// TestDueWorkPollerDrainsUpToTheBound: with AUTOMATION_DUEWORK_DRAIN_BATCHES above 1 (the
// default is 1000), one DueWorkPoller invocation claims batch after batch
// (scheduler.Poller.Drain) until nothing is due or the bound is reached; with 1 it claims
// one batch.
func TestDueWorkPollerDrainsUpToTheBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		drain       string
		wantClaimed float64
	}{{"", 3}, {"1", 1}, {"2", 2}, {"5", 3}} {
		e := newFnEnv(t, map[string]string{"AUTOMATION_DUEWORK_BATCH_SIZE": "1", "AUTOMATION_DUEWORK_DRAIN_BATCHES": tc.drain})
		if code, body := e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_event.json")); code != 200 || rows(t, e)[automation.StatusPending] != 3 {
			t.Fatalf("drain %q: event: %d %v", tc.drain, code, body)
		}
		e.clock.Set(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) // every occurrence is due
		code, body := e.post(t, topology.DueWorkPoller, fixture(t, "DueWorkPoller_timer.json"))
		rv, _ := body["ReturnValue"].(map[string]any)
		if code != 200 || rv["claimed"] != tc.wantClaimed {
			t.Fatalf("drain %q: %d %v, want %v claimed", tc.drain, code, rv, tc.wantClaimed)
		}
		if got := 3 - rows(t, e)[automation.StatusPending]; float64(got) != tc.wantClaimed || rows(t, e)[automation.StatusProcessing] != 0 {
			t.Fatalf("drain %q: rows %v", tc.drain, rows(t, e))
		}
	}
}

// TrackingProcessor answers a host-shaped batch of one session (string bodies in one JSON
// array, SessionIdArray, as the Service Bus extension sends a session-enabled batch with
// dataType string): the poison in the middle is dead-lettered with its record, its
// batch-mates are applied in one transaction, and the batch answered 200; the same batch
// again (the host redelivers it) applies nothing twice.
func TestTrackingProcessorHostShapedSessionBatch(t *testing.T) {
	e := newFnEnv(t, nil)
	ctx := context.Background()
	e.postBatchTwice(t, topology.TrackingProcessor, fixture(t, "TrackingProcessor_session_batch.json"), 3, "login-2:tracking", "first_login", func(round int) {
		rows, err := e.rt.Store.AttributeList(ctx, store.AttributeEntity{BusinessUnitID: "bu-syd", EntityType: "CUSTOMER", EntityID: "CUST-001"})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rows {
			got[r.AttributeCode] = r.ValueText
		}
		if len(got) != 2 || got["login_count"] != "2" || got["first_login"] != "true" {
			t.Fatalf("round %d: attributes %v, want login_count 2 (login-1 and login-3 once each) and first_login true", round, got)
		}
	})
}

// CampaignFactProjection is a batch trigger (cardinality many, dataType string): a
// host-shaped batch of three facts with an unreadable one in the middle dead-letters that
// one with its record and applies the other two in one transaction (the command counted
// once, at its highest revision); the same batch again (redelivered) counts nothing twice.
func TestCampaignFactProjectionHostShapedBatch(t *testing.T) {
	e := newFnEnv(t, nil)
	ctx := context.Background()
	e.postBatchTwice(t, topology.CampaignFactProjection, fixture(t, "CampaignFactProjection_batch.json"), 3, "fact-2", "commandId", func(round int) {
		c, err := e.rt.Store.CampaignCountsByDay(ctx, store.CampaignCountsParams{BusinessUnitID: "bu-syd", CampaignID: "welcome", From: "2026-09-02", To: "2026-09-02"})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Days) != 1 || len(c.Days[0].ByStatus) != 1 || c.Days[0].ByStatus["SUCCEEDED"] != 1 {
			t.Fatalf("round %d: counts %+v, want cmd-1 once, SUCCEEDED (revision 2)", round, c)
		}
	})
}
