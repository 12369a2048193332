package simhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Listener is a simulator's HTTP server: Serve listens on addr ("127.0.0.1:0" for any free
// port) and serves h until Close. The zero value is ready; one Serve per Listener.
type Listener struct {
	srv *http.Server
	ln  net.Listener
}

// Serve listens on addr and serves h on a goroutine. Errors: the address cannot be listened on.
func (l *Listener) Serve(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	l.ln = ln
	l.srv = &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = l.srv.Serve(ln) }()
	return nil
}

// URL is the base URL of a serving listener ("http://127.0.0.1:port").
func (l *Listener) URL() string { return "http://" + l.ln.Addr().String() }

// Close stops a serving listener: a graceful shutdown of at most one second, then a hard
// close. A listener never served closes with nil.
func (l *Listener) Close() error {
	if l.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := l.srv.Shutdown(ctx); err != nil {
		return l.srv.Close()
	}
	return nil
}

// FaultsHandler is PUT /faults: the body, at most maxBytes of JSON with no unknown member,
// is decoded into an F and handed to set; 204 when set takes it, 400 with the error
// otherwise (nothing changed).
func FaultsHandler[F any](maxBytes int64, set func(F) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var f F
		dec := json.NewDecoder(io.LimitReader(r.Body, maxBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := set(f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// ControlRoutes registers a simulator's control routes on mux: PUT /faults (FaultsHandler
// with maxFaultBytes and setFaults), GET /messages and GET /stats (200 with what messages
// and stats return, as JSON).
func ControlRoutes[F, M, S any](mux *http.ServeMux, maxFaultBytes int64, setFaults func(F) error, messages func() M, stats func() S) {
	mux.HandleFunc("PUT /faults", FaultsHandler(maxFaultBytes, setFaults))
	mux.HandleFunc("GET /messages", func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, http.StatusOK, messages()) })
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, http.StatusOK, stats()) })
}

// WriteJSON answers status with v as JSON (UTF-8).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// HangUp closes the connection of w without an answer: what a caller sees as a lost answer
// or a timeout. Where the connection cannot be taken over (HTTP/2), it aborts the handler
// with http.ErrAbortHandler, which closes the stream unanswered as well.
func HangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// The answer-side fault modes the simulators share (each sim's Faults.Mode; the sims name
// them Mode… too): the request is taken (sent, accepted) and then answered late or not at
// all. Their values are the faults API's words.
const (
	ModeSlow       = "slow"        // answer after the delay
	ModeTimeout    = "timeout"     // answer after the delay (past the caller's timeout)
	ModeLoseAnswer = "lose-answer" // close the connection unanswered
)

// HoldAnswer applies an answer-side fault once a request is recorded: ModeSlow and
// ModeTimeout wait delay (a client that goes away first gets its connection dropped);
// ModeLoseAnswer drops the connection without an answer; any other mode returns at once.
func HoldAnswer(r *http.Request, mode string, delay time.Duration) {
	switch mode {
	case ModeSlow, ModeTimeout:
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			panic(http.ErrAbortHandler)
		}
	case ModeLoseAnswer:
		panic(http.ErrAbortHandler)
	}
}

// FaultDelay reads a Faults.Delay: "" is none, else a Go duration in 0..1m; the error names
// the simulator ("acssim: delay \"2m\": a duration in 0..1m").
func FaultDelay(sim, delay string) (time.Duration, error) {
	if delay == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(delay)
	if err != nil || d < 0 || d > time.Minute {
		return 0, fmt.Errorf("%s: delay %q: a duration in 0..1m", sim, delay)
	}
	return d, nil
}

// Copy returns a copy of *records read under mu: a simulator's getters hand out what it
// recorded this way, so a caller never shares the slice the server goes on appending to.
// Oldest first, as recorded; nil when nothing was.
func Copy[T any](mu *sync.Mutex, records *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *records...)
}

// Read returns *v read under mu (a simulator's counters).
func Read[T any](mu *sync.Mutex, v *T) T {
	mu.Lock()
	defer mu.Unlock()
	return *v
}
