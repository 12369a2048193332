package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// Defaults of Guard.
const (
	// DefaultIdle ends a session nobody used for this long.
	DefaultIdle = 30 * time.Minute
	// DefaultAbsolute ends every session this long after its sign-in.
	DefaultAbsolute = 8 * time.Hour
	// touchEvery bounds the writes of a busy session: LastSeenOn moves at most this often.
	touchEvery = time.Minute
	// purgeBatch is how many ended sessions a sign-in deletes at most: more than one, so the
	// table shrinks whenever sign-ins come.
	purgeBatch = 100
	// MaxClaimsBytes bounds the identity-provider claims a session keeps (Subject.Claims): a
	// sign-in whose kept claims are longer is refused (503, no session). Entra ID puts at
	// most 200 group ids (about 8 KB) in a token and sends an overage claim beyond that.
	MaxClaimsBytes = 64 << 10
)

// End reasons of a session (store.ConsoleSession.EndReason).
const (
	ReasonLogout  = "logout"
	ReasonRevoked = "revoked" // its API key was revoked or its rotation overlap ended
	ReasonRoles   = "roles"   // its person's claims no longer map to any role
	ReasonAdmin   = "admin"   // an admin ended the person's sessions
)

// Ended is what Guard.Resolve returns for a session that must end now: the guard ends its
// row with Reason and answers as if there were no session.
type Ended struct{ Reason string }

func (e *Ended) Error() string { return "session: ended (" + e.Reason + ")" }

// Subject is what a new session signs in as: the principal's name, and what every later
// request re-checks (Guard.Resolve): the API key's prefix, or the person's kept claims.
type Subject struct {
	Principal string
	KeyPrefix string
	Claims    string // at most MaxClaimsBytes
}

type ctxKey int

const (
	subjectKey ctxKey = iota
	principalKey
)

// Begin names the subject of the session the response to ctx's request starts (the
// console's sign-in handlers call it before setting the cookie). Outside a Guard it does
// nothing.
func Begin(ctx context.Context, s Subject) {
	if p, ok := ctx.Value(subjectKey).(*Subject); ok {
		*p = s
	}
}

// PrincipalFrom is the principal Guard.Resolve re-established for this request's session;
// false when the session has none of its own (the bootstrap token's) or there is no guard.
func PrincipalFrom(ctx context.Context) (httpapi.Principal, bool) {
	p, ok := ctx.Value(principalKey).(httpapi.Principal)
	return p, ok
}

// Guard wraps the console's routes. Fields are set once, before Wrap.
type Guard struct {
	Store store.SessionStore
	Clock automation.Clock
	Log   *slog.Logger
	// CookieName names the console's cookie; SignInPatterns its sign-in routes (ServeMux
	// patterns: the token form and the OIDC callback), whose refusals (401) SignIns counts;
	// LogoutPattern its sign-out route.
	CookieName     string
	SignInPatterns []string
	LogoutPattern  string
	// Principal names who a new session belongs to when its sign-in named no Subject
	// ("bootstrap": the console signs in with AUTOMATION_API_TOKEN).
	Principal string
	// PrincipalOf names who the session of a new cookie value belongs to when its sign-in
	// named no Subject; nil or "": Principal.
	PrincipalOf func(cookie string) string
	// Resolve re-checks a live session on every request, from its row: the principal it acts
	// as now (nil: the session's own default, the bootstrap admin), or an *Ended to end it at
	// once (a revoked key, a person whose claims map to no role any more). Other errors
	// answer 503. nil: no re-check.
	Resolve  func(ctx context.Context, s store.ConsoleSession) (*httpapi.Principal, error)
	Idle     time.Duration // DefaultIdle when 0
	Absolute time.Duration // DefaultAbsolute when 0
	// SignIns throttles failed sign-ins per client address (nil: none).
	SignIns *httpapi.Throttle
	// TrustedProxies are the peers whose X-Forwarded-For names the client address
	// (ClientAddress; AUTOMATION_TRUSTED_PROXIES). nil: none, the peer is the client.
	TrustedProxies []netip.Prefix
}

func (g *Guard) signIn(pattern string) bool {
	for _, p := range g.SignInPatterns {
		if p == pattern {
			return true
		}
	}
	return false
}

// Hash is the stored form of a cookie value: lower-case hex SHA-256.
func Hash(cookie string) string {
	h := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(h[:])
}

// Wrap returns h guarded for the route with pattern.
func (g *Guard) Wrap(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := g.Clock.Now()
		live, hash, p, err := g.live(r, now)
		if err != nil {
			g.logger().Error("console session check failed", "error", err.Error())
			w.Header().Set("Retry-After", "5")
			http.Error(w, "the console is unavailable for a moment; try again", http.StatusServiceUnavailable)
			return
		}
		if hash != "" && !live {
			dropCookie(r, g.CookieName)
		}
		if p != nil {
			r = r.WithContext(context.WithValue(r.Context(), principalKey, *p))
		}
		addr := ""
		if g.signIn(pattern) {
			addr = ClientAddress(r, g.TrustedProxies)
			if wait, blocked := g.SignIns.Blocked(addr); blocked {
				secs := strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10)
				w.Header().Set("Retry-After", secs)
				w.Header().Set("Cache-Control", "no-store")
				http.Error(w, "Too many failed sign-ins from your address. Wait "+secs+" s and sign in again.", http.StatusTooManyRequests)
				return
			}
		}
		if live && pattern == g.LogoutPattern {
			if err := g.Store.ConsoleSessionEnd(r.Context(), hash, now.UTC(), ReasonLogout); err != nil {
				g.logger().Error("console logout not recorded", "error", err.Error())
				http.Error(w, "signing out failed; try again", http.StatusServiceUnavailable)
				return
			}
		}
		sw := &sessionWriter{ResponseWriter: w, g: g, r: r, now: now, subject: &Subject{}}
		r = r.WithContext(context.WithValue(r.Context(), subjectKey, sw.subject))
		sw.r = r
		h.ServeHTTP(sw, r)
		// Only failures count. A success does not forgive them: whoever holds one credential
		// that signs in could otherwise reset the address's count between guesses of another
		// (TestSignInSuccessDoesNotResetTheThrottle); the bucket refills with time alone.
		if addr != "" && sw.status == http.StatusUnauthorized {
			g.SignIns.Failed(addr)
		}
	})
}

// live reports whether r's session cookie has a live row, touching it, and the principal
// Resolve re-established for it (nil: none of its own); hash is "" when r carries no cookie.
func (g *Guard) live(r *http.Request, now time.Time) (bool, string, *httpapi.Principal, error) {
	c, err := r.Cookie(g.CookieName)
	if err != nil || c.Value == "" {
		return false, "", nil, nil
	}
	hash := Hash(c.Value)
	s, err := g.Store.ConsoleSessionGet(r.Context(), hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, hash, nil, nil
	case err != nil:
		return false, hash, nil, err
	}
	if s.EndedOn != nil || !now.Before(s.ExpiresOn) || !now.Before(s.LastSeenOn.Add(g.idle())) {
		return false, hash, nil, nil
	}
	var p *httpapi.Principal
	if g.Resolve != nil {
		p, err = g.Resolve(r.Context(), s)
		var ended *Ended
		switch {
		case errors.As(err, &ended):
			if err := g.Store.ConsoleSessionEnd(r.Context(), hash, now.UTC(), ended.Reason); err != nil {
				return false, hash, nil, err
			}
			g.logger().Info("console session ended", "principal", s.Principal, "reason", ended.Reason)
			return false, hash, nil, nil
		case err != nil:
			return false, hash, nil, err
		}
	}
	if now.Sub(s.LastSeenOn) >= touchEvery {
		if err := g.Store.ConsoleSessionTouch(r.Context(), hash, now.UTC()); err != nil {
			return false, hash, nil, err
		}
	}
	return true, hash, p, nil
}

func (g *Guard) idle() time.Duration {
	if g.Idle > 0 {
		return g.Idle
	}
	return DefaultIdle
}

func (g *Guard) absolute() time.Duration {
	if g.Absolute > 0 {
		return g.Absolute
	}
	return DefaultAbsolute
}

func (g *Guard) logger() *slog.Logger {
	if g.Log != nil {
		return g.Log
	}
	return slog.Default()
}

// dropCookie removes the cookie named name from r's Cookie headers.
func dropCookie(r *http.Request, name string) {
	var kept []string
	for _, c := range r.Cookies() {
		if c.Name != name {
			kept = append(kept, c.String())
		}
	}
	r.Header.Del("Cookie")
	if len(kept) > 0 {
		r.Header.Set("Cookie", strings.Join(kept, "; "))
	}
}

// ClientAddress is the address a request came from, as an IP alone in its canonical
// spelling: the peer's, unless the peer is one of trusted (the proxies whose forwarding
// headers are believed, AUTOMATION_TRUSTED_PROXIES; none by default). Then X-Forwarded-For
// is read from its right end, each entry added by the hop before it: the first entry that
// is not itself a trusted proxy is the client (in Azure the Functions host forwards from
// the loopback, and the last entry is the one the platform's front end added). A peer that
// is not trusted is the client whatever it sends: locally anyone on the machine could
// otherwise name a fresh address on every try and never be slowed
// (TestForwardedForIsTrustedOnlyFromConfiguredProxies).
//
// Azure's front ends write an entry as "IP:port" (App Service, Application Gateway), and the
// port is the client's source port, new on every connection, so a key with it would give
// each connection a fresh throttle bucket: the port is dropped. An entry that is no IP
// (with or without a port) ends the walk at the last trusted hop, so made-up entries share
// one key.
func ClientAddress(r *http.Request, trusted []netip.Prefix) string {
	addr, ok := parseAddr(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if !isTrusted(addr, trusted) {
		return addr.String()
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		prev, ok := parseAddr(strings.TrimSpace(hops[i]))
		if !ok {
			break
		}
		addr = prev
		if !isTrusted(addr, trusted) {
			break
		}
	}
	return addr.String()
}

// parseAddr reads "IP", "IP:port" or "[IPv6]:port" as an unmapped address.
func parseAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// sessionWriter records the sessions a response starts: a Set-Cookie of the console's
// cookie with a value is stored as a live session before the response leaves, or the
// response becomes a 503 without the cookie.
type sessionWriter struct {
	http.ResponseWriter
	g       *Guard
	r       *http.Request
	now     time.Time
	subject *Subject // what the handler's sign-in named (Begin)
	status  int
	failed  bool // the session could not be stored: the 503 is written, the handler's answer dropped
}

func (s *sessionWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
		if err := s.record(); err != nil {
			s.g.logger().Error("console session not recorded", "error", err.Error())
			s.Header().Del("Set-Cookie")
			s.Header().Del("Location")
			s.Header().Set("Retry-After", "5")
			s.status, s.failed = http.StatusServiceUnavailable, true
			s.ResponseWriter.WriteHeader(http.StatusServiceUnavailable)
			_, _ = s.ResponseWriter.Write([]byte("signing in failed; try again\n"))
			return
		}
	}
	if s.failed {
		return
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	if s.failed {
		return len(p), nil
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *sessionWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *sessionWriter) record() error {
	for _, line := range s.Header().Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil || c.Name != s.g.CookieName || c.Value == "" || c.MaxAge < 0 {
			continue
		}
		principal := s.g.Principal
		if s.g.PrincipalOf != nil {
			if p := s.g.PrincipalOf(c.Value); p != "" {
				principal = p
			}
		}
		if s.subject.Principal != "" {
			principal = s.subject.Principal
		}
		if len(s.subject.Claims) > MaxClaimsBytes {
			return fmt.Errorf("session: the sign-in's claims are %d bytes, more than %d", len(s.subject.Claims), MaxClaimsBytes)
		}
		if err := s.g.Store.ConsoleSessionInsert(s.r.Context(), store.ConsoleSession{SessionHash: Hash(c.Value),
			Principal: principal, CreatedOn: s.now.UTC(), LastSeenOn: s.now.UTC(), ExpiresOn: s.now.UTC().Add(s.g.absolute()),
			KeyPrefix: s.subject.KeyPrefix, Claims: s.subject.Claims}); err != nil {
			return err
		}
		// Every sign-in also deletes up to purgeBatch sessions past their absolute lifetime, so
		// the table holds little more than the sessions of the last lifetime. A failed purge
		// is only logged: the next sign-in tries again.
		if _, err := s.g.Store.ConsoleSessionPurge(s.r.Context(), s.now.UTC(), purgeBatch); err != nil {
			s.g.logger().Warn("console sessions not purged", "error", err.Error())
		}
		return nil
	}
	return nil
}
