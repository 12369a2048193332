package acssim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/simhttp"
)

// Fault modes.
const (
	ModeNone       = ""
	ModeSlow       = simhttp.ModeSlow       // send, then answer after Delay
	ModeTimeout    = simhttp.ModeTimeout    // send, then answer after Delay (past the caller's timeout)
	ModeRateLimit  = "rate-limit"           // 429 with Retry-After, nothing sent
	ModeInternal   = "internal"             // 500, nothing sent
	ModeLoseAnswer = simhttp.ModeLoseAnswer // send, then close the connection unanswered
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
	// Window is how long a repeatability id is remembered (default 24 h).
	Window time.Duration
	// ChannelRegistrationID is the WhatsApp channel connected to the resource (a GUID;
	// default 00000000-0000-4000-8000-000000000001).
	ChannelRegistrationID string
	// WhatsAppTemplates are the approved templates: name → number of body values.
	WhatsAppTemplates map[string]int
	Clock             automation.Clock // default the system clock
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
	waByID   map[string]waRemembered
	waReqs   []WhatsAppRequest
	waSent   []WhatsAppRequest
	stats    Stats
	seq      int

	simhttp.Listener
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
	if cfg.ChannelRegistrationID == "" {
		cfg.ChannelRegistrationID = "00000000-0000-4000-8000-000000000001"
	}
	s := &Server{cfg: cfg, key: key, refused: map[string]bool{}, byID: map[string]remembered{}, waByID: map[string]waRemembered{}}
	for _, n := range cfg.Refused {
		s.refused[n] = true
	}
	return s, nil
}

// Start listens on addr and serves until Close.
func (s *Server) Start(addr string) error { return s.Serve(addr, s.Handler()) }

// ConnectionString is the resource's connection string for a sender reaching it at baseURL.
func (s *Server) ConnectionString(baseURL string) string {
	return "endpoint=" + baseURL + "/;accesskey=" + base64.StdEncoding.EncodeToString(s.key)
}

// SetFaults replaces the fault switches.
func (s *Server) SetFaults(f Faults) error {
	d, err := simhttp.FaultDelay("acssim", f.Delay)
	if err != nil {
		return err
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
func (s *Server) Sent() []Request { return simhttp.Copy(&s.mu, &s.sent) }

// Requests returns every authorised request's recipient, oldest first.
func (s *Server) Requests() []Request { return simhttp.Copy(&s.mu, &s.requests) }

// Stats returns the counters.
func (s *Server) Stats() Stats { return simhttp.Read(&s.mu, &s.stats) }

// Handler serves POST /sms, PUT /faults, GET /messages and GET /stats.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sms", s.send)
	mux.HandleFunc("POST /messages/{op}", s.whatsapp)
	simhttp.ControlRoutes(mux, 1<<16, s.SetFaults, s.Sent, s.Stats)
	return mux
}

func acsError(w http.ResponseWriter, status int, code, msg string) {
	simhttp.WriteJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
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

// readSigned reads a request's body (at most 1 MiB) and checks its access-key signature.
// On failure it has answered (400, or 401 counted as Unauthorized) and returns false.
func (s *Server) readSigned(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		acsError(w, http.StatusBadRequest, "BadRequest", err.Error())
		return nil, false
	}
	if err := s.verify(r, body); err != nil {
		s.mu.Lock()
		s.stats.Unauthorized++
		s.mu.Unlock()
		acsError(w, http.StatusUnauthorized, "Unauthorized", err.Error())
		return nil, false
	}
	return body, true
}

// lockUnlessFaulted takes s.mu and returns the fault mode and delay in force. Under a
// rate-limit fault (429 with Retry-After, default 1 s) or an internal-error fault (500) it
// answers the request itself, counts it as Faulted, releases s.mu and returns false;
// otherwise the caller holds s.mu.
func (s *Server) lockUnlessFaulted(w http.ResponseWriter) (mode string, delay time.Duration, ok bool) {
	s.mu.Lock()
	mode, delay, retryAfter := s.faults.Mode, s.delay, s.faults.RetryAfter
	if retryAfter == 0 {
		retryAfter = 1
	}
	switch mode {
	case ModeRateLimit:
		s.stats.Faulted++
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		acsError(w, http.StatusTooManyRequests, "TooManyRequests", "rate limit exceeded")
		return mode, delay, false
	case ModeInternal:
		s.stats.Faulted++
		s.mu.Unlock()
		acsError(w, http.StatusInternalServerError, "InternalServerError", "internal error")
		return mode, delay, false
	}
	return mode, delay, true
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
	body, ok := s.readSigned(w, r)
	if !ok {
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
	mode, delay, ok := s.lockUnlessFaulted(w)
	if !ok {
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
	simhttp.HoldAnswer(r, mode, delay)
	simhttp.WriteJSON(w, http.StatusAccepted, map[string]any{"value": out})
}

// WhatsAppRequest is one template notification as it came (repeats included).
type WhatsAppRequest struct {
	To        string   `json:"to"`
	Template  string   `json:"template"`
	Language  string   `json:"language"`
	Values    []string `json:"values"`
	RequestID string   `json:"repeatabilityRequestId"`
	MessageID string   `json:"messageId"`
	Status    int      `json:"status"`
	Sent      bool     `json:"sent"` // this request sent the message (not a repeat)
}

type waRemembered struct {
	bodyHash string
	status   int
	answer   []byte
	on       time.Time
}

// WhatsAppRequests returns every authorised template notification request, oldest first.
func (s *Server) WhatsAppRequests() []WhatsAppRequest { return simhttp.Copy(&s.mu, &s.waReqs) }

// WhatsAppSent returns the template notifications sent, once per repeatability id.
func (s *Server) WhatsAppSent() []WhatsAppRequest { return simhttp.Copy(&s.mu, &s.waSent) }

type waBody struct {
	ChannelRegistrationID string   `json:"channelRegistrationId"`
	To                    []string `json:"to"`
	Kind                  string   `json:"kind"`
	Template              struct {
		Name     string `json:"name"`
		Language string `json:"language"`
		Values   []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"values"`
		Bindings *struct {
			Kind     string `json:"kind"`
			WhatsApp struct {
				Body []struct {
					RefValue string `json:"refValue"`
				} `json:"body"`
			} `json:"whatsApp"`
		} `json:"bindings"`
	} `json:"template"`
}

// whatsapp serves POST /messages/notifications:send: the access-key signature, then the
// repeatable-request headers as ACS documents them (a new id runs; the same id with the
// same body answers the first answer again; with another body 400; a first-sent outside
// the window 412), then the template: the registered channel, one recipient, an approved
// template whose body values are all bound, in number.
func (s *Server) whatsapp(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("op") != "notifications:send" {
		http.NotFound(w, r)
		return
	}
	body, ok := s.readSigned(w, r)
	if !ok {
		return
	}
	id, firstRaw := r.Header.Get("Repeatability-Request-ID"), r.Header.Get("Repeatability-First-Sent")
	first, ferr := http.ParseTime(firstRaw)
	if !guid.MatchString(id) || ferr != nil {
		acsError(w, http.StatusBadRequest, "BadRequest", "Repeatability-Request-ID must be a GUID and Repeatability-First-Sent an IMF-fixdate")
		return
	}
	var b waBody
	if err := json.Unmarshal(body, &b); err != nil {
		acsError(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	sum := sha256.Sum256(body)
	hash := base64.StdEncoding.EncodeToString(sum[:])
	rec := WhatsAppRequest{Template: b.Template.Name, Language: b.Template.Language, RequestID: id}
	if len(b.To) == 1 {
		rec.To = b.To[0]
	}
	for _, v := range b.Template.Values {
		rec.Values = append(rec.Values, v.Text.Text)
	}
	mode, delay, ok := s.lockUnlessFaulted(w)
	if !ok {
		return
	}
	now := s.cfg.Clock.Now().UTC()
	status, answer := s.waDecide(b, rec, id, hash, first, now)
	rec.Status = status
	if status == http.StatusAccepted {
		var a struct {
			Receipts []struct {
				MessageID string `json:"messageId"`
			} `json:"receipts"`
		}
		_ = json.Unmarshal(answer, &a)
		if len(a.Receipts) == 1 {
			rec.MessageID = a.Receipts[0].MessageID
		}
	}
	s.stats.Requests++
	rec.Sent = status == http.StatusAccepted && !s.seenWA(id)
	if rec.Sent {
		s.stats.Sent++
		s.waSent = append(s.waSent, rec)
	}
	s.waReqs = append(s.waReqs, rec)
	s.mu.Unlock()
	simhttp.HoldAnswer(r, mode, delay)
	w.Header().Set("Repeatability-Result", "accepted")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

// seenWA reports whether a message with repeatability id was sent before (s.mu held).
func (s *Server) seenWA(id string) bool {
	for _, r := range s.waSent {
		if r.RequestID == id {
			return true
		}
	}
	return false
}

// waDecide applies the repeatability table and the template checks (s.mu held) and returns
// the answer; a new accepted request is remembered with its answer.
func (s *Server) waDecide(b waBody, rec WhatsAppRequest, id, hash string, first, now time.Time) (int, []byte) {
	problem := func(status int, code, msg string) (int, []byte) {
		out, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
		return status, out
	}
	if now.Sub(first) > s.cfg.Window {
		s.stats.Rejected++
		return problem(http.StatusPreconditionFailed, "PreconditionFailed", "Repeatability-First-Sent is outside the tracked window")
	}
	if prev, ok := s.waByID[id]; ok {
		if prev.bodyHash != hash {
			s.stats.Rejected++
			return problem(http.StatusBadRequest, "BadRequest", "Repeatability-Request-ID was used with another request")
		}
		s.stats.Deduplicated++
		return prev.status, prev.answer
	}
	status, answer := func() (int, []byte) {
		switch {
		case b.ChannelRegistrationID != s.cfg.ChannelRegistrationID:
			return problem(http.StatusBadRequest, "BadRequest", "unknown channelRegistrationId")
		case b.Kind != "template" || len(b.To) != 1:
			return problem(http.StatusBadRequest, "BadRequest", "kind must be template, with one recipient")
		case s.refused[rec.To]:
			return problem(http.StatusBadRequest, "BadRequest", "the recipient cannot receive WhatsApp messages")
		}
		n, ok := s.cfg.WhatsAppTemplates[b.Template.Name]
		if !ok {
			return problem(http.StatusBadRequest, "BadRequest", fmt.Sprintf("template %q is not approved for this channel", b.Template.Name))
		}
		if len(rec.Values) != n {
			return problem(http.StatusBadRequest, "BadRequest", fmt.Sprintf("template %q takes %d values, got %d", b.Template.Name, n, len(rec.Values)))
		}
		if n > 0 && (b.Template.Bindings == nil || b.Template.Bindings.Kind != "whatsApp" || len(b.Template.Bindings.WhatsApp.Body) != n) {
			return problem(http.StatusBadRequest, "BadRequest", "every value must be bound to the body")
		}
		s.seq++
		out, _ := json.Marshal(map[string]any{"receipts": []map[string]string{{"messageId": fmt.Sprintf("wa-%08d", s.seq), "to": rec.To}}})
		return http.StatusAccepted, out
	}()
	if len(s.waByID) >= maxRemembered {
		for k, r := range s.waByID {
			if now.Sub(r.on) > s.cfg.Window {
				delete(s.waByID, k)
			}
		}
	}
	s.waByID[id] = waRemembered{bodyHash: hash, status: status, answer: answer, on: now}
	return status, answer
}
