package inboxapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/inboxapi"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

type env struct {
	st     store.Store
	broker *inbox.Broker
	ch     *inbox.Channel
	router *funchost.Router
	srv    *httptest.Server
}

// newEnv serves the inbox routes to a caller who sees bu-1 only (bu-2 exists too), with
// at most maxStreams streams and heartbeats every heartbeat.
func newEnv(t *testing.T, maxStreams int, heartbeat time.Duration) *env {
	t.Helper()
	st := sqlitetest.Open(t)
	b := inbox.NewBroker(maxStreams, 8)
	scope := automation.ParseScope("bu-1")
	api := httpapi.New(httpapi.Options{BusinessUnits: &scope, Idempotency: st, Clock: automation.NewManualClock(t0.Add(time.Hour))})
	r := funchost.NewRouter(nil)
	svc := &inbox.Service{Store: st, Broker: b, Clock: automation.NewManualClock(t0.Add(time.Hour))}
	inboxapi.Register(r, api, svc, inboxapi.Options{Stream: inbox.StreamOptions{Heartbeat: heartbeat}})
	e := &env{st: st, broker: b, ch: &inbox.Channel{Store: st, Broker: b}, router: r, srv: httptest.NewServer(r)}
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) send(t *testing.T, bu, recipient, key string) {
	t.Helper()
	m := delivery.Message{DeliveryKey: key, BusinessUnitID: bu, Channel: "inbox", Recipient: recipient, Template: "welcome",
		PayloadJSON: `{"name":"Amelia"}`, Content: &delivery.Content{Subject: "Hi " + key, Text: "text " + key, HTML: "<p>" + key + "</p>"}, SentOn: t0}
	if _, err := e.ch.Send(context.Background(), m); err != nil {
		t.Fatalf("send %s: %v", key, err)
	}
}

// resp is one answer of the router.
type resp = openapitest.Recorded

// call sends a request through the router (a recorder; a stream is ended by timeout).
func (e *env) call(method, path string, timeout time.Duration, headers ...string) resp {
	req := httptest.NewRequest(method, path, http.NoBody)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if timeout > 0 {
		ctx, cancel := context.WithTimeout(req.Context(), timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	return resp{Code: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// TestOpenAPIDocumentMatchesRouter: openapi.yaml is valid OpenAPI 3.1 and documents exactly
// the routes inboxapi.Register adds, both ways; a renamed operation is caught.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := openapitest.LoadFile(t, "openapi.yaml")
	apptest.CheckRegistered(t, doc, func(r *funchost.Router, api *httpapi.API) {
		inboxapi.Register(r, api, &inbox.Service{}, inboxapi.Options{})
	}, "/api/inbox/{recipientId}/stream", "get", "post")
}

// validate returns why the exchange does not match the document ("" when it does).
func validate(v *openapitest.Doc, method, path string, r resp, headers ...string) string {
	req := httptest.NewRequest(method, path, http.NoBody)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return v.Mismatch(req, openapitest.Answer(req, r.Code, r.Header, r.Body))
}

// TestInboxAPIMatchesOpenAPI makes real calls — pages with the cursor and every state,
// mark read with and without If-Match, stale, unknown and out of scope, a stream and its
// refusals — checks each status and validates request and answer against openapi.yaml.
// Out of scope nothing is written.
func TestInboxAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, time.Hour)
	v := openapitest.LoadFile(t, "openapi.yaml")
	for i := 1; i <= 5; i++ {
		e.send(t, "bu-1", "user-1", fmt.Sprintf("dlv_%d", i))
	}
	e.send(t, "bu-2", "user-1", "dlv_other")
	vcall := func(want int, method, path string, timeout time.Duration, headers ...string) resp {
		t.Helper()
		r := e.call(method, path, timeout, headers...)
		if r.Code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.Code, r.Body, want)
		}
		if msg := validate(v, method, path, r, headers...); msg != "" {
			t.Errorf("%s %s → %d does not match openapi.yaml:\n%s\nbody: %s", method, path, r.Code, msg, r.Body)
		}
		return r
	}
	// Pages of 2, newest first, following the cursor.
	var ids []int64
	path := "/api/inbox/user-1?businessUnitId=bu-1&limit=2"
	for range 10 {
		var p inboxapi.Page
		vcall(200, "GET", path, 0).JSON(t, &p)
		for _, m := range p.Items {
			ids = append(ids, m.ID)
		}
		if p.NextCursor == "" {
			break
		}
		path = "/api/inbox/user-1?businessUnitId=bu-1&limit=2&cursor=" + url.QueryEscape(p.NextCursor)
	}
	if fmt.Sprint(ids) != "[5 4 3 2 1]" {
		t.Fatalf("pages gave %v, want [5 4 3 2 1]", ids)
	}
	// Mark 4 read: 428 without If-Match, 412 stale, then 200 with the new ETag.
	mark := "/api/inbox/user-1/messages/4/read?businessUnitId=bu-1"
	vcall(428, "POST", mark, 0)
	vcall(412, "POST", mark, 0, "If-Match", `"3"`)
	var m inboxapi.Message
	r := vcall(200, "POST", mark, 0, "If-Match", `"1"`)
	r.JSON(t, &m)
	if !m.Read || m.ReadOn == nil || !m.ReadOn.Equal(t0.Add(time.Hour)) || m.Version != 2 || r.Header.Get("ETag") != `"2"` || m.Subject != "Hi dlv_4" {
		t.Fatalf("marked: %+v ETag %s", m, r.Header.Get("ETag"))
	}
	vcall(412, "POST", mark, 0, "If-Match", `"1"`) // the version before the read is stale now
	vcall(200, "POST", mark, 0, "If-Match", `"2"`) // again at the current version: unchanged
	vcall(404, "POST", "/api/inbox/user-1/messages/99/read?businessUnitId=bu-1", 0, "If-Match", `"1"`)
	vcall(404, "POST", "/api/inbox/user-1/messages/x/read?businessUnitId=bu-1", 0, "If-Match", `"1"`)
	// Unread and read states.
	var unread, read inboxapi.Page
	vcall(200, "GET", "/api/inbox/user-1?businessUnitId=bu-1&state=unread", 0).JSON(t, &unread)
	vcall(200, "GET", "/api/inbox/user-1?businessUnitId=bu-1&state=read", 0).JSON(t, &read)
	if len(unread.Items) != 4 || len(read.Items) != 1 || read.Items[0].ID != 4 {
		t.Fatalf("unread %d, read %+v", len(unread.Items), read.Items)
	}
	// Bad input.
	vcall(400, "GET", "/api/inbox/user-1?businessUnitId=bu-1&state=unread&cursor="+url.QueryEscape(func() string {
		var p inboxapi.Page
		e.call("GET", "/api/inbox/user-1?businessUnitId=bu-1&limit=1", 0).JSON(t, &p)
		return p.NextCursor
	}()), 0) // a cursor of other filters
	vcall(400, "GET", "/api/inbox/user-1?businessUnitId=bu-1&limit=1000", 0)
	vcall(400, "GET", "/api/inbox/user-1?businessUnitId=bu-1&page=2", 0)
	vcall(422, "GET", "/api/inbox/user-1?businessUnitId=bu-1&state=archived", 0)
	vcall(422, "GET", "/api/inbox/user-1", 0)
	vcall(422, "GET", "/api/inbox/two%20words?businessUnitId=bu-1", 0)
	vcall(400, "GET", "/api/inbox/user-1/stream?businessUnitId=bu-1", 0, "Last-Event-ID", "abc")
	// Out of scope: 404, and the bu-2 message stays unread.
	vcall(404, "GET", "/api/inbox/user-1?businessUnitId=bu-2", 0)
	vcall(404, "POST", "/api/inbox/user-1/messages/1/read?businessUnitId=bu-2", 0, "If-Match", `"1"`)
	vcall(404, "GET", "/api/inbox/user-1/stream?businessUnitId=bu-2", 0)
	vcall(404, "GET", "/api/inbox/user-1?businessUnitId=bu-1", 0, httpapi.HeaderBusinessUnits, "bu-2")
	if got, _ := e.st.InboxGet(context.Background(), "bu-2", "user-1", 1); got.ReadOn != nil || got.Version != 1 {
		t.Fatalf("an out-of-scope mark wrote: %+v", got)
	}
	// A stream (ended by the client after 300 ms): the replay of every message.
	s := vcall(200, "GET", "/api/inbox/user-1/stream?businessUnitId=bu-1", 300*time.Millisecond, "Last-Event-ID", "3")
	if ct := s.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream Content-Type %q", ct)
	}
	if got := eventIDs(string(s.Body)); fmt.Sprint(got) != "[4 5]" {
		t.Fatalf("stream after 3 sent %v:\n%s", got, s.Body)
	}
	// The cap (1 stream): a second stream while one is open answers 503 with Retry-After.
	sub, err := e.broker.Subscribe("bu-1", "user-9")
	if err != nil {
		t.Fatal(err)
	}
	r = vcall(503, "GET", "/api/inbox/user-1/stream?businessUnitId=bu-1", 0)
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	sub.Close()
}

// eventIDs returns the id lines of an event-stream text.
func eventIDs(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			out = append(out, id)
		}
	}
	return out
}

// sse is a client of the stream route over a real connection.
type sse struct {
	events chan event
	cancel context.CancelFunc
	resp   *http.Response
}

type event struct {
	id, name string
	msg      inboxapi.Message
}

func (e *env) connect(t *testing.T, recipient, lastID string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/inbox/"+recipient+"/stream?businessUnitId=bu-1", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		cancel()
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("stream: %d %s", res.StatusCode, b)
	}
	c := &sse{events: make(chan event, 100), cancel: cancel, resp: res}
	connected := make(chan struct{})
	go func() {
		defer close(c.events)
		rd := bufio.NewReader(res.Body)
		var cur event
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == ": connected":
				close(connected)
			case strings.HasPrefix(line, "id: "):
				cur.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				cur.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.msg)
			case line == "" && cur.id != "":
				c.events <- cur
				cur = event{}
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not start")
	}
	t.Cleanup(c.close)
	return c
}

func (c *sse) close() { c.cancel(); _ = c.resp.Body.Close() }

// next returns the next event, or fails after 5 s.
func (c *sse) next(t *testing.T) event {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return event{}
}

// none fails if an event arrives within d.
func (c *sse) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		if ok {
			t.Fatalf("unexpected event %s (%s)", ev.id, ev.msg.Subject)
		}
	case <-time.After(d):
	}
}

// TestStreamSendsOnceAndResumesWithLastEventID: a message sent after connecting arrives once
// (its resend adds nothing); a client that reconnects with Last-Event-ID gets exactly the
// messages sent while it was away, then live ones.
func TestStreamSendsOnceAndResumesWithLastEventID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4, time.Hour)
	e.send(t, "bu-1", "user-1", "dlv_1")
	c := e.connect(t, "user-1", "1")
	e.send(t, "bu-1", "user-1", "dlv_2")
	ev := c.next(t)
	if ev.id != "2" || ev.name != "message" || ev.msg.ID != 2 || ev.msg.Subject != "Hi dlv_2" || string(ev.msg.Payload) != `{"name":"Amelia"}` {
		t.Fatalf("first event %+v", ev)
	}
	e.send(t, "bu-1", "user-1", "dlv_2") // a resend of the same delivery
	e.send(t, "bu-2", "user-1", "dlv_other")
	e.send(t, "bu-1", "user-2", "dlv_someone_else")
	c.none(t, 300*time.Millisecond)
	c.close()
	deadline := time.Now().Add(5 * time.Second)
	for e.broker.Subscribers() != 0 { // the stream ends when the client goes away
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers after the client left", e.broker.Subscribers())
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.send(t, "bu-1", "user-1", "dlv_3")
	e.send(t, "bu-1", "user-1", "dlv_4")
	again := e.connect(t, "user-1", "2")
	if a, b := again.next(t), again.next(t); a.id != "3" || b.id != "4" {
		t.Fatalf("resumed with %s, %s; want 3, 4", a.id, b.id)
	}
	e.send(t, "bu-1", "user-1", "dlv_5")
	if ev := again.next(t); ev.id != "5" {
		t.Fatalf("live after the replay: %s", ev.id)
	}
	again.none(t, 200*time.Millisecond)
}

// TestStreamConcurrencyCap: the instance holds at most its maximum of streams (503 with
// Retry-After beyond it); a slot frees when a client goes away.
func TestStreamConcurrencyCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, time.Hour)
	a := e.connect(t, "user-1", "")
	e.connect(t, "user-2", "")
	res, err := e.srv.Client().Get(e.srv.URL + "/api/inbox/user-3/stream?businessUnitId=bu-1")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %d Retry-After %q, want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	a.close()
	deadline := time.Now().Add(5 * time.Second)
	for e.broker.Subscribers() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers after a client left", e.broker.Subscribers())
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.connect(t, "user-3", "")
}

// TestStreamHeartbeat: an idle stream sends heartbeat comments. The stream is read for 2 s
// at a 50 ms heartbeat and must hold at least 2: the window is 40 intervals wide, so a
// loaded machine (which delays the ticker) cannot make the count fall short.
func TestStreamHeartbeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 50*time.Millisecond)
	r := e.call("GET", "/api/inbox/user-1/stream?businessUnitId=bu-1", 2*time.Second)
	if n := strings.Count(string(r.Body), ": heartbeat\n\n"); r.Code != 200 || n < 2 {
		t.Fatalf("%d, %d heartbeats in 2 s at 50 ms:\n%s", r.Code, n, r.Body)
	}
}

// TestOpenAPIValidationCatchesAMismatch: the validation above can fail — the same real
// answers against a document whose Message requires a member the API does not send, or
// whose problem codes lack NotFound, are refused.
func TestOpenAPIValidationCatchesAMismatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, time.Hour)
	e.send(t, "bu-1", "user-1", "dlv_1")
	list := e.call("GET", "/api/inbox/user-1?businessUnitId=bu-1", 0)
	missing := e.call("GET", "/api/inbox/user-1?businessUnitId=bu-2", 0)
	for name, c := range map[string]struct {
		edit func(string) string
		path string
		r    resp
	}{
		"Message requires deliveryKey": {func(s string) string {
			return strings.Replace(s, "required: [id, businessUnitId,", "required: [deliveryKey, id, businessUnitId,", 1)
		}, "/api/inbox/user-1?businessUnitId=bu-1", list},
		"problem codes without NotFound": {func(s string) string {
			return strings.Replace(s, "enum: [Malformed, Unauthorized, NotFound, ", "enum: [Malformed, Unauthorized, ", 1)
		}, "/api/inbox/user-1?businessUnitId=bu-2", missing},
	} {
		good := openapitest.LoadFile(t, "openapi.yaml")
		if msg := validate(good, "GET", c.path, c.r); msg != "" {
			t.Fatalf("%s: the real document refuses the answer: %s", name, msg)
		}
		bad := good.Edit(t, c.edit)
		if validate(bad, "GET", c.path, c.r) == "" {
			t.Errorf("%s: the answer was not refused", name)
		}
	}
}

// Write deadlines come from Options.IOClock: with a clock stuck an hour in the past every
// deadline has already passed, so the first write fails and the stream ends at once
// (with the system clock the same request streams; see the tests above).
func TestStreamWriteDeadlinesUseTheIOClock(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	b := inbox.NewBroker(4, 8)
	scope := automation.ParseScope("bu-1")
	api := httpapi.New(httpapi.Options{BusinessUnits: &scope, Idempotency: st, Clock: automation.NewManualClock(t0)})
	r := funchost.NewRouter(nil)
	svc := &inbox.Service{Store: st, Broker: b, Clock: automation.NewManualClock(t0)}
	inboxapi.Register(r, api, svc, inboxapi.Options{IOClock: automation.NewManualClock(time.Now().Add(-time.Hour))})
	srv := httptest.NewServer(r)
	defer srv.Close()
	client := &http.Client{Timeout: 2 * time.Second} // an ignored IOClock would stream on
	res, err := client.Get(srv.URL + "/api/inbox/user-1/stream?businessUnitId=bu-1")
	if err == nil {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(body), ": connected") {
			t.Fatalf("the stream wrote past a deadline that had passed: %d %q", res.StatusCode, body)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Subscribers() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers: the stream did not end", b.Subscribers())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// With Units set (as the runtime wires it), a business unit that does not exist answers 404
// like one outside the caller's scope, not an empty inbox (a typo in businessUnitId).
func TestUnknownUnitIsNotFound(t *testing.T) {
	st := sqlitetest.Open(t)
	if err := st.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "UTC"}); err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(httpapi.Options{Idempotency: st, Clock: automation.NewManualClock(t0.Add(time.Hour))})
	r := funchost.NewRouter(nil)
	svc := &inbox.Service{Store: st, Broker: inbox.NewBroker(2, 8), Clock: automation.NewManualClock(t0.Add(time.Hour))}
	inboxapi.Register(r, api, svc, inboxapi.Options{Units: st})
	for path, want := range map[string]int{"/api/inbox/user-1?businessUnitId=bu-1": 200, "/api/inbox/user-1?businessUnitId=bu-l": 404} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("GET %s: %d %s, want %d", path, rec.Code, rec.Body, want)
		}
	}
}
