package app_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
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
	for _, bu := range []string{"bu-a", "bu-b"} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/business-units", strings.NewReader(`{"id":"`+bu+`","name":"U","timeZone":"UTC"}`))
		r.Header.Set("Authorization", "Bearer boot")
		r.Header.Set("Content-Type", "application/json")
		e.h.ServeHTTP(rec, r)
		if rec.Code != 201 {
			t.Fatalf("seed %s: %d %s", bu, rec.Code, rec.Body)
		}
	}
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
	r1b, _ := open("r1", "bu-a")
	want(r1b, 200, "r1's second stream")
	r1c, _ := open("r1", "bu-a")
	want(r1c, 429, "r1's third stream (recipient quota 2)")
	r2, _ := open("r2", "bu-a")
	want(r2, 200, "r2 in bu-a")
	r3, _ := open("r3", "bu-a")
	want(r3, 429, "r3 in bu-a (unit quota 3)")
	other, _ := open("r1", "bu-b")
	want(other, 200, "the same recipient id in bu-b, another tenant")
	closeFirst()
	first.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for e.rt.Quotas.Streams("bu-a") >= 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r3again, _ := open("r3", "bu-a")
	want(r3again, 200, "r3 in bu-a after a stream closed")
}

// Ingest requests are limited per API key: a key over its rate gets 429 with Retry-After,
// another key posting at the same moment is not affected, and the first works again once
// its rate refills.
func TestIngestQuotaPerKey(t *testing.T) {
	e := newConsoleEnv(t)
	e.rt.Quotas.IngestPerSecond, e.rt.Quotas.IngestBurst = 1, 2
	ctx := context.Background()
	if _, err := e.rt.Registry.Save(ctx, gateway.SaveParams{EventType: "Login", Operator: "seed",
		Definition: []byte(`{"eventType":"Login","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, bu := range []string{"bu-a", "bu-b"} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/business-units", strings.NewReader(`{"id":"`+bu+`","name":"U","timeZone":"UTC"}`))
		r.Header.Set("Authorization", "Bearer boot")
		r.Header.Set("Content-Type", "application/json")
		e.h.ServeHTTP(rec, r)
		c, err := e.rt.Keys.Create(ctx, apikey.CreateParams{Name: "pos-" + bu, Roles: []httpapi.Role{httpapi.RoleIngest}, Units: bu})
		if err != nil {
			t.Fatal(err)
		}
		keys[bu] = c.Secret
	}
	n := 0
	post := func(bu string) *httptest.ResponseRecorder {
		n++
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/events", strings.NewReader(`{"specversion":"1.0","id":"e-`+bu+`-`+time.Duration(n).String()+
			`","source":"/pos","type":"Login","businessunitid":"`+bu+`","customerid":"C1","data":{}}`))
		r.Header.Set("Authorization", "Bearer "+keys[bu])
		r.Header.Set("Content-Type", "application/cloudevents+json")
		e.h.ServeHTTP(rec, r)
		return rec
	}
	for i := range 2 {
		if rec := post("bu-a"); rec.Code != 200 {
			t.Fatalf("bu-a's request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := post("bu-a")
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("bu-a over its rate: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if rec := post("bu-b"); rec.Code != 200 {
		t.Fatalf("bu-b's key beside it: %d %s", rec.Code, rec.Body)
	}
	e.clock.Advance(time.Second)
	if rec := post("bu-a"); rec.Code != 200 {
		t.Fatalf("bu-a after the refill: %d %s", rec.Code, rec.Body)
	}
}
