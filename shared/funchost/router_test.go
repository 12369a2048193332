package funchost_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
)

const timerInvocation = `{"Data":{"timer":{"Schedule":{"AdjustForDST":true},"ScheduleStatus":null,"IsPastDue":false}},"Metadata":{"sys":{"MethodName":"DueWorkPoller"}}}`

func serve(r http.Handler, method, target string, body io.Reader) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, body)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	return rec
}

// checkJSON asserts the invariant of every reply: JSON content type (problem details for
// the router's own errors on forwarded paths), non-empty body.
func checkJSON(t *testing.T, rec *httptest.ResponseRecorder, status int) string {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" && ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if rec.Body.Len() == 0 {
		t.Fatal("empty body")
	}
	return rec.Body.String()
}

func TestRouterReadinessAndMethods(t *testing.T) {
	t.Parallel()
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
	r.Register("DueWorkPoller", func(context.Context, *funchost.Invocation) (funchost.Result, error) {
		return funchost.Result{}, nil
	})
	if body := checkJSON(t, serve(r, http.MethodGet, "/", nil), 200); body != `{"status":"ok"}` {
		t.Fatalf("readiness body %s", body)
	}
	rec := serve(r, http.MethodPost, "/", strings.NewReader("{}"))
	checkJSON(t, rec, http.StatusMethodNotAllowed)
	rec = serve(r, http.MethodGet, "/DueWorkPoller", nil)
	checkJSON(t, rec, http.StatusMethodNotAllowed)
	if rec.Header().Get("Allow") != "POST" {
		t.Fatalf("Allow %q", rec.Header().Get("Allow"))
	}
	for _, target := range []string{"/NoSuchFunction", "/DueWorkPoller/extra", "/DueWorkPoller/"} {
		body := checkJSON(t, serve(r, http.MethodPost, target, strings.NewReader(timerInvocation)), http.StatusNotFound)
		if !strings.Contains(body, "no function named") {
			t.Fatalf("%s: %s", target, body)
		}
	}
	// The host matches function names case-insensitively; so do we.
	checkJSON(t, serve(r, http.MethodPost, "/dueworkpoller", strings.NewReader(timerInvocation)), 200)
	if got := r.Functions(); len(got) != 1 || got[0] != "DueWorkPoller" {
		t.Fatalf("Functions() = %v", got)
	}
}

func TestRouterResponseShape(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		res    funchost.Result
		err    error
		status int
		body   string
	}{
		{"empty result", funchost.Result{}, nil, 200, `{"Outputs":{},"Logs":[],"ReturnValue":null}`},
		{"outputs and return value", funchost.Result{Outputs: map[string]any{"outMsg": map[string]int{"id": 1}}, Logs: []string{"a"}, ReturnValue: "r"}, nil,
			200, `{"Outputs":{"outMsg":{"id":1}},"Logs":["a"],"ReturnValue":"r"}`},
		{"permanent drops outputs, keeps logs", funchost.Result{Outputs: map[string]any{"outMsg": 1}, Logs: []string{"recorded"}, ReturnValue: 1},
			automation.Permanent(errors.New("bad input")), 200,
			`{"Outputs":{},"Logs":["recorded","permanent failure, not retried: bad input"],"ReturnValue":null}`},
		{"wrapped permanent", funchost.Result{}, errors.Join(errors.New("ctx"), automation.Permanent(errors.New("gone"))), 200,
			`{"Outputs":{},"Logs":["permanent failure, not retried: ctx\ngone"],"ReturnValue":null}`},
		{"retryable", funchost.Result{Logs: []string{"lost"}}, errors.New("timeout"), 500, `{"error":"timeout"}`},
		{"retry after: the host has no delay, it retries", funchost.Result{}, automation.RetryAfter(time.Minute, errors.New("busy")), 500, `{"error":"busy"}`},
		{"outcome unknown is retried", funchost.Result{}, fmt.Errorf("send: %w", automation.Unknown(errors.New("no answer"))), 500, `{"error":"send: no answer"}`},
		{"unencodable output is retried", funchost.Result{Outputs: map[string]any{"x": make(chan int)}}, nil, 500, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
			r.Register("OutboxRelay", func(context.Context, *funchost.Invocation) (funchost.Result, error) { return tc.res, tc.err })
			body := checkJSON(t, serve(r, http.MethodPost, "/OutboxRelay", strings.NewReader(timerInvocation)), tc.status)
			if tc.body != "" && body != tc.body {
				t.Fatalf("body\n%s\nwant\n%s", body, tc.body)
			}
		})
	}
}

func TestRouterHandlerPanicIsRetried(t *testing.T) {
	t.Parallel()
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
	r.Register("DueWorkExecutor", func(context.Context, *funchost.Invocation) (funchost.Result, error) { panic("boom") })
	body := checkJSON(t, serve(r, http.MethodPost, "/DueWorkExecutor", strings.NewReader(`{"Data":{},"Metadata":{}}`)), 500)
	if !strings.Contains(body, "handler panicked: boom") {
		t.Fatal(body)
	}
}

// boundedRouter is a router of opts with the timer function DueWorkPoller (answers an empty
// result) and the forwarded route POST /api/events (reads the whole body: 413 when the
// router's bound stops it, else 200 {}).
func boundedRouter(opts *funchost.RouterOptions) *funchost.Router {
	r := funchost.NewRouter(opts)
	r.Register("DueWorkPoller", func(context.Context, *funchost.Invocation) (funchost.Result, error) { return funchost.Result{}, nil })
	r.RegisterHTTP("POST /api/events", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, err := io.ReadAll(req.Body); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = w.Write([]byte(`{"error":"too large"}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	return r
}

// bigInvocation is an invocation of more than 64 bytes.
var bigInvocation = `{"Data":{"x":"` + strings.Repeat("a", 100) + `"},"Metadata":{}}`

func TestRouterBodyLimit(t *testing.T) {
	t.Parallel()
	r := boundedRouter(&funchost.RouterOptions{Logger: quiet, MaxBodyBytes: 64})
	for _, target := range []string{"/DueWorkPoller", "/api/events"} {
		// Declared length over the limit.
		checkJSON(t, serve(r, http.MethodPost, target, strings.NewReader(bigInvocation)), http.StatusRequestEntityTooLarge)
		// Unknown length (chunked): the limit applies while reading.
		req := httptest.NewRequest(http.MethodPost, target, io.MultiReader(strings.NewReader(bigInvocation)))
		req.ContentLength = -1
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		checkJSON(t, rec, http.StatusRequestEntityTooLarge)
	}
	checkJSON(t, serve(r, http.MethodPost, "/DueWorkPoller", strings.NewReader(`{"Data":{},"Metadata":{}}`)), 200)
}

// The forwarded bound may exceed the invocations' (the event ingest route's batches) without
// raising what an invocation may carry.
func TestRouterForwardedBodyBoundIsItsOwn(t *testing.T) {
	t.Parallel()
	r := boundedRouter(&funchost.RouterOptions{Logger: quiet, MaxBodyBytes: 64, MaxForwardedBodyBytes: 256})
	checkJSON(t, serve(r, http.MethodPost, "/DueWorkPoller", strings.NewReader(bigInvocation)), http.StatusRequestEntityTooLarge)
	checkJSON(t, serve(r, http.MethodPost, "/api/events", strings.NewReader(bigInvocation)), http.StatusOK)
	huge := strings.Repeat("a", 300)
	checkJSON(t, serve(r, http.MethodPost, "/api/events", strings.NewReader(huge)), http.StatusRequestEntityTooLarge)
}

func TestRouterMalformedInvocations(t *testing.T) {
	t.Parallel()
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
	r.Register("DueWorkPoller", func(context.Context, *funchost.Invocation) (funchost.Result, error) {
		t.Error("handler called")
		return funchost.Result{}, nil
	})
	for _, body := range []string{"", "   ", "null", "[]", `"x"`, `{"Data":`, `{"Data":{}} {}`, `{"Data":[]}`, `{"Metadata":"x"}`} {
		checkJSON(t, serve(r, http.MethodPost, "/DueWorkPoller", strings.NewReader(body)), http.StatusBadRequest)
	}
}

func TestRouterInvocationContext(t *testing.T) {
	t.Parallel()
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet, InvocationTimeout: time.Minute})
	r.Register("OutboxRelay", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		if _, ok := ctx.Deadline(); !ok {
			return funchost.Result{}, errors.New("no deadline")
		}
		if inv.InvocationID != "abc" || inv.Request.Metadata["sys"] == nil {
			return funchost.Result{}, errors.New("bad invocation")
		}
		return funchost.Result{}, nil
	})
	req := httptest.NewRequest(http.MethodPost, "/OutboxRelay", strings.NewReader(timerInvocation))
	req.Header.Set(funchost.InvocationIDHeader, "abc")
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	checkJSON(t, rec, 200)
}

func TestRouterForwardedHTTP(t *testing.T) {
	t.Parallel()
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
	r.RegisterHTTP("GET /api/support/{id}", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		_, _ = w.Write([]byte("id\n" + req.PathValue("id") + "\n"))
	}))
	r.RegisterHTTP("GET /api/reports/", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = w.Write([]byte(`{"reports":[]}`))
	}))
	r.RegisterHTTP("POST /api/panics", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))

	rec := serve(r, http.MethodGet, "/api/support/42", nil)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/csv" || rec.Body.String() != "id\n42\n" {
		t.Fatalf("own content type must be kept: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if body := checkJSON(t, serve(r, http.MethodGet, "/api/reports/", nil), 200); body != `{"reports":[]}` {
		t.Fatal(body)
	}
	// The mux's own redirect (subtree without its slash) is answered in JSON, Location kept.
	rec = serve(r, http.MethodGet, "/api/reports", nil)
	if rec.Code != http.StatusMovedPermanently && rec.Code != http.StatusTemporaryRedirect {
		t.Fatalf("redirect status %d", rec.Code)
	}
	checkJSON(t, rec, rec.Code)
	if rec.Header().Get("Location") != "/api/reports/" {
		t.Fatalf("Location %q", rec.Header().Get("Location"))
	}
	checkJSON(t, serve(r, http.MethodPost, "/api/panics", nil), 500)
	checkJSON(t, serve(r, http.MethodGet, "/api/nothing", nil), 404)

	// Without any HTTP function, /api paths are still JSON 404s.
	empty := funchost.NewRouter(nil)
	checkJSON(t, serve(empty, http.MethodGet, "/api/events", nil), 404)
	checkJSON(t, serve(empty, http.MethodPost, "/Anything", strings.NewReader("{}")), 404)
}

func TestRouterRegisterPanics(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, *funchost.Invocation) (funchost.Result, error) { return funchost.Result{}, nil }
	h := http.NotFoundHandler()
	cases := map[string]func(r *funchost.Router){
		"empty name":          func(r *funchost.Router) { r.Register("", ok) },
		"name with slash":     func(r *funchost.Router) { r.Register("a/b", ok) },
		"name starting digit": func(r *funchost.Router) { r.Register("1Job", ok) },
		"reserved host":       func(r *funchost.Router) { r.Register("Host", ok) },
		"route prefix":        func(r *funchost.Router) { r.Register("api", ok) },
		"nil handler":         func(r *funchost.Router) { r.Register("Job", nil) },
		"duplicate":           func(r *funchost.Router) { r.Register("Job", ok); r.Register("JOB", ok) },
		"http outside prefix": func(r *funchost.Router) { r.RegisterHTTP("POST /events", h) },
		"http prefix lookalike": func(r *funchost.Router) {
			r.RegisterHTTP("GET /apix/events", h)
		},
		"http with host": func(r *funchost.Router) { r.RegisterHTTP("example.com/api/events", h) },
		"http nil":       func(r *funchost.Router) { r.RegisterHTTP("GET /api/x", nil) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f(funchost.NewRouter(nil))
		})
	}
}

func TestDecodeInvocationRequestDefaults(t *testing.T) {
	t.Parallel()
	req, err := funchost.DecodeInvocationRequest([]byte(` {"data":{"timer":{}}} `))
	if err != nil {
		t.Fatal(err)
	}
	if req.Metadata == nil || !bytes.Equal(req.Data["timer"], []byte("{}")) {
		t.Fatalf("%+v", req)
	}
}
