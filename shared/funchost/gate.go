package funchost

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultGateWait is how long an invocation that arrives before the handler is ready waits
// for it before answering a retryable failure. Well under the host's functionTimeout (10 min
// in host.json) and the Service Bus lock (5 min), so the message is abandoned, not lost.
const DefaultGateWait = 20 * time.Second

// Gate is the custom handler's http.Handler while the process starts: Serve can open the
// listener at once (the host gives a custom handler 30 s, HttpWorkerOptions.InitializationTimeout,
// to answer its first request on /) while the store is still being opened in the background.
//
// Until SetReady:
//   - GET / (the host's readiness probe) answers 503 {"status":"starting"|"unavailable",
//     "detail":…} at once. The host treats any HTTP answer as "the worker listens", so the
//     host starts; a person or a probe reading the status sees that the store is not usable.
//   - Every other request waits up to the gate's wait for SetReady, then is served by the
//     ready handler, or answers 503 with Retry-After: a function invocation (POST /{Name})
//     as {"error":…} in JSON (non-2xx fails the invocation: a timer run fails and the next
//     occurrence runs, a Service Bus message is abandoned and redelivered), a forwarded HTTP
//     request as RFC 9457 problem details.
//
// After SetReady every request goes to the ready handler unchanged. Safe for concurrent use.
type Gate struct {
	wait time.Duration

	mu     sync.Mutex
	ready  http.Handler
	status string // "starting" or "unavailable"
	detail string
	done   chan struct{} // closed by SetReady
}

// NewGate returns a gate in the "starting" state; wait <= 0 means DefaultGateWait.
func NewGate(wait time.Duration) *Gate {
	if wait <= 0 {
		wait = DefaultGateWait
	}
	return &Gate{wait: wait, status: "starting", detail: "opening the store", done: make(chan struct{})}
}

// SetReady hands every later request (and those waiting) to h. Later calls are ignored.
func (g *Gate) SetReady(h http.Handler) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ready != nil {
		return
	}
	g.ready = h
	close(g.done)
}

// SetUnavailable records why the handler is not ready (shown on / and in 503 answers); it
// never carries secrets: callers pass a short cause, not a connection string. Ignored once
// ready.
func (g *Gate) SetUnavailable(detail string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ready == nil {
		g.status, g.detail = "unavailable", detail
	}
}

// Ready reports whether SetReady was called.
func (g *Gate) Ready() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ready != nil
}

func (g *Gate) state() (http.Handler, string, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ready, g.status, g.detail
}

// ServeHTTP implements http.Handler (see Gate).
func (g *Gate) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if h, _, _ := g.state(); h != nil {
		h.ServeHTTP(w, req)
		return
	}
	if req.URL.Path == "/" {
		_, status, detail := g.state()
		body, _ := json.Marshal(map[string]string{"status": status, "detail": detail})
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case <-g.done:
		h, _, _ := g.state()
		h.ServeHTTP(w, req)
		return
	case <-t.C:
	case <-req.Context().Done():
	}
	_, status, detail := g.state()
	msg := "the handler is " + status + " (" + detail + "); retry later"
	w.Header().Set("Retry-After", strconv.Itoa(int(max(1, g.wait/time.Second))))
	if isForwardedPath(req.URL.Path) {
		writeProblem(w, http.StatusServiceUnavailable, msg)
		return
	}
	writeError(w, http.StatusServiceUnavailable, msg)
}

// isForwardedPath reports whether p is a forwarded HTTP function's path (the host keeps the
// route prefix, "api" in host.json) rather than an invocation POST /{FunctionName}.
func isForwardedPath(p string) bool {
	return len(p) >= 4 && p[:4] == "/api" && (len(p) == 4 || p[4] == '/')
}
