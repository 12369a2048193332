package fcmsim

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
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

// Scope is the OAuth scope an access token must have been granted for to send (Google's
// firebase.messaging scope; cloud-platform also grants it).
const Scope = "https://www.googleapis.com/auth/firebase.messaging"

const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// jwtBearer is the grant type of the service-account flow (RFC 7523 section 2.1).
const jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// MaxMessageBytes bounds the message's notification and data payload (FCM: 4096 bytes).
const MaxMessageBytes = 4096

// Fault modes, per server (Faults.Mode) or per device token (Faults.Tokens).
const (
	ModeNone         = ""
	ModeSlow         = simhttp.ModeSlow       // accept, then answer after Delay
	ModeTimeout      = simhttp.ModeTimeout    // accept, then answer only after Delay (past the caller's timeout)
	ModeRateLimit    = "rate-limit"           // 429 QUOTA_EXCEEDED with Retry-After, nothing accepted
	ModeUnavailable  = "unavailable"          // 503 UNAVAILABLE with Retry-After, nothing accepted
	ModeInternal     = "internal"             // 500 INTERNAL, nothing accepted (the caller cannot know that)
	ModeUnregistered = "unregistered"         // 404 UNREGISTERED: the token is no longer valid
	ModeInvalidToken = "invalid-token"        // 400 INVALID_ARGUMENT naming message.token
	ModeLoseAnswer   = simhttp.ModeLoseAnswer // accept, then close the connection unanswered
)

var modes = map[string]bool{ModeNone: true, ModeSlow: true, ModeTimeout: true, ModeRateLimit: true, ModeUnavailable: true,
	ModeInternal: true, ModeUnregistered: true, ModeInvalidToken: true, ModeLoseAnswer: true}

// Faults is what PUT /faults sets (JSON). Mode applies to every send; Tokens sets a mode
// for one device token and wins over Mode. Delay is a Go duration ("2s"); RetryAfter is the
// Retry-After answer header of rate-limit and unavailable, in seconds (default 1).
type Faults struct {
	Mode       string            `json:"mode"`
	Delay      string            `json:"delay,omitempty"`
	RetryAfter int               `json:"retryAfter,omitempty"`
	Tokens     map[string]string `json:"tokens,omitempty"`
}

// Config fixes the simulated project.
type Config struct {
	ProjectID string // default "sim-project"
	// Clock checks the assertion's iat/exp and access-token expiry (default the system
	// clock: the oauth2 library signs assertions with the wall clock).
	Clock automation.Clock
}

// Message is one accepted message, as the sender's JSON carried it.
type Message struct {
	Name         string            `json:"name"` // projects/{p}/messages/{n}
	Token        string            `json:"token"`
	Title        string            `json:"title,omitempty"`
	Body         string            `json:"body,omitempty"`
	Data         map[string]string `json:"data,omitempty"`
	CollapseKey  string            `json:"collapseKey,omitempty"`  // android.collapse_key
	APNSCollapse string            `json:"apnsCollapse,omitempty"` // apns.headers["apns-collapse-id"]
}

// Stats is GET /stats.
type Stats struct {
	Tokens       int `json:"tokens"`       // access tokens issued
	Refused      int `json:"refused"`      // token requests refused (bad grant or assertion)
	Unauthorized int `json:"unauthorized"` // sends without a valid access token
	Sends        int `json:"sends"`        // authorised send requests
	Accepted     int `json:"accepted"`     // messages accepted (also those whose answer was lost or late)
	Faulted      int `json:"faulted"`      // sends answered by a fault without accepting
}

// Server is the simulated FCM. Safe for concurrent use.
type Server struct {
	cfg   Config
	key   *rsa.PrivateKey
	keyID string
	email string

	mu       sync.Mutex
	faults   Faults
	delay    time.Duration
	tokens   map[string]time.Time // access token → expiry (UTC)
	accepted []Message
	stats    Stats
	seq      int

	simhttp.Listener
}

// New returns a server with a fresh service-account key (not listening; see Start).
func New(cfg Config) (*Server, error) {
	if cfg.ProjectID == "" {
		cfg.ProjectID = "sim-project"
	}
	if cfg.Clock == nil {
		cfg.Clock = automation.SystemClock{}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 20)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, key: key, keyID: hex.EncodeToString(id), email: "push-sender@" + cfg.ProjectID + ".iam.gserviceaccount.com",
		tokens: map[string]time.Time{}}, nil
}

// Start listens on addr ("127.0.0.1:0" for any free port) and serves until Close.
func (s *Server) Start(addr string) error { return s.Serve(addr, s.Handler()) }

// ProjectID is the simulated project.
func (s *Server) ProjectID() string { return s.cfg.ProjectID }

// ServiceAccountJSON returns a service-account key file, in Google's format, whose
// token_uri is baseURL + "/token" (baseURL: the URL the sender reaches this server at).
func (s *Server) ServiceAccountJSON(baseURL string) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		panic(err) // an RSA key always marshals
	}
	b, _ := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": s.cfg.ProjectID, "private_key_id": s.keyID,
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": s.email, "client_id": "100000000000000000001",
		"auth_uri": baseURL + "/auth", "token_uri": baseURL + "/token",
	}, "", "  ")
	return b
}

// SetFaults replaces the fault switches; an unknown mode or a bad delay is refused.
func (s *Server) SetFaults(f Faults) error {
	d, err := simhttp.FaultDelay("fcmsim", f.Delay)
	if err != nil {
		return err
	}
	if !modes[f.Mode] {
		return fmt.Errorf("fcmsim: unknown mode %q", f.Mode)
	}
	for tok, m := range f.Tokens {
		if !modes[m] {
			return fmt.Errorf("fcmsim: token %q: unknown mode %q", tok, m)
		}
	}
	if f.RetryAfter < 0 || f.RetryAfter > 3600 {
		return fmt.Errorf("fcmsim: retryAfter %d outside 0..3600", f.RetryAfter)
	}
	if len(f.Tokens) > 10000 {
		return errors.New("fcmsim: at most 10000 token faults")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults, s.delay = f, d
	return nil
}

// RevokeTokens forgets every access token issued (a key rotation): sends with them are 401.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]time.Time{}
}

// Accepted returns the accepted messages, oldest first.
func (s *Server) Accepted() []Message { return simhttp.Copy(&s.mu, &s.accepted) }

// Stats returns the counters.
func (s *Server) Stats() Stats { return simhttp.Read(&s.mu, &s.stats) }

// Handler serves POST /token, POST /v1/projects/{project}/messages:send, PUT /faults,
// GET /messages and GET /stats.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /v1/projects/{project}/{send}", s.send)
	simhttp.ControlRoutes(mux, 1<<20, s.SetFaults, s.Accepted, s.Stats)
	return mux
}

// oauthError answers as Google's token endpoint does (RFC 6749 section 5.2).
func (s *Server) oauthError(w http.ResponseWriter, code, desc string) {
	s.mu.Lock()
	s.stats.Refused++
	s.mu.Unlock()
	simhttp.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
}

// token is the service-account grant: an RS256 JWT assertion signed with the account's
// key, iss = client_email, aud = token_uri, a scope, and iat/exp at most an hour apart
// around now.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.oauthError(w, "invalid_request", err.Error())
		return
	}
	if g := r.PostForm.Get("grant_type"); g != jwtBearer {
		s.oauthError(w, "unsupported_grant_type", fmt.Sprintf("Invalid grant_type: %s", g))
		return
	}
	claims, err := s.verifyAssertion(r.PostForm.Get("assertion"), "http://"+r.Host+"/token")
	if err != nil {
		s.oauthError(w, "invalid_grant", err.Error())
		return
	}
	granted := false
	for _, sc := range strings.Fields(claims.Scope) {
		granted = granted || sc == Scope || sc == cloudPlatformScope
	}
	if !granted {
		s.oauthError(w, "invalid_scope", "the assertion does not ask for the firebase.messaging scope")
		return
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	tok := "ya29.sim." + base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = s.cfg.Clock.Now().UTC().Add(time.Hour)
	s.stats.Tokens++
	s.mu.Unlock()
	simhttp.WriteJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3599})
}

type assertionClaims struct {
	Iss   string `json:"iss"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Exp   int64  `json:"exp"`
	Iat   int64  `json:"iat"`
}

// verifyAssertion checks the JWT's RS256 signature against the account's public key and
// its claims, as Google's token endpoint does.
func (s *Server) verifyAssertion(assertion, audience string) (assertionClaims, error) {
	var c assertionClaims
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return c, errors.New("Invalid JWT: not three segments")
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return c, errors.New("Invalid JWT header encoding")
	}
	var h struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(hb, &h); err != nil || h.Alg != "RS256" {
		return c, fmt.Errorf("Invalid JWT: alg %q, want RS256", h.Alg)
	}
	if h.Kid != "" && h.Kid != s.keyID {
		return c, errors.New("Invalid JWT Signature: unknown key id")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return c, errors.New("Invalid JWT Signature encoding")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return c, errors.New("Invalid JWT Signature.")
	}
	cb, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(cb, &c) != nil {
		return c, errors.New("Invalid JWT claims")
	}
	now := s.cfg.Clock.Now().Unix()
	switch {
	case c.Iss != s.email:
		return c, fmt.Errorf("Invalid JWT: iss %q is not the service account", c.Iss)
	case c.Aud != audience:
		return c, fmt.Errorf("Invalid JWT: aud %q, want %q", c.Aud, audience)
	case c.Exp <= c.Iat || c.Exp-c.Iat > 3600:
		return c, errors.New("Invalid JWT: exp must be after iat and at most an hour later")
	case c.Iat > now+300 || c.Exp < now-300:
		return c, errors.New("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
	}
	return c, nil
}

// sendRequest is the HTTP v1 body (the fields the simulator checks).
type sendRequest struct {
	ValidateOnly bool `json:"validate_only"`
	Message      struct {
		Token        string `json:"token"`
		Topic        string `json:"topic"`
		Condition    string `json:"condition"`
		Notification *struct {
			Title string `json:"title"`
			Body  string `json:"body"`
		} `json:"notification"`
		Data    map[string]string `json:"data"`
		Android *struct {
			CollapseKey string `json:"collapse_key"`
		} `json:"android"`
		APNS *struct {
			Headers map[string]string `json:"headers"`
		} `json:"apns"`
	} `json:"message"`
}

// fcmError answers as the HTTP v1 API does: a google.rpc.Status with an FcmError detail
// (errorCode) and, for a bad field, a BadRequest detail naming it.
func fcmError(w http.ResponseWriter, httpStatus int, status, errorCode, msg, field string) {
	details := []map[string]any{}
	if errorCode != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode})
	}
	if field != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []map[string]string{{"field": field, "description": msg}}})
	}
	simhttp.WriteJSON(w, httpStatus, map[string]any{"error": map[string]any{"code": httpStatus, "message": msg, "status": status, "details": details}})
}

var tokenShape = regexp.MustCompile(`^[A-Za-z0-9_:\-]+$`)

var reservedData = []string{"from", "notification", "message_type"}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("send") != "messages:send" {
		http.NotFound(w, r)
		return
	}
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	s.mu.Lock()
	exp, known := s.tokens[tok]
	valid := ok && known && s.cfg.Clock.Now().Before(exp)
	if !valid {
		s.stats.Unauthorized++
	}
	s.mu.Unlock()
	if !valid {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		fcmError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR",
			"Request had invalid authentication credentials. Expected OAuth 2 access token.", "")
		return
	}
	if p := r.PathValue("project"); p != s.cfg.ProjectID {
		fcmError(w, http.StatusForbidden, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", fmt.Sprintf("Permission denied on project %s", p), "")
		return
	}
	var req sendRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	if err := dec.Decode(&req); err != nil {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error(), "")
		return
	}
	m := req.Message
	targets := 0
	for _, t := range []string{m.Token, m.Topic, m.Condition} {
		if t != "" {
			targets++
		}
	}
	if targets != 1 || m.Token == "" {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "exactly one of token, topic or condition; the simulator serves token", "message")
		return
	}
	if len(m.Token) > 4096 || !tokenShape.MatchString(m.Token) {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", "message.token")
		return
	}
	size := 0
	for k, v := range m.Data {
		lk := strings.ToLower(k)
		for _, res := range reservedData {
			if lk == res {
				fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", fmt.Sprintf("data key %q is reserved", k), "message.data")
				return
			}
		}
		if strings.HasPrefix(lk, "google") || strings.HasPrefix(lk, "gcm") {
			fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", fmt.Sprintf("data key %q is reserved", k), "message.data")
			return
		}
		size += len(k) + len(v)
	}
	out := Message{Token: m.Token, Data: m.Data}
	if m.Notification != nil {
		out.Title, out.Body = m.Notification.Title, m.Notification.Body
		size += len(out.Title) + len(out.Body)
	}
	if size > MaxMessageBytes {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", fmt.Sprintf("Message is too big: %d bytes over %d", size, MaxMessageBytes), "message")
		return
	}
	if m.Android != nil {
		out.CollapseKey = m.Android.CollapseKey
	}
	if m.APNS != nil {
		out.APNSCollapse = m.APNS.Headers["apns-collapse-id"]
	}
	s.mu.Lock()
	s.stats.Sends++
	mode := s.faults.Mode
	if tm, ok := s.faults.Tokens[m.Token]; ok {
		mode = tm
	}
	delay, retryAfter := s.delay, s.faults.RetryAfter
	if retryAfter == 0 {
		retryAfter = 1
	}
	switch mode {
	case ModeRateLimit, ModeUnavailable, ModeInternal, ModeUnregistered, ModeInvalidToken:
		s.stats.Faulted++
		s.mu.Unlock()
		switch mode {
		case ModeRateLimit:
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			fcmError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded for quota metric 'Send requests'", "")
		case ModeUnavailable:
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			fcmError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "UNAVAILABLE", "The service is currently unavailable.", "")
		case ModeInternal:
			fcmError(w, http.StatusInternalServerError, "INTERNAL", "INTERNAL", "Internal error encountered.", "")
		case ModeUnregistered:
			fcmError(w, http.StatusNotFound, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found.", "")
		case ModeInvalidToken:
			fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", "message.token")
		}
		return
	}
	s.seq++
	out.Name = fmt.Sprintf("projects/%s/messages/0:%d%%sim", s.cfg.ProjectID, s.seq)
	if req.ValidateOnly {
		s.mu.Unlock()
		simhttp.WriteJSON(w, http.StatusOK, map[string]string{"name": fmt.Sprintf("projects/%s/messages/fake_message_id", s.cfg.ProjectID)})
		return
	}
	s.accepted = append(s.accepted, out)
	s.stats.Accepted++
	s.mu.Unlock()
	simhttp.HoldAnswer(r, mode, delay)
	simhttp.WriteJSON(w, http.StatusOK, map[string]string{"name": out.Name})
}
