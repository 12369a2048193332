package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/local"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/store"
)

const (
	gwLogin  = `{"eventType":"Login","class":"DUAL","routes":["events","tracking"],"schema":{"type":"object","required":["channel"]},"counterInstructions":[{"attribute_code":"login_streak","entity_type":"CUSTOMER","operation":"STREAK_INCREMENT"}]}`
	gwRedeem = `{"eventType":"Redeem_Item","class":"NOTIFICATION","schema":{"type":"object"},"notification":{"template":"redeem-done","channels":["log"],"recipientPointer":"/email"}}`
)

type gwEnv struct {
	rt     *app.Runtime
	srv    *httptest.Server
	dir    string
	mu     sync.Mutex
	routed []gateway.Routed
	out    *logsink.Buffer
	host   *local.Host
}

// openGateway opens the embedded runtime on dir (a restart when dir holds a database) and
// serves its listener on a real httptest server.
func openGateway(t *testing.T, dir string) *gwEnv {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_DATA_DIR": dir, "AUTOMATION_API_BUSINESS_UNITS": "*"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &gwEnv{dir: dir, out: &logsink.Buffer{}}
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	e.rt, err = app.Open(context.Background(), cfg, app.Options{Clock: clock, LogOutput: e.out, Seed: 7, Log: quietLog,
		OnRouted: func(r gateway.Routed) { e.mu.Lock(); e.routed = append(e.routed, r); e.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if e.host, err = e.rt.LocalHost("../../functions", cfg, false, quietLog); err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.rt.ListenerHandler(false))
	t.Cleanup(func() { e.srv.Close(); e.rt.Close() })
	return e
}

func (e *gwEnv) seedRegistry(t *testing.T) {
	t.Helper()
	// Ingest refuses an event of a unit that does not exist: the unit the events name.
	if err := e.rt.Store.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	for typ, def := range map[string]string{"Login": gwLogin, "Redeem_Item": gwRedeem} {
		if _, err := e.rt.Registry.Save(context.Background(), gateway.SaveParams{EventType: typ, Definition: []byte(def), Operator: "test"}); err != nil {
			t.Fatal(err)
		}
	}
}

func sdkEvent(id, typ string, data any) cloudevents.Event {
	ev := cloudevents.NewEvent()
	ev.SetID(id)
	ev.SetSource("/mobile-app")
	ev.SetType(typ)
	ev.SetExtension("businessunitid", "bu-1")
	ev.SetExtension("customerid", "CUST-001")
	// The SDK's client stamps the wall clock on an event without a time; the runtime's clock
	// is a manual one, and ingest refuses a time more than a day ahead of it.
	ev.SetTime(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	_ = ev.SetData(cloudevents.ApplicationJSON, data)
	return ev
}

func (e *gwEnv) outboxIDs(t *testing.T) string {
	t.Helper()
	db := e.rt.Store.(interface{ DB() *sql.DB }).DB()
	rows, err := db.Query(`SELECT MessageId || '@' || Destination FROM Outbox WHERE Destination IN ('events','tracking','noti') ORDER BY Id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		ids = append(ids, s)
	}
	return strings.Join(ids, " ")
}

// A real CloudEvents SDK (sdk-go's HTTP binding) sends binary (its default), structured and
// batched requests to POST /api/events on a real server running the router.
func TestEventIngestWithTheSDKInEveryMode(t *testing.T) {
	e := openGateway(t, t.TempDir())
	e.seedRegistry(t)
	ctx := context.Background()
	c, err := cloudevents.NewClientHTTP(cehttp.WithTarget(e.srv.URL + eventsapi.Path))
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Send(ctx, sdkEvent("bin-1", "Login", map[string]string{"channel": "app"})); !cloudevents.IsACK(res) {
		t.Fatalf("binary: %v", res)
	}
	if res := c.Send(cloudevents.WithEncodingStructured(ctx), sdkEvent("str-1", "Redeem_Item", map[string]string{"email": "a@example.test"})); !cloudevents.IsACK(res) {
		t.Fatalf("structured: %v", res)
	}
	// A rejected single event answers 422 naming the member.
	if res := c.Send(ctx, sdkEvent("bin-bad", "Login", map[string]string{"no": "channel"})); cloudevents.IsACK(res) || !strings.Contains(res.Error(), "422") {
		t.Fatalf("a schema violation in binary mode: %v", res)
	}
	batch := []cloudevents.Event{sdkEvent("b-1", "Login", map[string]string{"channel": "web"}), sdkEvent("b-2", "Unknown_Type", map[string]string{}),
		sdkEvent("bin-1", "Login", map[string]string{"channel": "app"})}
	req, err := cehttp.NewHTTPRequestFromEvents(ctx, e.srv.URL+eventsapi.Path, batch)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got eventsapi.Response
	_ = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(got.Results) != 3 || got.Results[0].Status != "accepted" || got.Results[1].Status != "rejected" ||
		got.Results[1].Pointer != "/type" || got.Results[2].Status != "duplicate" {
		t.Fatalf("batch: %d %+v", resp.StatusCode, got)
	}
	// MessageId "{events.Identity(source, id)}:{route}" (docs/gateway.md#event-identity).
	key := func(id string) string { return events.Identity("/mobile-app", id) }
	want := key("bin-1") + ":events@events " + key("bin-1") + ":tracking@tracking " + key("str-1") + ":noti@noti " +
		key("b-1") + ":events@events " + key("b-1") + ":tracking@tracking"
	if ids := e.outboxIDs(t); ids != want {
		t.Fatalf("outbox %s, want %s", ids, want)
	}
	// 501 events: 413 for the whole request, nothing accepted.
	var many []cloudevents.Event
	for i := 0; i < 501; i++ {
		many = append(many, sdkEvent(fmt.Sprintf("m-%d", i), "Login", map[string]string{"channel": "app"}))
	}
	req, _ = cehttp.NewHTTPRequestFromEvents(ctx, e.srv.URL+eventsapi.Path, many)
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("501 events: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if ids := e.outboxIDs(t); ids != want {
		t.Fatalf("the refused batch wrote: %s", ids)
	}
	// The local events route takes the SDK's binary mode too (it used to read the data as the event).
	bin := cloudevents.NewEvent()
	bin.SetID("dom-1")
	bin.SetSource("/hr")
	bin.SetType("PoliceVetting.Upserted")
	bin.SetExtension("businessunitid", "bu-1")
	bin.SetExtension("entitytype", "PoliceVetting")
	bin.SetExtension("entityguid", "3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b")
	bin.SetExtension("revision", "1")
	_ = bin.SetData(cloudevents.ApplicationJSON, map[string]string{"expiresOn": "2027-03-14", "staffEmail": "a@example.test"})
	if err := e.rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	lc, _ := cloudevents.NewClientHTTP(cehttp.WithTarget(e.srv.URL + app.LocalEventsPath))
	if res := lc.Send(ctx, bin); !cloudevents.IsACK(res) {
		t.Fatalf("local route, binary mode: %v", res)
	}
}

// Every class routes exactly once per event id: under redelivery (the same events sent
// again), and under a crash between commit and publish and between publish and marking the
// row published (the relay publishes it again after the restart: the noti route's delivery
// key is the same, so exactly one delivery is made).
func TestGatewayRoutesExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	e := openGateway(t, dir)
	e.seedRegistry(t)
	ctx := context.Background()
	post := func(e *gwEnv, body string) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.srv.URL+eventsapi.Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/cloudevents-batch+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	batch := `[{"specversion":"1.0","id":"L1","source":"/app","type":"Login","businessunitid":"bu-1","customerid":"C1","data":{"channel":"app"}},
	  {"specversion":"1.0","id":"R1","source":"/app","type":"Redeem_Item","businessunitid":"bu-1","customerid":"C1","data":{"email":"c1@example.test"}}]`
	post(e, batch)
	// Crash between commit and publish: the process stops before the relay ran.
	e.srv.Close()
	e.rt.Close()
	e2 := openGateway(t, dir)
	post(e2, batch) // the client retries after the crash: duplicates
	if _, err := e2.rt.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(e2.routed); got != "[{events L1 C1} {tracking L1 C1} {noti R1 C1}]" {
		t.Fatalf("routed %s", got)
	}
	if n := strings.Count(strings.Join(e2.out.Lines(), "\n"), `"schedulerKey":"`+gateway.UserMessageKey("/app", "R1")+`"`); n != 1 {
		t.Fatalf("%d deliveries, want 1:\n%s", n, strings.Join(e2.out.Lines(), "\n"))
	}
	// Crash between publish and marking published: the rows are published again after a restart.
	db := e2.rt.Store.(interface{ DB() *sql.DB }).DB()
	if _, err := db.Exec(`UPDATE Outbox SET PublishedOn = NULL WHERE Destination IN ('events','tracking','noti')`); err != nil {
		t.Fatal(err)
	}
	e2.srv.Close()
	e2.rt.Close()
	e3 := openGateway(t, dir)
	post(e3, batch)
	if _, err := e3.rt.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if len(e3.routed) != 3 { // published again (Service Bus drops it by MessageId) …
		t.Fatalf("republished %v", e3.routed)
	}
	var jobs int
	db = e3.rt.Store.(interface{ DB() *sql.DB }).DB()
	_ = db.QueryRow(`SELECT COUNT(*) FROM NotificationJob WHERE SchedulerKey = ?`, gateway.UserMessageKey("/app", "R1")).Scan(&jobs)
	if n := strings.Count(strings.Join(e3.out.Lines(), "\n"), `"schedulerKey":"`+gateway.UserMessageKey("/app", "R1")+`"`); n != 0 || jobs != 1 { // … and never delivered twice
		t.Fatalf("after the republication: %d more deliveries, %d jobs", n, jobs)
	}
}
