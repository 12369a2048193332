package acssim

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// Fault modes.
const (
	ModeNone       = ""
	ModeSlow       = "slow"        // send, then answer after Delay
	ModeTimeout    = "timeout"     // send, then answer after Delay (past the caller's timeout)
	ModeRateLimit  = "rate-limit"  // 429 with Retry-After, nothing sent
	ModeInternal   = "internal"    // 500, nothing sent
	ModeLoseAnswer = "lose-answer" // send, then close the connection unanswered
)

var modes = map[string]bool{ModeNone: true, ModeSlow: true, ModeTimeout: true, ModeRateLimit: true, ModeInternal: true, ModeLoseAnswer: true}

// Faults is what PUT /faults sets. Delay is a Go duration; RetryAfter seconds (default 1).
type Faults struct {
	Mode       string `json:"mode"`
	Delay      string `json:"delay,omitempty"`
	RetryAfter int    `json:"retryAfter,omitempty"`
}

// Config fixes the simulated resource.
type Config struct {
	// Refused numbers answer 400 for their recipient (a blocked or unreachable number).
	Refused []string
	// Window is how long a repeatabilityRequestId is remembered (default 24 h).
	Window time.Duration
	Clock  automation.Clock // default the system clock
}

// Request is one request as it came (repeats included).
type Request struct {
	To              string `json:"to"`
	Message         string `json:"message"`
	Tag             string `json:"tag"`
	RequestID       string `json:"repeatabilityRequestId"`
	FirstSent       string `json:"repeatabilityFirstSent"`
	Repeatability   string `json:"repeatabilityResult"`
	MessageID       string `json:"messageId"`
	SentThisRequest bool   `json:"sent"`
}

// Stats is GET /stats.
type Stats struct {
	Requests     int `json:"requests"`
	Sent         int `json:"sent"`
	Deduplicated int `json:"deduplicated"`
	Rejected     int `json:"rejected"`
	Unauthorized int `json:"unauthorized"`
	Faulted      int `json:"faulted"`
}

type remembered struct {
	to, message, messageID string
	on                     time.Time
}

// Server is the simulated ACS. Safe for concurrent use.
type Server struct {
	cfg     Config
	key     []byte
	refused map[string]bool

	mu       sync.Mutex
	faults   Faults
	delay    time.Duration
	byID     map[string]remembered
	requests []Request
	sent     []Request
	stats    Stats
	seq      int

	srv *http.Server
	ln  net.Listener
}

// New returns a server with a fresh access key (not listening; see Start).
func New(cfg Config) (*Server, error) {
	if cfg.Window <= 0 {
		cfg.Window = 24 * time.Hour
	}
	if cfg.Clock == nil {
		cfg.Clock = automation.SystemClock{}
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, key: key, refused: map[string]bool{}, byID: map[string]remembered{}}
	for _, n := range cfg.Refused {
		s.refused[n] = true
	}
	return s, nil
}

// Start listens on addr and serves until Close.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

// URL is the base URL of a started server.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops a started server.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

// ConnectionString is the resource's connection string for a sender reaching it at baseURL.
func (s *Server) ConnectionString(baseURL string) string {
	return "endpoint=" + baseURL + "/;accesskey=" + base64.StdEncoding.EncodeToString(s.key)
}

// SetFaults replaces the fault switches.
func (s *Server) SetFaults(f Faults) error {
	var d time.Duration
	if f.Delay != "" {
		var err error
		if d, err = time.ParseDuration(f.Delay); err != nil || d < 0 || d > time.Minute {
			return fmt.Errorf("acssim: delay %q: a duration in 0..1m", f.Delay)
		}
	}
	if !modes[f.Mode] {
		return fmt.Errorf("acssim: unknown mode %q", f.Mode)
	}
	if f.RetryAfter < 0 || f.RetryAfter > 3600 {
		return fmt.Errorf("acssim: retryAfter %d outside 0..3600", f.RetryAfter)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults, s.delay = f, d
	return nil
}

// Sent returns the messages sent (once per repeatability id), oldest first.
func (s *Server) Sent() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.sent...)
}

// Requests returns every authorised request's recipient, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Handler serves POST /sms, PUT /faults, GET /messages and GET /stats.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sms", s.send)
	mux.HandleFunc("PUT /faults", func(w http.ResponseWriter, r *http.Request) {
		var f Faults
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.SetFaults(f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /messages", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Sent()) })
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Stats()) })
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func acsError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

const authPrefix = "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature="

// verify checks the access-key signature of r over body.
func (s *Server) verify(r *http.Request, body []byte) error {
	date := r.Header.Get("x-ms-date")
	t, err := http.ParseTime(date)
	if err != nil {
		return fmt.Errorf("x-ms-date %q is not an RFC 1123 date", date)
	}
	if d := s.cfg.Clock.Now().Sub(t); d > 15*time.Minute || d < -15*time.Minute {
		return fmt.Errorf("x-ms-date %q is more than 15 minutes from the server's clock", date)
	}
	sum := sha256.Sum256(body)
	hash := base64.StdEncoding.EncodeToString(sum[:])
	if r.Header.Get("x-ms-content-sha256") != hash {
		return fmt.Errorf("x-ms-content-sha256 does not match the body")
	}
	sig, ok := strings.CutPrefix(r.Header.Get("Authorization"), authPrefix)
	if !ok {
		return fmt.Errorf("Authorization is not %q…", authPrefix)
	}
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "%s\n%s\n%s;%s;%s", r.Method, r.URL.RequestURI(), date, r.Host, hash)
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return fmt.Errorf("the signature does not match")
	}
	return nil
}

// maxRemembered bounds the repeatability record; past it, ids older than the window go.
const maxRemembered = 100_000

// forget drops ids past the window once the record is at its bound (s.mu held).
func (s *Server) forget(now time.Time) {
	if len(s.byID) < maxRemembered {
		return
	}
	for id, r := range s.byID {
		if now.Sub(r.on) > s.cfg.Window {
			delete(s.byID, id)
		}
	}
}

var guid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

type sendBody struct {
	From          string `json:"from"`
	SMSRecipients []struct {
		To                     string `json:"to"`
		RepeatabilityRequestID string `json:"repeatabilityRequestId"`
		RepeatabilityFirstSent string `json:"repeatabilityFirstSent"`
	} `json:"smsRecipients"`
	Message        string `json:"message"`
	SMSSendOptions struct {
		Tag string `json:"tag"`
	} `json:"smsSendOptions"`
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		acsError(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	if err := s.verify(r, body); err != nil {
		s.mu.Lock()
		s.stats.Unauthorized++
		s.mu.Unlock()
		acsError(w, http.StatusUnauthorized, "Unauthorized", err.Error())
		return
	}
	if v := r.URL.Query().Get("api-version"); v != "2021-03-07" {
		acsError(w, http.StatusBadRequest, "UnsupportedApiVersion", fmt.Sprintf("api-version %q", v))
		return
	}
	var b sendBody
	if err := json.Unmarshal(body, &b); err != nil || b.From == "" || b.Message == "" || len(b.SMSRecipients) == 0 {
		acsError(w, http.StatusBadRequest, "BadRequest", "from, message and smsRecipients are required")
		return
	}
	for _, rc := range b.SMSRecipients {
		if rc.RepeatabilityRequestID != "" && !guid.MatchString(rc.RepeatabilityRequestID) {
			acsError(w, http.StatusBadRequest, "BadRequest", "repeatabilityRequestId must be a GUID")
			return
		}
		if rc.RepeatabilityRequestID != "" {
			if _, err := http.ParseTime(rc.RepeatabilityFirstSent); err != nil {
				acsError(w, http.StatusBadRequest, "BadRequest", "repeatabilityFirstSent must be an RFC 1123 date")
				return
			}
		}
	}
	s.mu.Lock()
	mode, delay, retryAfter := s.faults.Mode, s.delay, s.faults.RetryAfter
	if retryAfter == 0 {
		retryAfter = 1
	}
	switch mode {
	case ModeRateLimit, ModeInternal:
		s.stats.Faulted++
		s.mu.Unlock()
		if mode == ModeRateLimit {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			acsError(w, http.StatusTooManyRequests, "TooManyRequests", "rate limit exceeded")
		} else {
			acsError(w, http.StatusInternalServerError, "InternalServerError", "internal error")
		}
		return
	}
	now := s.cfg.Clock.Now().UTC()
	var out []map[string]any
	for _, rc := range b.SMSRecipients {
		s.stats.Requests++
		req := Request{To: rc.To, Message: b.Message, Tag: b.SMSSendOptions.Tag, RequestID: rc.RepeatabilityRequestID, FirstSent: rc.RepeatabilityFirstSent}
		res := map[string]any{"to": rc.To}
		first, _ := http.ParseTime(rc.RepeatabilityFirstSent)
		prev, known := s.byID[rc.RepeatabilityRequestID]
		switch {
		case rc.RepeatabilityRequestID != "" && known && (prev.to != rc.To || prev.message != b.Message):
			s.stats.Rejected++
			req.Repeatability = "rejected"
			res["httpStatusCode"], res["repeatabilityResult"], res["successful"] = 400, "rejected", false
		case rc.RepeatabilityRequestID != "" && now.Sub(first) > s.cfg.Window:
			s.stats.Rejected++
			req.Repeatability = "rejected"
			res["httpStatusCode"], res["repeatabilityResult"], res["successful"] = 400, "rejected", false
		case known:
			s.stats.Deduplicated++
			req.Repeatability, req.MessageID = "accepted", prev.messageID
			res["httpStatusCode"], res["repeatabilityResult"], res["successful"], res["messageId"] = 202, "accepted", true, prev.messageID
		case s.refused[rc.To]:
			res["httpStatusCode"], res["successful"], res["errorMessage"] = 400, false, "Invalid To phone number format."
		default:
			s.seq++
			id := fmt.Sprintf("Outgoing_%s_noam", fmt.Sprintf("%020d", s.seq))
			if rc.RepeatabilityRequestID != "" {
				s.forget(now)
				s.byID[rc.RepeatabilityRequestID] = remembered{to: rc.To, message: b.Message, messageID: id, on: now}
				req.Repeatability = "accepted"
				res["repeatabilityResult"] = "accepted"
			}
			req.MessageID, req.SentThisRequest = id, true
			s.stats.Sent++
			s.sent = append(s.sent, req)
			res["httpStatusCode"], res["successful"], res["messageId"] = 202, true, id
		}
		s.requests = append(s.requests, req)
		out = append(out, res)
	}
	s.mu.Unlock()
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
	writeJSON(w, http.StatusAccepted, map[string]any{"value": out})
}
