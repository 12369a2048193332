package funchost_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
)

// ForwardedOnly is what a listener others can reach serves: the readiness probe and the
// forwarded /api routes, never an invocation path (it carries no token or scope). The
// invocation reaches no handler, whatever the name's case or method.
func TestForwardedOnlyRefusesInvocations(t *testing.T) {
	t.Parallel()
	called := 0
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
	r.Register("DomainEventHandler", func(context.Context, *funchost.Invocation) (funchost.Result, error) {
		called++
		return funchost.Result{}, nil
	})
	r.RegisterHTTP("GET /api/ping", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"pong":true}`)) }))
	h := r.ForwardedOnly()
	for _, target := range []string{"/DomainEventHandler", "/domaineventhandler", "/DomainEventHandler/", "/NoSuch", "//DomainEventHandler"} {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			rec := serve(h, method, target, strings.NewReader(timerInvocation))
			if body := checkJSON(t, rec, http.StatusNotFound); !strings.Contains(body, "not served on this listener") {
				t.Errorf("%s %s: %s", method, target, body)
			}
		}
	}
	if called != 0 {
		t.Fatalf("an invocation reached its handler %d times", called)
	}
	checkJSON(t, serve(h, http.MethodGet, "/", nil), http.StatusOK)
	if body := checkJSON(t, serve(h, http.MethodGet, "/api/ping", nil), http.StatusOK); body != `{"pong":true}` {
		t.Fatalf("forwarded route: %s", body)
	}
	checkJSON(t, serve(h, http.MethodGet, "/api/nothing", nil), http.StatusNotFound)
	// The full router still serves the invocation (the custom handler on 127.0.0.1).
	checkJSON(t, serve(r, http.MethodPost, "/DomainEventHandler", strings.NewReader(timerInvocation)), http.StatusOK)
	if called != 1 {
		t.Fatalf("the router itself must still invoke: %d", called)
	}
}

// The custom handler binds the IPv4 loopback only, whatever port it is given: the Functions
// host on the instance is the only caller of the invocation paths.
func TestAddrIsLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"1", "7071", "65535", "07071"} {
		addr, err := funchost.Addr(p)
		if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("Addr(%q) = %q, %v", p, addr, err)
		}
	}
	for _, p := range []string{"0.0.0.0:7071", ":7071", "7071 ", "[::]:80", "99999"} {
		if addr, err := funchost.Addr(p); err == nil {
			t.Errorf("Addr(%q) = %q, want an error", p, addr)
		}
	}
}

// "Another sender holds the send claim" is expected when two senders meet (two serve
// processes on one SQLite file): automation.RetryAfter keeps the 500 (the host redelivers) but logs at
// INFO; any other error is still an ERROR.
func TestRetryAfterLogsAtInfo(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	busy := errors.New("delivery: another sender holds the send claim")
	r.Register("NotificationDispatch", func(context.Context, *funchost.Invocation) (funchost.Result, error) {
		return funchost.Result{}, automation.RetryAfter(time.Minute, busy)
	})
	r.Register("Broken", func(context.Context, *funchost.Invocation) (funchost.Result, error) {
		return funchost.Result{}, errors.New("disk full")
	})
	checkJSON(t, serve(r, http.MethodPost, "/NotificationDispatch", strings.NewReader(timerInvocation)), http.StatusInternalServerError)
	if got := logs.String(); !strings.Contains(got, `"level":"INFO"`) || strings.Contains(got, `"level":"ERROR"`) || !strings.Contains(got, "another sender") {
		t.Fatalf("RetryAfter logs: %s", got)
	}
	logs.Reset()
	checkJSON(t, serve(r, http.MethodPost, "/Broken", strings.NewReader(timerInvocation)), http.StatusInternalServerError)
	if !strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Fatalf("a failure must stay an ERROR: %s", logs.String())
	}
}
