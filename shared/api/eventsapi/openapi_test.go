package eventsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
)

type env struct{ *apptest.API }

func newEnv(t *testing.T) *env {
	t.Helper()
	a := apptest.OpenAPI(t, eventsapi.OpenAPI(), nil, time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC), app.Options{})
	// Ingest refuses an event of a unit that does not exist: the unit the events name.
	apptest.Units(t, a.RT, store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "Australia/Sydney"})
	return &env{a}
}

// resp is one recorded answer.
type resp = openapitest.Recorded

// TestOpenAPIDocumentMatchesRouter: openapi.yaml is valid OpenAPI 3.1 and documents exactly
// the routes eventsapi.Register adds (both directions), which are exactly the runtime's
// routes under /api/events; a renamed operation is caught both ways.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.CheckRouter(t, func(r *funchost.Router, api *httpapi.API) {
		eventsapi.Register(r, api, eventsapi.Deps{Service: &gateway.Service{}})
	}, eventsapi.Path, eventsapi.MetricsPath, "get", "put")
}

const viewItem = `{"eventType":"ViewItem","class":"COUNTER","schema":{"type":"object","required":["itemId"],"properties":{"itemId":{"type":"string"}}},"counterInstructions":[{"attribute_code":"views","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`

func event(id, data string) string {
	return `{"specversion":"1.0","id":"` + id + `","source":"/app","type":"ViewItem","businessunitid":"bu-1","customerid":"C-1","data":` + data + `}`
}

// TestEventsAPIMatchesOpenAPI sends events in every content mode — a batch with accepted,
// duplicate and rejected results, a structured event, a binary-mode event with ce-* headers,
// an Idempotency-Key replay — and the error answers (400 not an array, 404 out of scope, 413
// over 500, 422 naming the member), then reads the metrics (all, one business unit, out of
// scope, an unknown parameter), checking each request and answer against openapi.yaml.
func TestEventsAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := func(r resp, code int) resp { t.Helper(); return r.Want(t, code) }
	if _, err := e.RT.Registry.Save(context.Background(), gateway.SaveParams{EventType: "ViewItem", Definition: []byte(viewItem), Operator: "ops"}); err != nil {
		t.Fatal(err)
	}
	batch := "[" + event("v1", `{"itemId":"A"}`) + "," + event("v1", `{"itemId":"A"}`) + "," + event("v2", `{"itemId":7}`) + `,{"id":"v3"},"junk"]`
	r := want(e.Call(t, "POST", eventsapi.Path, batch, "Content-Type: application/cloudevents-batch+json"), 200)
	for _, s := range []string{`"status":"accepted"`, `"status":"duplicate"`, `"pointer":"/data/itemId"`} {
		if !strings.Contains(string(r.Body), s) {
			t.Errorf("batch results lack %s: %s", s, r.Body)
		}
	}
	want(e.Call(t, "POST", eventsapi.Path, event("s1", `{"itemId":"B"}`), "Content-Type: application/cloudevents+json"), 200)
	want(e.Call(t, "POST", eventsapi.Path, event("s2", `{"itemId":"B"}`)), 200)
	want(e.Call(t, "POST", eventsapi.Path, event("s2", `{"itemId":"B"}`)), 200) // a duplicate
	want(e.Call(t, "POST", eventsapi.Path, event("s3", `{}`)), 422)
	want(e.Call(t, "POST", eventsapi.Path, event("s4", `{"itemId":"B"}`), "X-Automation-Business-Units: bu-2"), 404)
	want(e.Call(t, "POST", eventsapi.Path, `{"itemId":"C"}`, "ce-specversion: 1.0", "ce-id: b1", "ce-source: /app", "ce-type: ViewItem",
		"ce-businessunitid: bu-1", "ce-customerid: C-1", "ce-time: 2026-07-10T16:00:00Z"), 200)
	want(e.Call(t, "POST", eventsapi.Path, `{}`, "ce-specversion: 1.0", "ce-id: b2", "ce-source: /app", "ce-type: ViewItem",
		"ce-businessunitid: bu-1", "ce-customerid: C-1"), 422)
	first := want(e.Call(t, "POST", eventsapi.Path, event("k1", `{"itemId":"D"}`), "Idempotency-Key: key-1"), 200)
	again := want(e.Call(t, "POST", eventsapi.Path, event("k1", `{"itemId":"D"}`), "Idempotency-Key: key-1"), 200)
	if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("Idempotency-Key: %s / %s %v", first.Body, again.Body, again.Header)
	}
	want(e.Call(t, "POST", eventsapi.Path, `{"not":"an array"}`, "Content-Type: application/cloudevents-batch+json"), 400)
	big := make([]string, 501)
	for i := range big {
		big[i] = event("x", `{"itemId":"E"}`)
	}
	want(e.Call(t, "POST", eventsapi.Path, "["+strings.Join(big, ",")+"]", "Content-Type: application/cloudevents-batch+json"), 413)
	m := want(e.Call(t, "GET", eventsapi.MetricsPath, ""), 200)
	if !strings.Contains(string(m.Body), `"outboxLag"`) || !strings.Contains(string(m.Body), `"eventType":"ViewItem"`) {
		t.Errorf("metrics: %s", m.Body)
	}
	// A metrics snapshot says when it was read (docs/api-conventions.md#freshness-of-report-answers):
	// the injected clock's instant, UTC. It once said nothing.
	if !strings.Contains(string(m.Body), `"asOf":"2026-07-10T16:00:00Z"`) {
		t.Errorf("metrics without their reading instant: %s", m.Body)
	}
	want(e.Call(t, "GET", eventsapi.MetricsPath+"?businessUnitId=bu-1", ""), 200)
	want(e.Call(t, "GET", eventsapi.MetricsPath+"?businessUnitId=bu-9", "", "X-Automation-Business-Units: bu-1"), 404)
	want(e.Call(t, "GET", eventsapi.MetricsPath+"?businessUnitId=bu-nowhere", ""), 404) // in scope (all), but no such unit
	want(e.Call(t, "GET", eventsapi.MetricsPath+"?nope=1", ""), 400)
}

// A document that disagrees with the answers fails the validation: the check is real.
func TestBrokenDocumentFailsValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	broken := e.Doc.Edit(t, func(s string) string {
		// A result's status without "duplicate": a real duplicate answer no longer matches.
		return strings.Replace(s, "status: {enum: [accepted, duplicate, rejected]}", "status: {enum: [accepted, rejected]}", 1)
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", registryapi.Prefix+"/types", strings.NewReader(viewItem))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Automation-Operator", "ops")
	e.RT.Functions.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("registry: %d %s", rec.Code, rec.Body)
	}
	body := "[" + event("d1", `{"itemId":"A"}`) + "]"
	send := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", eventsapi.Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/cloudevents-batch+json")
		e.RT.Functions.ServeHTTP(rec, req)
		return rec
	}
	send()
	rec = send() // d1 again: a duplicate
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"duplicate"`) {
		t.Fatalf("redelivery: %d %s", rec.Code, rec.Body)
	}
	exchange := func() (*http.Request, *http.Response) {
		req := httptest.NewRequest("POST", eventsapi.Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/cloudevents-batch+json")
		return req, openapitest.Answer(req, rec.Code, rec.Header(), rec.Body.Bytes())
	}
	e.Doc.CheckCaught(t, broken, exchange)
}

// TestRegistryVersionHasOneMeaning: with two types saved (the registry's save sequence at 3)
// and ViewItem at its version 2, the ingest result's registryVersion (the version that routed
// the event) and the metrics count's registryVersion are both ViewItem's 2; the metrics' own
// registry-wide figure is registrySeq, 3.
func TestRegistryVersionHasOneMeaning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	v1, err := e.RT.Registry.Save(ctx, gateway.SaveParams{EventType: "ViewItem", Definition: []byte(viewItem), Operator: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.RT.Registry.Save(ctx, gateway.SaveParams{EventType: "Login", Definition: []byte(`{"eventType":"Login","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"logins","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`), Operator: "ops"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.RT.Registry.Save(ctx, gateway.SaveParams{EventType: "ViewItem", Definition: []byte(viewItem), Operator: "ops", ExpectedVersion: v1.Version}); err != nil {
		t.Fatal(err)
	}
	r := e.Call(t, "POST", eventsapi.Path, "["+event("one-meaning", `{"itemId":"A"}`)+"]", "Content-Type: application/cloudevents-batch+json")
	var in eventsapi.Response
	if err := json.Unmarshal(r.Body, &in); err != nil || r.Code != 200 || len(in.Results) != 1 || in.Results[0].RegistryVersion != 2 {
		t.Fatalf("ingest: %d %s %v", r.Code, r.Body, err)
	}
	m := e.Call(t, "GET", eventsapi.MetricsPath, "")
	var out struct {
		RegistrySeq     *int64 `json:"registrySeq"`
		RegistryVersion *int64 `json:"registryVersion"`
		Counts          []struct {
			EventType       string `json:"eventType"`
			RegistryVersion int64  `json:"registryVersion"`
		} `json:"counts"`
	}
	if err := json.Unmarshal(m.Body, &out); err != nil || m.Code != 200 {
		t.Fatalf("metrics: %d %s %v", m.Code, m.Body, err)
	}
	if out.RegistrySeq == nil || *out.RegistrySeq != 3 || out.RegistryVersion != nil || len(out.Counts) != 1 ||
		out.Counts[0].EventType != "ViewItem" || out.Counts[0].RegistryVersion != in.Results[0].RegistryVersion {
		t.Fatalf("metrics: %s", m.Body)
	}
}

// One media-type rule for the ingest route and the management APIs (strictjson.MediaType):
// only the CloudEvents and JSON types of docs/gateway.md are taken, anything else is 415
// naming them; an array sent with the single-event type says to send it as a batch
// (issue 33, item 10).
func TestIngestMediaTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.RT.Registry.Save(context.Background(), gateway.SaveParams{EventType: "ViewItem", Definition: []byte(viewItem), Operator: "ops"}); err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"} {
		r := e.Call(t, "POST", eventsapi.Path, event("m-"+ct[:4], `{"itemId":"A"}`), "Content-Type: "+ct)
		if r.Code != 415 || !strings.Contains(string(r.Body), "application/cloudevents+json") || !strings.Contains(string(r.Body), "application/cloudevents-batch+json") {
			t.Errorf("%s: %d %s, want 415 naming the types taken", ct, r.Code, r.Body)
		}
	}
	// The management APIs answer the same way.
	r := e.call2(t, "POST", "/api/business-units", `{"id":"bu-x","name":"X","timeZone":"UTC"}`, "Content-Type: text/plain")
	if r.Code != 415 || !strings.Contains(string(r.Body), "application/json") {
		t.Errorf("management API: %d %s, want 415", r.Code, r.Body)
	}
	for _, ct := range []string{"application/cloudevents+json", "application/json"} {
		r := e.Call(t, "POST", eventsapi.Path, "["+event("arr-1", `{"itemId":"A"}`)+"]", "Content-Type: "+ct)
		if r.Code != 422 || !strings.Contains(string(r.Body), "application/cloudevents-batch+json") {
			t.Errorf("an array as %s: %d %s, want 422 saying to send a batch", ct, r.Code, r.Body)
		}
	}
}

// call2 sends a request through the runtime's router without checking it against this
// package's document (a route of another API).
func (e *env) call2(t *testing.T, method, path, body string, headers ...string) resp {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.RT.Functions.ServeHTTP(rec, req)
	return resp{Code: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// Each event a later stage would have dead-lettered is refused when posted (issue 33, item
// 1): alone, 422 naming the member (404 for a unit that does not exist, answered like one
// outside the caller's scope); in a batch, its own rejected result with the pointer while
// the others are accepted. Nothing is counted as accepted for them.
func TestIngestRefusesWhatWouldBeDeadLettered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.RT.Registry.Save(context.Background(), gateway.SaveParams{EventType: "ViewItem", Definition: []byte(viewItem), Operator: "ops"}); err != nil {
		t.Fatal(err)
	}
	ahead := `,"time":"2026-07-11T16:00:01Z"` // the clock is 2026-07-10T16:00Z: a day and a second ahead
	cases := []struct {
		name, body string
		code       int
		pointer    string
	}{
		{"unknown unit", strings.Replace(event("u1", `{"itemId":"A"}`), `"bu-1"`, `"bu-11"`, 1), 404, "/businessunitid"},
		{"a day ahead", strings.Replace(event("t1", `{"itemId":"A"}`), `"source"`, ahead[1:]+`,"source"`, 1), 422, "/time"},
		{"NUL in the id", event(`n\u00001`, `{"itemId":"A"}`), 422, "/id"},
		{"absurd number", event("x1", `{"itemId":"A","n":1e1000001}`), 422, "/data/n"},
		{"unregistered type", strings.Replace(event("r1", `{"itemId":"A"}`), `"ViewItem"`, `"ViewItme"`, 1), 422, "/type"},
	}
	var batch []string
	for _, c := range cases {
		r := e.Call(t, "POST", eventsapi.Path, c.body, "Content-Type: application/cloudevents+json")
		if r.Code != c.code || (c.code == 422 && !strings.Contains(string(r.Body), `"field":"`+c.pointer+`"`)) {
			t.Errorf("%s: %d %s, want %d at %s", c.name, r.Code, r.Body, c.code, c.pointer)
		}
		batch = append(batch, strings.Replace(c.body, `"id":"`, `"id":"b-`, 1))
	}
	batch = append(batch, event("b-ok", `{"itemId":"A"}`))
	// Not checked against the document: its validator cannot decode 1e1000001 itself.
	r := e.call2(t, "POST", eventsapi.Path, "["+strings.Join(batch, ",")+"]", "Content-Type: application/cloudevents-batch+json")
	var out eventsapi.Response
	if r.Code != 200 || json.Unmarshal(r.Body, &out) != nil || len(out.Results) != len(cases)+1 {
		t.Fatalf("batch: %d %s", r.Code, r.Body)
	}
	for i, c := range cases {
		if res := out.Results[i]; res.Status != "rejected" || res.Pointer != c.pointer {
			t.Errorf("batch %s: %+v, want rejected at %s", c.name, res, c.pointer)
		}
	}
	if last := out.Results[len(cases)]; last.Status != "accepted" {
		t.Errorf("the good event of the batch: %+v", last)
	}
	m := e.Call(t, "GET", eventsapi.MetricsPath, "")
	var mr eventsapi.MetricsResponse
	if json.Unmarshal(m.Body, &mr) != nil {
		t.Fatal(string(m.Body))
	}
	for _, c := range mr.Counts {
		if c.EventType == "ViewItem" && c.Accepted != 1 {
			t.Errorf("ViewItem counted %d accepted, want the one good event", c.Accepted)
		}
	}
}
