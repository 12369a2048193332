package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

func TestStatusAndProblemOfEveryCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{automation.Errorf(automation.CodeMalformed, "x"), 400, "Malformed"},
		{automation.Errorf(automation.CodeUnauthorized, "x"), 401, "Unauthorized"},
		{automation.Errorf(automation.CodeNotFound, "x"), 404, "NotFound"},
		{fmt.Errorf("wrapped: %w", store.ErrNotFound), 404, "NotFound"},
		{automation.Errorf(automation.CodeConflict, "x"), 409, "Conflict"},
		{store.ErrConflict, 409, "Conflict"},
		{automation.Errorf(automation.CodeInProgress, "x"), 409, "RequestInProgress"},
		{automation.Errorf(automation.CodePreconditionFailed, "x"), 412, "PreconditionFailed"},
		{fmt.Errorf("sqlite X: %w", store.ErrLeaseLost), 412, "PreconditionFailed"},
		{automation.Invalid("name", "is required"), 422, "InvalidInput"},
		{automation.Errorf(automation.CodeIdempotencyMismatch, "x"), 422, "IdempotencyKeyReused"},
		{automation.Errorf(automation.CodePreconditionRequired, "x"), 428, "PreconditionRequired"},
		{errors.New("dial tcp 10.0.0.5:1433: secret host"), 500, "Internal"},
		// Intents (automation.Intent) without a code: only "retry after" has a status.
		{automation.RetryAfter(time.Second, errors.New("secret busy")), 503, "Unavailable"},
		{fmt.Errorf("w: %w", automation.RetryAfter(time.Second, errors.New("secret busy"))), 503, "Unavailable"},
		{automation.Permanent(errors.New("secret gone")), 500, "Internal"},
		{automation.Unknown(errors.New("secret timeout")), 500, "Internal"},
		// A code wins over an intent.
		{automation.RetryAfter(time.Second, automation.Errorf(automation.CodeConflict, "x")), 409, "Conflict"},
		{automation.Permanent(automation.Invalid("f", "bad")), 422, "InvalidInput"},
		{automation.Unknown(store.ErrNotFound), 404, "NotFound"},
	}
	for _, c := range cases {
		p := httpapi.ProblemOf(c.err)
		if p.Status != c.status || p.Code != c.code || p.Type != httpapi.ProblemTypeBase+c.code || p.Title == "" {
			t.Errorf("ProblemOf(%v) = %+v, want %d %s", c.err, p, c.status, c.code)
		}
		if c.status >= 500 && strings.Contains(p.Detail, "secret") {
			t.Errorf("500 leaks the internal error: %q", p.Detail)
		}
	}
}

// The store's sentinels are automation.Errors with codes, but their answer keeps its fixed
// detail (the store's own text never reaches a client); RetryAfter answers Retry-After.
func TestStoreSentinelsAndRetryAfterAnswers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err    error
		code   automation.ErrorCode
		detail string
	}{
		{store.ErrNotFound, automation.CodeNotFound, "not found"},
		{fmt.Errorf("x: %w", store.ErrLeaseLost), automation.CodeLeaseLost, "the resource changed since it was read; read it again"},
		{store.ErrConflict, automation.CodeConflict, "the request conflicts with the current state of the resource; read it again"},
	} {
		if got := automation.CodeOf(c.err); got != c.code {
			t.Errorf("CodeOf(%v) = %s, want %s", c.err, got, c.code)
		}
		if p := httpapi.ProblemOf(c.err); p.Detail != c.detail {
			t.Errorf("ProblemOf(%v).Detail = %q, want %q", c.err, p.Detail, c.detail)
		}
	}
	rr := httptest.NewRecorder()
	httpapi.WriteError(rr, nil, nil, automation.RetryAfter(1500*time.Millisecond, errors.New("busy")))
	if rr.Code != 503 || rr.Header().Get("Retry-After") != "2" || strings.Contains(rr.Body.String(), "busy") {
		t.Fatalf("%d Retry-After %q %s", rr.Code, rr.Header().Get("Retry-After"), rr.Body)
	}
}

func TestValidationProblemListsEveryField(t *testing.T) {
	t.Parallel()
	err := automation.InvalidFields(automation.Invalid("offsetsDays[1]", "must not be negative"),
		nil, automation.Invalid("sendLocalTime", "25:00 is not a time of day"))
	rr := httptest.NewRecorder()
	httpapi.WriteError(rr, httptest.NewRequest("POST", "/api/x", nil), nil, err)
	if rr.Code != 422 || rr.Header().Get("Content-Type") != httpapi.ProblemContentType {
		t.Fatalf("status %d, content type %q", rr.Code, rr.Header().Get("Content-Type"))
	}
	var p httpapi.Problem
	if err := json.Unmarshal(rr.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) != 2 || p.Errors[0].Field != "offsetsDays[1]" || p.Errors[1].Field != "sendLocalTime" || p.Instance != "/api/x" {
		t.Fatalf("problem = %+v", p)
	}
	if automation.InvalidFields() != nil || automation.InvalidFields(nil, nil) != nil {
		t.Fatal("InvalidFields of nothing must be nil")
	}
}

type body struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func TestDecodeJSONRejectsBadBodies(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, ct, body, want string }{
		{"empty", "", "", "empty"},
		{"not json", "", "name=x", "not valid JSON"},
		{"unknown field", "", `{"name":"a","nmae":"b"}`, "nmae"},
		{"wrong type", "", `{"count":"3"}`, "count"},
		{"two values", "", `{"name":"a"} {"name":"b"}`, "more than one"},
		{"truncated", "", `{"name":"a"`, "truncated"},
		{"array", "", `[1]`, "(body)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
			if c.ct != "" {
				r.Header.Set("Content-Type", c.ct)
			}
			var b body
			err := httpapi.DecodeJSON(r, &b)
			if automation.CodeOf(err) != automation.CodeMalformed || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want Malformed mentioning %q", err, c.want)
			}
		})
	}
	// A media type other than application/json is 415 naming what the route takes (the one
	// rule of every API: strictjson.MediaType), also a +json type the route does not take.
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/merge-patch+json", "application/json; charset=latin1"} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"name":"a"}`))
		r.Header.Set("Content-Type", ct)
		var b body
		err := httpapi.DecodeJSON(r, &b)
		if automation.CodeOf(err) != automation.CodeUnsupportedMediaType || httpapi.StatusOf(err) != 415 || !strings.Contains(err.Error(), "Content-Type") {
			t.Errorf("%s: %v, want 415 on Content-Type", ct, err)
		}
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader(` {"name":"a","count":2} `))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	var b body
	if err := httpapi.DecodeJSON(r, &b); err != nil || b.Name != "a" || b.Count != 2 {
		t.Fatalf("good body: %+v, %v", b, err)
	}
}

func TestIfMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		header   string
		required bool
		version  int64
		ok       bool
		code     automation.ErrorCode
	}{
		{`"7"`, true, 7, true, ""},
		{` "0" `, false, 0, false, automation.CodePreconditionFailed}, // versions start at 1
		{"", false, 0, false, ""},
		{"", true, 0, false, automation.CodePreconditionRequired},
		{"*", true, 0, false, automation.CodeMalformed},
		{`W/"7"`, true, 0, false, automation.CodeMalformed},
		{`"7", "8"`, true, 0, false, automation.CodeMalformed},
		{`"-1"`, true, 0, false, automation.CodeMalformed},
		{`7`, true, 0, false, automation.CodeMalformed},
	}
	for _, c := range cases {
		r := httptest.NewRequest("PUT", "/", nil)
		if c.header != "" {
			r.Header.Set("If-Match", c.header)
		}
		v, ok, err := httpapi.IfMatch(r, c.required)
		if c.code != "" {
			if automation.CodeOf(err) != c.code {
				t.Errorf("If-Match %q: err = %v, want %s", c.header, err, c.code)
			}
			continue
		}
		if err != nil || v != c.version || ok != c.ok {
			t.Errorf("If-Match %q = %d, %v, %v", c.header, v, ok, err)
		}
	}
	if httpapi.ETag(7) != `"7"` {
		t.Fatal(httpapi.ETag(7))
	}
	if err := httpapi.CheckVersion(6, true, 7); httpapi.StatusOf(err) != 412 {
		t.Fatalf("stale version: %v", err)
	}
	if httpapi.CheckVersion(7, true, 7) != nil || httpapi.CheckVersion(0, false, 7) != nil {
		t.Fatal("current or absent If-Match must pass")
	}
}

func TestCursorRoundTripAndTampering(t *testing.T) {
	t.Parallel()
	type pos struct {
		AfterID int64 `json:"afterId"`
	}
	c, err := httpapi.EncodeCursor("bu=a&status=Pending", pos{AfterID: 42})
	if err != nil {
		t.Fatal(err)
	}
	var p pos
	if err := httpapi.DecodeCursor(c, "bu=a&status=Pending", &p); err != nil || p.AfterID != 42 {
		t.Fatalf("round trip: %+v, %v", p, err)
	}
	for name, bad := range map[string]string{
		"garbage": "!!!", "not ours": "eyJ4IjoxfQ", "other query": c, "too long": strings.Repeat("a", 5000),
	} {
		q := "bu=a&status=Pending"
		if name == "other query" {
			q = "bu=b"
		}
		if err := httpapi.DecodeCursor(bad, q, &p); httpapi.StatusOf(err) != 400 || !strings.Contains(err.Error(), "cursor") {
			t.Errorf("%s: err = %v, want 400 about cursor", name, err)
		}
	}
}

func TestQueryIsStrict(t *testing.T) {
	t.Parallel()
	q := httpapi.NewQuery(url.Values{"status": {"Pending"}, "bogus": {"1"}, "limit": {"5", "6"}})
	err := q.Check("status", "limit")
	var e *automation.Error
	if !errors.As(err, &e) || len(e.Fields) != 2 || e.Fields[0].Field != "bogus" || e.Fields[1].Field != "limit" {
		t.Fatalf("Check = %v", err)
	}
	q = httpapi.NewQuery(url.Values{"limit": {"0"}, "held": {"yes"}, "from": {"yesterday"}})
	if _, err := q.Int("limit", 50, 1, 500); httpapi.StatusOf(err) != 400 {
		t.Errorf("limit 0: %v", err)
	}
	if _, err := q.Bool("held"); httpapi.StatusOf(err) != 400 {
		t.Errorf("held=yes: %v", err)
	}
	if _, err := q.Time("from"); httpapi.StatusOf(err) != 400 {
		t.Errorf("from=yesterday: %v", err)
	}
	q = httpapi.NewQuery(url.Values{"from": {"2026-11-30T20:00:00+11:00"}})
	if tm, err := q.Time("from"); err != nil || !tm.Equal(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) || tm.Location() != time.UTC {
		t.Errorf("from: %v, %v", tm, err)
	}
	if n, err := q.Int("limit", 50, 1, 500); n != 50 || err != nil {
		t.Errorf("default limit: %d %v", n, err)
	}
}

// The scope itself is tested in shared/automation (TestScope); here: without a caller
// (a handler reached without API.Handler) the context sees nothing.
func TestCallerFromFailsClosed(t *testing.T) {
	t.Parallel()
	if httpapi.CallerFrom(context.Background()).Scope.Allows("bu-a") {
		t.Fatal("no caller must see nothing")
	}
}

// echo answers the caller it sees.
func echo(w http.ResponseWriter, r *http.Request) error {
	c := httpapi.CallerFrom(r.Context())
	httpapi.WriteJSON(w, 200, map[string]any{"scope": c.Scope.String(), "operator": c.Operator})
	return nil
}

func do(t *testing.T, h http.Handler, method, target, body string, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, r)
	return rr
}

func TestAuthScopeAndOperator(t *testing.T) {
	t.Parallel()
	allowed := automation.ParseScope("bu-a,bu-b")
	api := httpapi.New(httpapi.Options{Token: "s3cret", BusinessUnits: &allowed})
	h := api.Handler(echo)
	for _, auth := range []string{"", "Bearer wrong", "Basic s3cret", "Bearer"} {
		rr := do(t, h, "GET", "/api/x", "", map[string]string{"Authorization": auth})
		if rr.Code != 401 || rr.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: %d", auth, rr.Code)
		}
	}
	rr := do(t, h, "GET", "/api/x", "", map[string]string{"Authorization": "bearer s3cret",
		httpapi.HeaderBusinessUnits: "bu-b,bu-z", "X-Automation-Operator": " ana\x07 "})
	if rr.Code != 200 || !strings.Contains(rr.Body.String(), `"scope":"bu-b"`) || !strings.Contains(rr.Body.String(), `"operator":"ana"`) {
		t.Fatalf("%d %s", rr.Code, rr.Body)
	}
	rr = do(t, h, "GET", "/api/x", "", map[string]string{"Authorization": "Bearer s3cret", "X-MS-CLIENT-PRINCIPAL-NAME": "ops@example.test"})
	if !strings.Contains(rr.Body.String(), `"scope":"bu-a,bu-b"`) || !strings.Contains(rr.Body.String(), `ops@example.test`) {
		t.Fatalf("default scope / principal: %s", rr.Body)
	}
}

func TestHandlerMapsErrorsAndPanics(t *testing.T) {
	t.Parallel()
	api := httpapi.New(httpapi.Options{})
	rr := do(t, api.Handler(func(http.ResponseWriter, *http.Request) error { return store.ErrNotFound }), "GET", "/api/x/1", "", nil)
	if rr.Code != 404 || rr.Header().Get("Content-Type") != httpapi.ProblemContentType {
		t.Fatalf("%d %s", rr.Code, rr.Body)
	}
	rr = do(t, api.Handler(func(http.ResponseWriter, *http.Request) error { panic("boom") }), "GET", "/api/x", "", nil)
	if rr.Code != 500 || strings.Contains(rr.Body.String(), "boom") {
		t.Fatalf("panic: %d %s", rr.Code, rr.Body)
	}
	big := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	rr = do(t, api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		var b body
		return httpapi.DecodeJSON(r, &b)
	}), "POST", "/api/x", big, nil)
	if rr.Code != 413 || !strings.Contains(rr.Body.String(), "larger than") {
		t.Fatalf("big body: %d %s", rr.Code, rr.Body)
	}
}

type fixedClock struct{ t atomic.Pointer[time.Time] }

func (c *fixedClock) Now() time.Time      { return *c.t.Load() }
func (c *fixedClock) set(t time.Time)     { c.t.Store(&t) }
func (c *fixedClock) add(d time.Duration) { c.set(c.Now().Add(d)) }

func idempotentAPI(t *testing.T) (*httpapi.API, *fixedClock) {
	t.Helper()
	st := sqlitetest.Open(t)
	clk := &fixedClock{}
	clk.set(time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC))
	return httpapi.New(httpapi.Options{Idempotency: st, Clock: clk, IdempotencyLease: time.Minute}), clk
}

func TestIdempotencyKeyReplaysMismatchesAndReleases(t *testing.T) {
	t.Parallel()
	api, _ := idempotentAPI(t)
	var runs atomic.Int32
	var failNext atomic.Bool
	create := api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		var b body
		if err := httpapi.DecodeJSON(r, &b); err != nil {
			return err
		}
		if failNext.Swap(false) {
			return errors.New("database unavailable")
		}
		runs.Add(1)
		id, ok := httpapi.DeterministicID(r.Context(), "thing")
		if !ok {
			id = fmt.Sprintf("random-%d", runs.Load())
		}
		w.Header().Set("Location", "/api/things/"+id)
		httpapi.SetETag(w, 1)
		httpapi.WriteJSON(w, 201, map[string]any{"id": id, "name": b.Name, "run": runs.Load()})
		return nil
	})
	key := map[string]string{"Idempotency-Key": "order-1"}

	first := do(t, create, "POST", "/api/things", `{"name":"a"}`, key)
	if first.Code != 201 || first.Header().Get(httpapi.HeaderIdempotentReplayed) != "" {
		t.Fatalf("first: %d %s", first.Code, first.Body)
	}
	again := do(t, create, "POST", "/api/things", "{\n  \"name\": \"a\"\n}", key) // same JSON, other whitespace
	if again.Code != 201 || again.Body.String() != first.Body.String() || again.Header().Get("ETag") != `"1"` ||
		again.Header().Get("Location") != first.Header().Get("Location") || again.Header().Get(httpapi.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("replay: %d %v %s", again.Code, again.Header(), again.Body)
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", runs.Load())
	}
	other := do(t, create, "POST", "/api/things", `{"name":"b"}`, key)
	if other.Code != 422 || !strings.Contains(other.Body.String(), "IdempotencyKeyReused") {
		t.Fatalf("other body: %d %s", other.Code, other.Body)
	}
	// Another route with the same key is another record.
	if rr := do(t, create, "POST", "/api/others", `{"name":"b"}`, key); rr.Code != 201 {
		t.Fatalf("other path: %d", rr.Code)
	}
	// Errors are not stored: the client may fix the request and reuse the key.
	k2 := map[string]string{"Idempotency-Key": "order-2"}
	if rr := do(t, create, "POST", "/api/things", `{"nmae":"c"}`, k2); rr.Code != 400 {
		t.Fatalf("bad body: %d", rr.Code)
	}
	failNext.Store(true)
	if rr := do(t, create, "POST", "/api/things", `{"name":"c"}`, k2); rr.Code != 500 {
		t.Fatalf("server error: %d", rr.Code)
	}
	ok := do(t, create, "POST", "/api/things", `{"name":"c"}`, k2)
	if ok.Code != 201 {
		t.Fatalf("retry after 500: %d %s", ok.Code, ok.Body)
	}
	// The deterministic id is the same on every attempt with the key.
	var a, b map[string]any
	_ = json.Unmarshal(first.Body.Bytes(), &a)
	_ = json.Unmarshal(ok.Body.Bytes(), &b)
	id1, _ := a["id"].(string)
	if len(id1) != 36 || id1 == b["id"] {
		t.Fatalf("ids %v / %v: want UUIDs differing per key", a["id"], b["id"])
	}
}

func TestIdempotencyKeyInProgressAndCrashTakeOver(t *testing.T) {
	t.Parallel()
	api, clk := idempotentAPI(t)
	release := make(chan struct{})
	entered := make(chan struct{})
	var ids []string
	slow := api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		id, _ := httpapi.DeterministicID(r.Context(), "thing")
		ids = append(ids, id)
		if len(ids) == 1 {
			close(entered)
			<-release
		}
		httpapi.WriteJSON(w, 201, map[string]string{"id": id})
		return nil
	})
	key := map[string]string{"Idempotency-Key": "k"}
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- do(t, slow, "POST", "/api/things", `{}`, key) }()
	<-entered
	busy := do(t, slow, "POST", "/api/things", `{}`, key)
	if busy.Code != 409 || busy.Header().Get("Retry-After") == "" || !strings.Contains(busy.Body.String(), "RequestInProgress") {
		t.Fatalf("concurrent: %d %v %s", busy.Code, busy.Header(), busy.Body)
	}
	// The first attempt hangs past its lease (as if its process died): a retry takes the key
	// over and derives the same id, so the resource is found, not created twice.
	clk.add(2 * time.Minute)
	retry := do(t, slow, "POST", "/api/things", `{}`, key)
	if retry.Code != 201 || len(ids) != 2 || ids[0] != ids[1] {
		t.Fatalf("take-over: %d, ids %v", retry.Code, ids)
	}
	close(release)
	if first := <-done; first.Code != 201 {
		t.Fatalf("first: %d", first.Code)
	}
	if again := do(t, slow, "POST", "/api/things", `{}`, key); again.Code != 201 || again.Header().Get(httpapi.HeaderIdempotentReplayed) != "true" || len(ids) != 2 {
		t.Fatalf("after completion a retry must replay: %d, handler ran %d times", again.Code, len(ids))
	}
}

func TestIdempotencyKeyBadUse(t *testing.T) {
	t.Parallel()
	api, _ := idempotentAPI(t)
	h := api.Handler(echo)
	for name, hdr := range map[string]map[string]string{
		"too long":  {"Idempotency-Key": strings.Repeat("k", 151)},
		"spaces":    {"Idempotency-Key": "a b"},
		"non-ascii": {"Idempotency-Key": "clé"},
	} {
		if rr := do(t, h, "POST", "/api/x", `{}`, hdr); rr.Code != 400 {
			t.Errorf("%s: %d", name, rr.Code)
		}
	}
	if rr := do(t, h, "PUT", "/api/x", `{}`, map[string]string{"Idempotency-Key": "k"}); rr.Code != 400 {
		t.Errorf("PUT with key: %d", rr.Code)
	}
	none := httpapi.New(httpapi.Options{}).Handler(echo)
	if rr := do(t, none, "POST", "/api/x", `{}`, map[string]string{"Idempotency-Key": "k"}); rr.Code != 400 {
		t.Errorf("no store: %d", rr.Code)
	}
}
