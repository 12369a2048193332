package reportapi_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/reportapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/store/storetest"
)

//go:embed openapi.json
var openapiDoc []byte

type apiEnv struct {
	rt     *app.Runtime
	clock  *automation.ManualClock
	router *funchost.Router
	mu     sync.Mutex
	sent   []delivery.Message
}

func newAPI(t *testing.T) *apiEnv {
	t.Helper()
	e := &apiEnv{clock: automation.NewManualClock(time.Date(2027, 3, 20, 0, 0, 0, 0, time.UTC))}
	rt := apptest.Open(t, nil, time.Time{}, app.Options{
		Clock: e.clock, Seed: 1, Channels: map[string]delivery.Channel{"log": delivery.FuncChannel(func(_ context.Context, m delivery.Message) (string, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.sent = append(e.sent, m)
			return m.DeliveryKey, nil
		})}})
	storetest.Units(t, rt.Store, storetest.SydneyAndNewYork...)
	e.rt = rt
	e.router = rt.Functions // the report API's routes, as app.Open registers them
	return e
}

type resp struct {
	code int
	hdr  http.Header
	body map[string]any
	raw  string
}

func (e *apiEnv) do(t *testing.T, method, path, body string, hdr ...string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	r := resp{code: rec.Code, hdr: rec.Header(), raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &r.body)
	return r
}

const subBody = `{"businessUnitId":"bu-syd","name":"Weekly activity","reportType":"automation-activity",
 "recurrence":{"rrule":"FREQ=WEEKLY;BYDAY=MO","dtStart":"2027-03-01T08:00"},"format":"csv",
 "template":"report-ready","channels":["log"],"recipients":["ops@example.test"]}`

const guid = "5e0c8a52-3b1f-4d6e-9a7c-2f4b6d8e0a1c"

func TestSubscriptionCRUDOverHTTP(t *testing.T) {
	t.Parallel()
	e := newAPI(t)
	r := e.do(t, "POST", "/api/report-subscriptions", subBody, "Idempotency-Key", "create-1")
	if r.code != 201 || r.hdr.Get("ETag") != `"1"` || !strings.HasPrefix(r.hdr.Get("Location"), "/api/report-subscriptions/") {
		t.Fatalf("create: %d %v %s", r.code, r.hdr, r.raw)
	}
	id := r.body["guid"].(string)
	again := e.do(t, "POST", "/api/report-subscriptions", subBody, "Idempotency-Key", "create-1")
	if again.code != 201 || again.body["guid"] != id || again.hdr.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s", again.code, again.raw)
	}
	if g := e.do(t, "GET", "/api/report-subscriptions/"+id, ""); g.code != 200 || g.body["nextRun"].(map[string]any)["localTime"] != "2027-03-22T08:00:00+11:00" {
		t.Fatalf("get: %d %s", g.code, g.raw)
	}
	if g := e.do(t, "GET", "/api/report-subscriptions/"+id, "", "X-Automation-Business-Units", "bu-nyc"); g.code != 404 {
		t.Fatalf("another business unit's subscription must be 404: %d", g.code)
	}
	paused := strings.Replace(subBody, `"recipients"`, `"status":"Paused","recipients"`, 1)
	if p := e.do(t, "PUT", "/api/report-subscriptions/"+id, paused); p.code != 428 || p.hdr.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("put without If-Match: %d %s", p.code, p.raw)
	}
	if p := e.do(t, "PUT", "/api/report-subscriptions/"+id, paused, "If-Match", `"7"`); p.code != 412 {
		t.Fatalf("stale If-Match: %d", p.code)
	}
	p := e.do(t, "PUT", "/api/report-subscriptions/"+id, paused, "If-Match", `"1"`)
	if p.code != 200 || p.body["status"] != "Paused" || p.hdr.Get("ETag") != `"2"` {
		t.Fatalf("pause: %d %s", p.code, p.raw)
	}
	if c := e.do(t, "PUT", "/api/report-subscriptions/"+guid, subBody); c.code != 201 || c.body["guid"] != guid {
		t.Fatalf("put-create: %d %s", c.code, c.raw)
	}
	l := e.do(t, "GET", "/api/report-subscriptions?limit=1", "")
	if l.code != 200 || len(l.body["items"].([]any)) != 1 || l.body["nextCursor"] == nil {
		t.Fatalf("list: %d %s", l.code, l.raw)
	}
	l2 := e.do(t, "GET", "/api/report-subscriptions?limit=1&cursor="+l.body["nextCursor"].(string), "")
	if l2.code != 200 || len(l2.body["items"].([]any)) != 1 {
		t.Fatalf("list page 2: %d %s", l2.code, l2.raw)
	}
	if d := e.do(t, "DELETE", "/api/report-subscriptions/"+guid, ""); d.code != 428 {
		t.Fatalf("delete without If-Match: %d", d.code)
	}
	if d := e.do(t, "DELETE", "/api/report-subscriptions/"+guid, "", "If-Match", `"1"`); d.code != 204 {
		t.Fatalf("delete: %d %s", d.code, d.raw)
	}
	if g := e.do(t, "GET", "/api/report-subscriptions/"+guid, ""); g.code != 404 {
		t.Fatalf("get deleted: %d", g.code)
	}
}

func TestBadInputIsA4xxAndStoresNothing(t *testing.T) {
	t.Parallel()
	e := newAPI(t)
	cases := map[string]struct {
		body  string
		code  int
		field string
	}{
		"never occurs":   {strings.Replace(subBody, "FREQ=WEEKLY;BYDAY=MO", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", 1), 422, "recurrence"},
		"too frequent":   {strings.Replace(subBody, "FREQ=WEEKLY;BYDAY=MO", "FREQ=MINUTELY;INTERVAL=5", 1), 422, "recurrence.rrule"},
		"unknown type":   {strings.Replace(subBody, "automation-activity", "attendance", 1), 422, "reportType"},
		"unknown field":  {strings.Replace(subBody, `"name"`, `"nam":"x","name"`, 1), 400, "nam"},
		"not json":       {"{", 400, ""},
		"wrong type":     {strings.Replace(subBody, `["log"]`, `"log"`, 1), 400, "channels"},
		"unknown BU":     {strings.Replace(subBody, "bu-syd", "bu-mel", 1), 422, "businessUnitId"},
		"two rule lines": {strings.Replace(subBody, "FREQ=WEEKLY;BYDAY=MO", `DTSTART:20270301T080000\nRRULE:FREQ=WEEKLY`, 1), 422, "recurrence.rrule"},
	}
	for name, tc := range cases {
		r := e.do(t, "POST", "/api/report-subscriptions", tc.body)
		if r.code != tc.code || r.hdr.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s", name, r.code, r.raw)
			continue
		}
		if tc.field != "" && !strings.Contains(r.raw, `"field":"`+tc.field+`"`) {
			t.Errorf("%s: the problem does not name %s: %s", name, tc.field, r.raw)
		}
	}
	if l := e.do(t, "GET", "/api/report-subscriptions", ""); len(l.body["items"].([]any)) != 0 {
		t.Fatalf("stored: %s", l.raw)
	}
	if c, _ := e.rt.Store.SchedulerCountByStatus(context.Background()); c[automation.StatusPending] != 0 {
		t.Fatalf("rows: %v", c)
	}
	if r := e.do(t, "GET", "/api/report-subscriptions?foo=1", ""); r.code != 400 {
		t.Fatalf("unknown query parameter: %d", r.code)
	}
}

// Run-now: the same Idempotency-Key returns the same run (twice), a paused subscription is
// refused with nothing stored, and the run is delivered once.
func TestRunNowOverHTTP(t *testing.T) {
	t.Parallel()
	e := newAPI(t)
	if r := e.do(t, "PUT", "/api/report-subscriptions/"+guid, subBody); r.code != 201 {
		t.Fatal(r.raw)
	}
	if r := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/runs", ""); r.code != 409 || !strings.Contains(r.raw, "Shadow") {
		t.Fatalf("run-now in shadow mode: %d %s", r.code, r.raw)
	}
	if r := e.do(t, "PUT", "/api/report-runs/rollout/subscriptions/"+guid, `{"mode":"RunNowAllowlist"}`, "X-Automation-Operator", "ops"); r.code != 200 || r.body["mode"] != "RunNowAllowlist" {
		t.Fatalf("rollout: %d %s", r.code, r.raw)
	}
	e.clock.Set(time.Date(2027, 3, 24, 3, 0, 0, 0, time.UTC))
	first := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/runs", `{"reason":"board"}`, "Idempotency-Key", "run-1", "X-Automation-Operator", "ops@example.test")
	if first.code != 202 || first.body["manualRunGuid"] == nil || first.body["requestedBy"] != "ops@example.test" {
		t.Fatalf("run-now: %d %s", first.code, first.raw)
	}
	for i := 0; i < 2; i++ {
		retry := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/runs", `{"reason":"board"}`, "Idempotency-Key", "run-1", "X-Automation-Operator", "ops@example.test")
		if retry.code != 202 || retry.body["manualRunGuid"] != first.body["manualRunGuid"] || retry.hdr.Get("Location") != first.hdr.Get("Location") {
			t.Fatalf("retry %d: %d %s", i, retry.code, retry.raw)
		}
	}
	if other := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/runs", `{"reason":"other"}`, "Idempotency-Key", "run-1"); other.code != 422 {
		t.Fatalf("same key, other body: %d", other.code)
	}
	if _, err := e.rt.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	n := len(e.sent)
	e.mu.Unlock()
	if n != 1 {
		t.Fatalf("sent %d, want 1", n)
	}
	detail := e.do(t, "GET", first.hdr.Get("Location"), "")
	if detail.code != 200 || detail.body["status"] != "Completed" || detail.body["ownership"].(map[string]any)["status"] != "DeliveryCreated" {
		t.Fatalf("detail: %d %s", detail.code, detail.raw)
	}
	hash := detail.body["runKeyHash"].(string)
	f := e.do(t, "GET", "/api/report-runs/"+hash+"/file", "")
	if f.code != 200 || !strings.HasPrefix(f.raw, "periodStartUtc,") || f.hdr.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("file: %d %v %q", f.code, f.hdr, f.raw)
	}
	if f := e.do(t, "GET", "/api/report-runs/"+hash+"/file", "", "X-Automation-Business-Units", "bu-nyc"); f.code != 404 {
		t.Fatalf("file out of scope: %d", f.code)
	}
	runs := e.do(t, "GET", "/api/report-subscriptions/"+guid+"/automation-runs", "")
	if runs.code != 200 || len(runs.body["items"].([]any)) != 3 { // the first Monday (a shadow row), the next, the manual run
		t.Fatalf("runs: %d %s", runs.code, runs.raw)
	}
	// Paused: 409, nothing stored.
	paused := strings.Replace(subBody, `"recipients"`, `"status":"Paused","recipients"`, 1)
	if r := e.do(t, "PUT", "/api/report-subscriptions/"+guid, paused, "If-Match", `"1"`); r.code != 200 {
		t.Fatal(r.raw)
	}
	if r := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/runs", "", "Idempotency-Key", "run-2"); r.code != 409 || r.hdr.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("paused run-now: %d %s", r.code, r.raw)
	}
	if runs := e.do(t, "GET", "/api/report-subscriptions/"+guid+"/automation-runs", ""); len(runs.body["items"].([]any)) != 3 {
		t.Fatalf("a refused run-now stored a run: %s", runs.raw)
	}
	if r := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/runs", `{"periodEndUtc":"tomorrow"}`); r.code != 400 {
		t.Fatalf("malformed period: %d", r.code)
	}
}

// The old scheduler's side of the one-owner guard, and the failed-run queue with a retry.
func TestOwnershipEndpointsAndSupport(t *testing.T) {
	t.Parallel()
	e := newAPI(t)
	if r := e.do(t, "PUT", "/api/report-subscriptions/"+guid, subBody); r.code != 201 {
		t.Fatal(r.raw)
	}
	if r := e.do(t, "PUT", "/api/report-runs/rollout/business-units/bu-syd", `{"mode":"ScheduledAllowlist"}`); r.code != 200 {
		t.Fatal(r.raw)
	}
	key := "report-subscription:" + guid + ":scheduled:2027-03-21T21:00:00Z"
	if r := e.do(t, "GET", "/api/report-runs/ownership?schedulerKey="+key, ""); r.code != 404 {
		t.Fatalf("check before: %d", r.code)
	}
	a := e.do(t, "POST", "/api/report-runs/ownership/acquire", `{"schedulerKey":"`+key+`"}`)
	if a.code != 200 || a.body["acquired"] != true {
		t.Fatalf("acquire: %d %s", a.code, a.raw)
	}
	if c := e.do(t, "GET", "/api/report-runs/ownership?schedulerKey="+key, ""); c.code != 200 || c.body["acquired"] != true {
		t.Fatalf("check: %d %s", c.code, c.raw)
	}
	if bad := e.do(t, "POST", "/api/report-runs/ownership/acquire", `{"schedulerKey":"reminder:x"}`); bad.code != 422 {
		t.Fatalf("bad key: %d", bad.code)
	}
	if bad := e.do(t, "POST", "/api/report-runs/ownership/acquire", `{"schedulerKey":"`+key+`"}`, "X-Automation-Business-Units", "bu-nyc"); bad.code != 404 {
		t.Fatalf("out of scope: %d", bad.code)
	}
	e.clock.Set(time.Date(2027, 3, 21, 21, 0, 0, 0, time.UTC))
	if _, err := e.rt.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	failed := e.do(t, "GET", "/api/report-runs/failed", "")
	items := failed.body["items"].([]any)
	if failed.code != 200 || len(items) != 1 {
		t.Fatalf("failed queue: %d %s", failed.code, failed.raw)
	}
	hash := items[0].(map[string]any)["runKeyHash"].(string)
	if r := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/automation-runs/"+hash+"/retry", `{"reason":"again"}`); r.code != 409 {
		t.Fatalf("retry while the old scheduler owns it: %d %s", r.code, r.raw)
	}
	if r := e.do(t, "POST", "/api/report-runs/ownership/release", `{"schedulerKey":"`+key+`","ownerVersion":2}`); r.code != 409 {
		t.Fatalf("release with a wrong ownerVersion: %d %s", r.code, r.raw)
	}
	if r := e.do(t, "POST", "/api/report-runs/ownership/release", `{"schedulerKey":"`+key+`","ownerVersion":1}`); r.code != 200 || r.body["status"] != "Cancelled" {
		t.Fatalf("release: %d %s", r.code, r.raw)
	}
	r := e.do(t, "POST", "/api/report-subscriptions/"+guid+"/automation-runs/"+hash+"/retry", `{"reason":"released"}`, "X-Automation-Operator", "support@example.test")
	if r.code != 202 || r.body["kind"] != "SupportRetry" || r.body["requestedBy"] != "support@example.test" {
		t.Fatalf("retry: %d %s", r.code, r.raw)
	}
	if _, err := e.rt.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := e.do(t, "GET", r.hdr.Get("Location"), ""); d.body["status"] != "Completed" {
		t.Fatalf("retried run: %s", d.raw)
	}
	if s := e.do(t, "GET", "/api/report-subscriptions/"+guid+"/shadow-comparison", ""); s.code != 200 || s.body["freshTo"] != e.rt.Clock.Now().UTC().Format(time.RFC3339Nano) {
		t.Fatalf("shadow comparison: %d %s", s.code, s.raw)
	}
	if l := e.do(t, "GET", "/api/report-runs/rollout", ""); len(l.body["items"].([]any)) != 1 {
		t.Fatalf("rollouts: %s", l.raw)
	}
	if d := e.do(t, "DELETE", "/api/report-runs/rollout/business-units/bu-syd", ""); d.code != 200 || d.body["removed"] != true {
		t.Fatalf("remove rollout: %d %s", d.code, d.raw)
	}
	if d := e.do(t, "PUT", "/api/report-runs/rollout/business-units/bu-syd", `{"mode":"All"}`); d.code != 422 {
		t.Fatalf("bad mode: %d", d.code)
	}
}

// The OpenAPI document and the registered routes list the same paths and methods.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(openapiDoc, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi.json: %v %q", err, doc.OpenAPI)
	}
	var documented []string
	param := regexp.MustCompile(`\{[^}]+\}`)
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
		for _, name := range param.FindAllString(p, -1) {
			found := false
			for _, op := range ops {
				for _, prm := range op.(map[string]any)["parameters"].([]any) {
					pm := prm.(map[string]any)
					if pm["in"] == "path" && "{"+pm["name"].(string)+"}" == name {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("%s: path parameter %s undocumented", p, name)
			}
		}
	}
	var registered []string
	for _, r := range reportapi.Routes(nil) {
		registered = append(registered, r.Meta().Pattern())
	}
	sort.Strings(documented)
	sort.Strings(registered)
	if strings.Join(documented, "\n") != strings.Join(registered, "\n") {
		t.Fatalf("documented:\n%s\nregistered:\n%s", strings.Join(documented, "\n"), strings.Join(registered, "\n"))
	}
}
