package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Options configures an API. The zero value serves everything to everyone without
// idempotency records: fine for tests, never for production (see app wiring).
type Options struct {
	// Token, when not empty, is the bootstrap credential: "Authorization: Bearer <Token>"
	// is an admin of BusinessUnits (AUTOMATION_API_TOKEN). In Azure the Functions host also
	// checks function keys before us.
	Token string
	// Authenticator resolves every other bearer credential (API keys, OIDC tokens) to a
	// Principal. When Token and Authenticator are both unset, every request is an admin of
	// BusinessUnits (tests, serve without -token).
	Authenticator Authenticator
	// RouteRoles is the role each route needs, by its ServeMux pattern; nil means no role
	// check (an API without credentials), and a route missing from a non-nil table is
	// refused with 403.
	RouteRoles RouteRoles
	// RecipientRoutes are the routes (ServeMux patterns, with a {recipientId}) a recipient
	// token may use, its own recipient only.
	RecipientRoutes map[string]bool
	// QueryCredentialRoutes are the routes that also take the bearer credential from the
	// access_token query parameter, for clients that cannot send a header (a browser's
	// EventSource). The parameter is removed from the request before the handler sees it.
	QueryCredentialRoutes map[string]bool
	// Admit, when set, runs after the caller is resolved and before the handler: a per-tenant
	// quota. An error is answered (429 with Retry-After for httpapi.Throttled-like errors)
	// and the handler does not run; release, when not nil, runs after the handler returns.
	Admit func(r *http.Request, c Caller) (release func(), err error)
	// BusinessUnits is what any caller may see at most; the X-Automation-Business-Units
	// header narrows it per request. Nil (the zero Scope) means all business units, so set
	// it deliberately in multi-tenant deployments.
	BusinessUnits *automation.Scope
	// Idempotency stores Idempotency-Key records; nil disables the header (it is then
	// rejected with 400 rather than silently ignored).
	Idempotency store.IdempotencyStore
	// IdempotencyLease is how long a request may run before a retry with the same key may
	// take over (default 1 minute).
	IdempotencyLease time.Duration
	// Clock gives "now" for idempotency records (default automation.SystemClock).
	Clock automation.Clock
	// MaxBodyBytes bounds request bodies (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Logger receives 5xx details and recovered panics (default slog.Default()).
	Logger *slog.Logger
}

// API turns HandlerFuncs into http.Handlers that authenticate, scope, apply
// Idempotency-Key and answer errors as problem details. Safe for concurrent use.
type API struct{ o Options }

// New returns an API with o.
func New(o Options) *API {
	if o.IdempotencyLease <= 0 {
		o.IdempotencyLease = time.Minute
	}
	if o.Clock == nil {
		o.Clock = automation.SystemClock{}
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &API{o: o}
}

// HandlerFunc is a route handler: it writes its success answer itself (WriteJSON) and
// returns errors for WriteError to answer.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Logger returns the API's logger.
func (a *API) Logger() *slog.Logger { return a.o.Logger }

// Clock returns the API's clock.
func (a *API) Clock() automation.Clock { return a.o.Clock }

// Handler wraps h: bounded body, bearer token, Caller in the context, Idempotency-Key on
// POST, errors and panics as problem details.
func (a *API) Handler(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := &startedWriter{ResponseWriter: rw}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { // the handler's own way to abort: pass it on
					panic(v)
				}
				a.o.Logger.Error("http handler panicked", "panic", fmt.Sprint(v), "path", r.URL.Path, "stack", string(debug.Stack()))
				if w.started {
					// Part of the answer is out: a problem appended to it would be a corrupt
					// success. Abort the connection so the client sees a failure.
					panic(http.ErrAbortHandler)
				}
				WriteError(w, r, nil, fmt.Errorf("panic: %v", v))
			}
		}()
		p, err := a.principal(r)
		if err == nil {
			err = a.authorize(r, p)
		}
		if err != nil {
			WriteError(w, r, a.o.Logger, err)
			return
		}
		// r.URL.Query() silently drops what url.ParseQuery rejects (a bad %-escape, a ';'
		// separator): a filter would vanish instead of being refused.
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			WriteError(w, r, a.o.Logger, &automation.Error{Code: automation.CodeMalformed, Field: "query",
				Message: "the query string is malformed: " + err.Error()})
			return
		}
		if r.ContentLength > a.o.MaxBodyBytes {
			WriteError(w, r, a.o.Logger, tooLarge(a.o.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, a.o.MaxBodyBytes)
		c, err := a.caller(r, p)
		if err != nil {
			WriteError(w, r, a.o.Logger, err)
			return
		}
		r = r.WithContext(WithCaller(r.Context(), c))
		if a.o.Admit != nil {
			release, err := a.o.Admit(r, c)
			if err != nil {
				WriteError(w, r, a.o.Logger, err)
				return
			}
			if release != nil {
				defer release()
			}
		}
		if key := r.Header.Get(HeaderIdempotencyKey); key != "" || len(r.Header.Values(HeaderIdempotencyKey)) > 0 {
			if r.Method != http.MethodPost {
				WriteError(w, r, a.o.Logger, &automation.Error{Code: automation.CodeMalformed, Field: HeaderIdempotencyKey,
					Message: "is only accepted on POST (PUT, PATCH and DELETE are guarded by If-Match)"})
				return
			}
			a.idempotent(w, r, h)
			return
		}
		if err := h(w, r); err != nil {
			WriteError(w, r, a.o.Logger, err)
		}
	})
}

// caller resolves who makes r: the configured business units, capped by the principal's
// (p, nil when the API has no credentials), narrowed by the scope header (ScopeHeader's
// rules; its error is a 400), and the operator's name.
func (a *API) caller(r *http.Request, p *Principal) (Caller, error) {
	scope := automation.AllBusinessUnits()
	if a.o.BusinessUnits != nil {
		scope = *a.o.BusinessUnits
	}
	if p != nil {
		scope = scope.Intersect(p.Scope)
	}
	narrow, present, err := ScopeHeader(r.Header)
	if err != nil {
		return Caller{}, err
	}
	if present {
		scope = scope.Intersect(narrow)
	}
	op := operatorName(r.Header.Get(headerPrincipalName))
	if op == "" {
		op = operatorName(r.Header.Get(HeaderOperator))
	}
	c := Caller{Scope: scope, Operator: auditOperator(p, op)}
	if p != nil {
		c.Principal = *p
	}
	return c, nil
}

// startedWriter records whether the answer has started (status line or body sent).
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (s *startedWriter) WriteHeader(code int) {
	if code >= 200 {
		s.started = true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = true
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush, deadlines).
func (s *startedWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// TokenRequired reports whether the API was configured with a bearer token.
func (a *API) TokenRequired() bool { return a.o.Token != "" }

// CheckToken reports whether token is the API's bearer token (false when none is
// configured). The comparison takes the same time whatever the token's bytes or length. An
// adapter that authenticates otherwise than by the Authorization header (the console's sign-in
// form) checks what it was given with it.
func (a *API) CheckToken(token string) bool {
	if a.o.Token == "" {
		return false
	}
	got, want := sha256.Sum256([]byte(strings.TrimSpace(token))), sha256.Sum256([]byte(a.o.Token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// Authenticate resolves a credential an adapter was given otherwise than in the
// Authorization header (the console's sign-in form) as Handler would: the bootstrap token, or
// what the Authenticator makes of it (an API key, an OIDC token). Errors:
// ErrUnknownCredential for a credential nobody knows (or none configured); a 429 error
// (automation.CodeTooManyRequests, with its Retry-After) for a throttled key; anything else
// is a failure to check.
func (a *API) Authenticate(ctx context.Context, credential string) (Principal, error) {
	credential = strings.TrimSpace(credential)
	if credential == "" {
		return Principal{}, ErrUnknownCredential
	}
	if a.CheckToken(credential) {
		return Principal{Name: BootstrapName, Roles: []Role{RoleAdmin}, Scope: automation.AllBusinessUnits()}, nil
	}
	if a.o.Authenticator == nil {
		return Principal{}, ErrUnknownCredential
	}
	return a.o.Authenticator.Authenticate(ctx, credential)
}

// SessionKey returns a key derived from the API's bearer token for signing what an adapter
// hands a client in its place (the console's session cookie): HMAC-SHA256 of purpose under
// the token, so every instance with the same token derives the same key and a new token
// invalidates what the old one signed. nil when no token is configured.
func (a *API) SessionKey(purpose string) []byte {
	if a.o.Token == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(a.o.Token))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// Bearer reports whether r carries the API's bearer token (always false when none is
// configured) and whether it carries an Authorization header at all.
func (a *API) Bearer(r *http.Request) (ok, present bool) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return false, false
	}
	scheme, token, cut := strings.Cut(auth, " ")
	return cut && strings.EqualFold(scheme, "Bearer") && a.CheckToken(token), true
}

// Caller returns who makes r as API.Handler would put it in the context: the configured
// business units narrowed by X-Automation-Business-Units, and the operator's name. A scope
// header that Handler refuses with 400 (repeated, or "*" mixed with ids) gives the caller
// that sees nothing: fail closed, for adapters that have no error answer of their own.
func (a *API) Caller(r *http.Request) Caller {
	c, err := a.caller(r, nil)
	if err != nil {
		return Caller{Operator: c.Operator}
	}
	return c
}

// CallerAs returns who makes r when an adapter authenticated p itself (the console's OIDC
// session): the configured business units intersected with p's scope and narrowed by
// X-Automation-Business-Units, the operator audited under p's name. A scope header Handler
// refuses gives the caller that sees nothing (fail closed), named as p.
func (a *API) CallerAs(r *http.Request, p Principal) Caller {
	c, err := a.caller(r, &p)
	if err != nil {
		return Caller{Operator: auditOperator(&p, ""), Principal: p}
	}
	return c
}

// auditOperator is the operator a write is audited under (issue 37, "every write records the
// principal"): a credential that names one person or app (an API key, an OIDC subject) is
// the identity, first, and the free-text operator the request states follows it as the
// reason ("key:pos-sydney / jane": the key did it, saying jane asked); the shared bootstrap
// token names nobody, so its requests keep the stated operator alone. Bounded like every
// operator (automation.OperatorName): the identity is never cut.
func auditOperator(p *Principal, stated string) string {
	if p == nil || p.Name == "" || p.Name == BootstrapName {
		return stated
	}
	if stated == "" || stated == p.Name {
		return operatorName(p.Name)
	}
	return operatorName(p.Name + " / " + stated)
}
