package app_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/gateway"
)

// Issue 37: the SSE stream cap (200) was shared by all tenants, so one caller could lock
// out the others. Now each unit and each recipient has its own quota of live streams: over
// it, that tenant gets 429 with Retry-After and the others still connect; a closed stream
// gives its place back.
func TestStreamQuotaPerUnitAndRecipient(t *testing.T) {
	e := newConsoleEnv(t)
	e.rt.Quotas.StreamsPerUnit, e.rt.Quotas.StreamsPerRecipient = 3, 2
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close) // after the streams' cleanups (LIFO): Close waits for open connections
	e.createUnits(t, "bu-a", "bu-b")
	open := func(recipient, bu string) (*http.Response, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/inbox/"+recipient+"/stream?businessUnitId="+bu, nil)
		req.Header.Set("Authorization", "Bearer boot")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); res.Body.Close() })
		return res, cancel
	}
	want := func(res *http.Response, code int, what string) {
		t.Helper()
		if res.StatusCode != code {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
			t.Fatalf("%s: %d %s, want %d", what, res.StatusCode, b, code)
		}
		if code == 429 && res.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: 429 without Retry-After", what)
		}
	}
	first, closeFirst := open("r1", "bu-a")
	want(first, 200, "r1's first stream")
	for _, st := range []struct {
		recipient, bu string
		code          int
		what          string
	}{
		{"r1", "bu-a", 200, "r1's second stream"},
		{"r1", "bu-a", 429, "r1's third stream (recipient quota 2)"},
		{"r2", "bu-a", 200, "r2 in bu-a"},
		{"r3", "bu-a", 429, "r3 in bu-a (unit quota 3)"},
		{"r1", "bu-b", 200, "the same recipient id in bu-b, another tenant"},
	} {
		res, _ := open(st.recipient, st.bu)
		want(res, st.code, st.what)
	}
	closeFirst()
	first.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for e.rt.Quotas.Streams("bu-a") >= 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r3again, _ := open("r3", "bu-a")
	want(r3again, 200, "r3 in bu-a after a stream closed")
}

// Ingest is limited per API key in events, not requests (issue 37: "ingest events per second
// per key"): a batch of 3 uses a burst of 3, so one more event from that key gets 429 with
// Retry-After and nothing of it is stored, while another key posting at the same moment is
// not affected; a batch larger than the key's burst is refused whole (422); the first key
// works again once its rate refills.
func TestIngestQuotaPerKey(t *testing.T) {
	e := newConsoleEnv(t)
	e.rt.Quotas.IngestPerSecond, e.rt.Quotas.IngestBurst = 1, 3
	ctx := context.Background()
	if _, err := e.rt.Registry.Save(ctx, gateway.SaveParams{EventType: "Login", Operator: "seed",
		Definition: []byte(`{"eventType":"Login","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
	keys := e.ingestKeys(t, "pos-", "bu-a", "bu-b")
	n := 0
	event := func(bu string) string {
		n++
		return `{"specversion":"1.0","id":"e-` + bu + `-` + strconv.Itoa(n) + `","source":"/pos","type":"Login","businessunitid":"` + bu + `","customerid":"C1","data":{}}`
	}
	post := func(bu string, events int) *httptest.ResponseRecorder {
		var list []string
		for range events {
			list = append(list, event(bu))
		}
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/events", strings.NewReader("["+strings.Join(list, ",")+"]"))
		r.Header.Set("Authorization", "Bearer "+keys[bu])
		r.Header.Set("Content-Type", "application/cloudevents-batch+json")
		e.h.ServeHTTP(rec, r)
		return rec
	}
	stored := func() int {
		var c int
		if err := e.rt.Store.(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT COUNT(*) FROM GatewayEvent`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if rec := post("bu-a", 3); rec.Code != 200 {
		t.Fatalf("bu-a's batch of 3: %d %s", rec.Code, rec.Body)
	}
	before := stored()
	rec := post("bu-a", 1)
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("bu-a's next event, over its quota: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if stored() != before {
		t.Fatal("a refused event was stored")
	}
	if rec := post("bu-b", 2); rec.Code != 200 {
		t.Fatalf("bu-b's key beside it: %d %s", rec.Code, rec.Body)
	}
	if rec := post("bu-b", 4); rec.Code != 422 || !strings.Contains(rec.Body.String(), "burst") {
		t.Fatalf("a batch larger than the key's burst: %d %s", rec.Code, rec.Body)
	}
	e.clock.Advance(time.Second)
	if rec := post("bu-a", 1); rec.Code != 200 {
		t.Fatalf("bu-a after the refill: %d %s", rec.Code, rec.Body)
	}
}

// The quotas are settings (AUTOMATION_QUOTA_*, docs/configuration.md), and a burst smaller
// than one full batch of 500 events is refused when the configuration loads.
func TestQuotasAreSettings(t *testing.T) {
	env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "AUTOMATION_API_TOKEN": "boot",
		"AUTOMATION_QUOTA_STREAMS_PER_UNIT": "7", "AUTOMATION_QUOTA_STREAMS_PER_RECIPIENT": "2",
		"AUTOMATION_QUOTA_INGEST_EVENTS_PER_SECOND": "250", "AUTOMATION_QUOTA_INGEST_BURST": "600"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)), LogOutput: io.Discard, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if q := rt.Quotas; q.StreamsPerUnit != 7 || q.StreamsPerRecipient != 2 || q.IngestPerSecond != 250 || q.IngestBurst != 600 {
		t.Fatalf("quotas from the settings: %+v", q)
	}
	env["AUTOMATION_QUOTA_INGEST_BURST"] = "499"
	if _, err := config.Load(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "AUTOMATION_QUOTA_INGEST_BURST") {
		t.Fatalf("a burst below one batch: %v", err)
	}
}

// The inbound SMS webhook (ACS's SMSReceived through Event Grid) was charged to no quota:
// one webhook's flood of texts ran unbounded beside the ingest route's per-key limit. Its
// events now count against the ingest quota of the credential its event subscription sends
// (the API key, role ingest), all or none before anything is written: over it the delivery
// is 429 with Retry-After (Event Grid retries it later) and no opt-out is stored, while
// another unit's webhook key is not affected.
func TestSMSInboundIsChargedToItsWebhookKeysIngestQuota(t *testing.T) {
	e := newConsoleEnv(t)
	e.rt.Quotas.IngestPerSecond, e.rt.Quotas.IngestBurst = 1, 3
	ctx := context.Background()
	keys := e.ingestKeys(t, "acs-inbound-", "bu-a", "bu-b")
	stop := func(from string) string {
		return `{"id":"` + from + `","eventType":"Microsoft.Communication.SMSReceived","data":{"messageId":"m-` + from + `","from":"` + from + `","to":"+61480000000","message":"STOP"}}`
	}
	post := func(bu string, from ...string) *httptest.ResponseRecorder {
		var list []string
		for _, f := range from {
			list = append(list, stop(f))
		}
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/preferences/sms-inbound?businessUnitId="+bu, strings.NewReader("["+strings.Join(list, ",")+"]"))
		r.Header.Set("Authorization", "Bearer "+keys[bu])
		r.Header.Set("Content-Type", "application/json")
		e.h.ServeHTTP(rec, r)
		return rec
	}
	optedOut := func(bu, number string) bool {
		l, err := e.rt.Store.PreferenceList(ctx, bu, number)
		if err != nil {
			t.Fatal(err)
		}
		return len(l) > 0
	}
	if rec := post("bu-a", "+61400000001", "+61400000002", "+61400000003"); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"optedOut":3`) {
		t.Fatalf("bu-a's webhook, 3 texts: %d %s", rec.Code, rec.Body)
	}
	rec := post("bu-a", "+61400000004")
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("bu-a's webhook over its key's quota: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if optedOut("bu-a", "+61400000004") {
		t.Fatal("a refused delivery's STOP was stored")
	}
	if rec := post("bu-b", "+61400000005", "+61400000006", "+61400000007"); rec.Code != 200 {
		t.Fatalf("bu-b's webhook beside it: %d %s", rec.Code, rec.Body)
	}
	e.clock.Advance(time.Second)
	if rec := post("bu-a", "+61400000004"); rec.Code != 200 || !optedOut("bu-a", "+61400000004") {
		t.Fatalf("bu-a's webhook after the refill (Event Grid's retry): %d %s", rec.Code, rec.Body)
	}
}
