package providersim

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/simhttp"
)

// Fault modes.
const (
	ModeNone              = ""
	ModeSlow              = "slow"                // answer after Delay (applied)
	ModeTimeoutAfterApply = "timeout-after-apply" // apply, then answer after Delay
	ModeFail              = "fail"                // 503, nothing applied
	ModeLoseAnswer        = "lose-answer"         // apply, then close the connection unanswered
	ModeFlaky             = "flaky"               // per call: FailPercent fail, LosePercent lose-answer
)

// Faults is what PUT /faults sets (JSON; Delay as a Go duration string).
//
// LookupFailPercent and LookupLosePercent apply to GET /actions/{key} in every mode: per
// lookup, a deterministic draw from the key and its lookup number answers 503 (a lookup
// that fails) or closes the connection unanswered (a lookup that times out). A lookup
// never changes what is applied, so neither fault applies or removes an effect; each is
// counted (Stats.LookupFailed, Stats.LookupLost). Both are 0..100 and their sum at most 100.
type Faults struct {
	Mode              string `json:"mode"`
	Delay             string `json:"delay,omitempty"`
	FailPercent       int    `json:"failPercent,omitempty"`
	LosePercent       int    `json:"losePercent,omitempty"`
	LookupFailPercent int    `json:"lookupFailPercent,omitempty"`
	LookupLosePercent int    `json:"lookupLosePercent,omitempty"`
}

// Config fixes what the provider declares.
type Config struct {
	Dedupe bool // deduplicate by Idempotency-Key
	Lookup bool // answer GET /actions/{key}
	// Token, when set, is the bearer token POST /actions and GET /actions/{key} require
	// (401 without it, nothing applied; counted in Stats.Unauthorized).
	Token string
}

// Stats is GET /stats.
type Stats struct {
	Calls   int `json:"calls"`
	Applied int `json:"applied"` // effects applied (with Dedupe: distinct keys)
	Failed  int `json:"failed"`
	Lost    int `json:"lost"`
	// Unauthorized counts calls refused for a missing or wrong bearer token.
	Unauthorized int `json:"unauthorized"`
	// Lookups counts GET /actions/{key}; LookupFailed the lookups answered 503 by the
	// lookup fault, LookupLost those closed unanswered.
	Lookups      int `json:"lookups"`
	LookupFailed int `json:"lookupFailed"`
	LookupLost   int `json:"lookupLost"`
}

// Server is the simulated provider. Safe for concurrent use.
type Server struct {
	cfg Config

	mu       sync.Mutex
	faults   Faults
	delay    time.Duration
	applied  map[string]int    // effects per key
	refs     map[string]string // reference per key
	attempts map[string]int    // calls per key
	lookups  map[string]int    // lookups per key
	stats    Stats

	simhttp.Listener
}

// New returns a server (not listening; see Start, or use Handler).
func New(cfg Config) *Server {
	return &Server{cfg: cfg, applied: map[string]int{}, refs: map[string]string{}, attempts: map[string]int{}, lookups: map[string]int{}}
}

// Start listens on addr ("127.0.0.1:0" for any free port) and serves until Close (URL and
// Close come from the embedded simhttp.Listener).
func (s *Server) Start(addr string) error { return s.Serve(addr, s.Handler()) }

// SetFaults switches the fault mode; errors on an unknown mode or a bad delay.
func (s *Server) SetFaults(f Faults) error {
	var d time.Duration
	if f.Delay != "" {
		var err error
		if d, err = time.ParseDuration(f.Delay); err != nil || d < 0 {
			return fmt.Errorf("delay %q: not a duration", f.Delay)
		}
	}
	switch f.Mode {
	case ModeNone, ModeSlow, ModeTimeoutAfterApply, ModeFail, ModeLoseAnswer:
	case ModeFlaky:
		if f.FailPercent < 0 || f.LosePercent < 0 || f.FailPercent+f.LosePercent > 100 {
			return errors.New("failPercent + losePercent must be within 0..100")
		}
	default:
		return fmt.Errorf("unknown mode %q", f.Mode)
	}
	if f.LookupFailPercent < 0 || f.LookupLosePercent < 0 || f.LookupFailPercent+f.LookupLosePercent > 100 {
		return errors.New("lookupFailPercent + lookupLosePercent must be within 0..100")
	}
	s.mu.Lock()
	s.faults, s.delay = f, d
	s.mu.Unlock()
	return nil
}

// Applied returns how many times the effect of key was applied.
func (s *Server) Applied(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied[key]
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Handler serves the protocol.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /actions", s.authorized(s.action))
	mux.HandleFunc("GET /actions/{key}", s.authorized(s.lookup))
	mux.HandleFunc("PUT /faults", simhttp.FaultsHandler(4<<10, s.SetFaults))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { simhttp.WriteJSON(w, http.StatusOK, s.Stats()) })
	return mux
}

// authorized refuses a request without the configured bearer token (401).
func (s *Server) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
			s.count(&s.stats.Unauthorized)
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next(w, r)
	}
}

// decide picks this call's fault: the mode, or for flaky a deterministic draw from the key
// and its attempt number (the same run gives the same faults).
func (s *Server) decide(key string) (string, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts[key]++
	s.stats.Calls++
	f := s.faults
	if f.Mode != ModeFlaky {
		return f.Mode, s.delay
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s#%d", key, s.attempts[key])
	switch n := int(h.Sum32() % 100); {
	case n < f.FailPercent:
		return ModeFail, 0
	case n < f.FailPercent+f.LosePercent:
		return ModeLoseAnswer, 0
	}
	return ModeNone, 0
}

// decideLookup picks this lookup's fault: a deterministic draw from the key and its lookup
// number ("" none, ModeFail, ModeLoseAnswer).
func (s *Server) decideLookup(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups[key]++
	s.stats.Lookups++
	f := s.faults
	if f.LookupFailPercent+f.LookupLosePercent == 0 {
		return ModeNone
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "lookup:%s#%d", key, s.lookups[key])
	switch n := int(h.Sum32() % 100); {
	case n < f.LookupFailPercent:
		s.stats.LookupFailed++
		return ModeFail
	case n < f.LookupFailPercent+f.LookupLosePercent:
		s.stats.LookupLost++
		return ModeLoseAnswer
	}
	return ModeNone
}

func (s *Server) apply(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ref, ok := s.refs[key]; ok && s.cfg.Dedupe {
		return ref
	}
	s.applied[key]++
	s.stats.Applied++
	ref := fmt.Sprintf("sim-%d", s.stats.Applied)
	s.refs[key] = ref
	return ref
}

func (s *Server) action(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if key == "" || len(key) > 200 {
		http.Error(w, "Idempotency-Key header (1..200 characters) is required", http.StatusBadRequest)
		return
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10)); err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	mode, delay := s.decide(key)
	wait := func() bool {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	switch mode {
	case ModeFail:
		s.count(&s.stats.Failed)
		w.Header().Set("Retry-After", "0")
		http.Error(w, "simulated failure", http.StatusServiceUnavailable)
		return
	case ModeSlow:
		if !wait() {
			return
		}
	}
	ref := s.apply(key)
	switch mode {
	case ModeTimeoutAfterApply:
		if !wait() {
			return
		}
	case ModeLoseAnswer:
		s.count(&s.stats.Lost)
		simhttp.HangUp(w)
		return
	}
	simhttp.WriteJSON(w, http.StatusOK, map[string]string{"reference": ref})
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Lookup {
		http.Error(w, "lookup not offered", http.StatusNotImplemented)
		return
	}
	key := r.PathValue("key")
	switch s.decideLookup(key) {
	case ModeFail:
		w.Header().Set("Retry-After", "0")
		http.Error(w, "simulated lookup failure", http.StatusServiceUnavailable)
		return
	case ModeLoseAnswer:
		simhttp.HangUp(w)
		return
	}
	s.mu.Lock()
	ref, ok := s.refs[key]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "not applied", http.StatusNotFound)
		return
	}
	simhttp.WriteJSON(w, http.StatusOK, map[string]string{"reference": ref})
}

// count adds one to the counter c of s.stats, under s.mu.
func (s *Server) count(c *int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*c++
}
