package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/logsink"
)

// TestIngestBackpressure: once the unpublished outbox reaches AUTOMATION_INGEST_MAX_BACKLOG,
// POST /api/events answers 503 with Retry-After in the problem shape and writes nothing;
// the metrics count the refusal; once the relay published the backlog, the same request is
// accepted. Nothing accepted is dropped: the events accepted before are published.
func TestIngestBackpressure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_DATA_DIR": dir, "AUTOMATION_API_BUSINESS_UNITS": "*", "AUTOMATION_INGEST_MAX_BACKLOG": "4"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: clock, Seed: 7, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	e := &gwEnv{rt: rt, dir: dir, out: &logsink.Buffer{}}
	ts := httptest.NewServer(rt.ListenerHandler(false))
	t.Cleanup(func() { ts.Close(); rt.Close() })
	srv := ts.URL
	e.seedRegistry(t)
	post := func(ids ...string) (int, http.Header, string) {
		t.Helper()
		var evs []string
		for _, id := range ids {
			evs = append(evs, `{"specversion":"1.0","id":"`+id+`","source":"/mobile-app","type":"Login","businessunitid":"bu-1","customerid":"CUST-001","data":{"channel":"app"}}`)
		}
		res, err := http.Post(srv+eventsapi.Path, "application/cloudevents-batch+json", strings.NewReader("["+strings.Join(evs, ",")+"]"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	if code, _, body := post("bp-1", "bp-2"); code != 200 || strings.Count(body, `"accepted"`) != 2 {
		t.Fatalf("under the bound: %d %s", code, body)
	}
	before := e.outboxIDs(t)
	clock.Advance(time.Second) // past the gate's read interval: it counts the 4 rows
	code, hdr, body := post("bp-3")
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "1" || hdr.Get("Content-Type") != httpapi.ProblemContentType {
		t.Fatalf("at the bound: %d Retry-After %q %s", code, hdr.Get("Retry-After"), body)
	}
	// Not a server fault: the problem's code says to come back (Unavailable), not Internal.
	if !strings.Contains(body, `"code":"Unavailable"`) || strings.Contains(body, "Internal") {
		t.Fatalf("the 503's problem: %s, want code Unavailable", body)
	}
	if after := e.outboxIDs(t); after != before {
		t.Fatalf("a refused request wrote to the outbox: %s, was %s", after, before)
	}
	res, err := http.Get(srv + eventsapi.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	var m eventsapi.MetricsResponse
	_ = json.NewDecoder(res.Body).Decode(&m)
	res.Body.Close()
	if m.Backpressure == nil || m.Backpressure.Refused != 1 || m.Backpressure.Max != 4 || m.Backpressure.Waiting < 4 {
		t.Fatalf("metrics backpressure = %+v", m.Backpressure)
	}
	// The relay publishes the backlog (nothing accepted is dropped), and the gate opens.
	if _, err := rt.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := rt.Backlog.Store.OutboxBacklog(context.Background()); n != 0 {
		t.Fatalf("%d rows still unpublished after the relay", n)
	}
	clock.Advance(time.Second)
	if code, _, body := post("bp-3"); code != 200 || !strings.Contains(body, `"accepted"`) {
		t.Fatalf("after the backlog drained: %d %s", code, body)
	}
}
