package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
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
)

// Guard wraps the console's routes. Fields are set once, before Wrap.
type Guard struct {
	Store store.SessionStore
	Clock automation.Clock
	Log   *slog.Logger
	// CookieName and LoginPattern / LogoutPattern name the console's cookie and its sign-in
	// and sign-out routes (ServeMux patterns).
	CookieName    string
	LoginPattern  string
	LogoutPattern string
	// Principal names who a new session belongs to ("bootstrap": the console signs in with
	// AUTOMATION_API_TOKEN).
	Principal string
	// PrincipalOf names who the session of a new cookie value belongs to (the console's
	// OIDC sessions name their person); nil or "": Principal.
	PrincipalOf func(cookie string) string
	Idle        time.Duration // DefaultIdle when 0
	Absolute    time.Duration // DefaultAbsolute when 0
	// SignIns throttles failed sign-ins per client address (nil: none).
	SignIns *httpapi.Throttle
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
		live, hash, err := g.live(r, now)
		if err != nil {
			g.logger().Error("console session check failed", "error", err.Error())
			w.Header().Set("Retry-After", "5")
			http.Error(w, "the console is unavailable for a moment; try again", http.StatusServiceUnavailable)
			return
		}
		if hash != "" && !live {
			dropCookie(r, g.CookieName)
		}
		addr := ""
		if pattern == g.LoginPattern {
			addr = ClientAddress(r)
			if wait, blocked := g.SignIns.Blocked(addr); blocked {
				secs := strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10)
				w.Header().Set("Retry-After", secs)
				w.Header().Set("Cache-Control", "no-store")
				http.Error(w, "Too many failed sign-ins from your address. Wait "+secs+" s and sign in again.", http.StatusTooManyRequests)
				return
			}
		}
		if live && pattern == g.LogoutPattern {
			if err := g.Store.ConsoleSessionEnd(r.Context(), hash, now.UTC(), "logout"); err != nil {
				g.logger().Error("console logout not recorded", "error", err.Error())
				http.Error(w, "signing out failed; try again", http.StatusServiceUnavailable)
				return
			}
		}
		sw := &sessionWriter{ResponseWriter: w, g: g, r: r, now: now}
		h.ServeHTTP(sw, r)
		if addr != "" {
			switch {
			case sw.status == http.StatusUnauthorized:
				g.SignIns.Failed(addr)
			case sw.status/100 == 3 || sw.status/100 == 2:
				g.SignIns.Succeeded(addr)
			}
		}
	})
}

// live reports whether r's session cookie has a live row, touching it; hash is "" when r
// carries no cookie.
func (g *Guard) live(r *http.Request, now time.Time) (bool, string, error) {
	c, err := r.Cookie(g.CookieName)
	if err != nil || c.Value == "" {
		return false, "", nil
	}
	hash := Hash(c.Value)
	s, err := g.Store.ConsoleSessionGet(r.Context(), hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, hash, nil
	case err != nil:
		return false, hash, err
	}
	if s.EndedOn != nil || !now.Before(s.ExpiresOn) || !now.Before(s.LastSeenOn.Add(g.idle())) {
		return false, hash, nil
	}
	if now.Sub(s.LastSeenOn) >= touchEvery {
		if err := g.Store.ConsoleSessionTouch(r.Context(), hash, now.UTC()); err != nil {
			return false, hash, err
		}
	}
	return true, hash, nil
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

// ClientAddress is the address a request came from: the peer's, or, when the peer is the
// loopback (the Functions host forwarding to the custom handler, which listens on
// 127.0.0.1 only), the last X-Forwarded-For entry, the one the platform's front end added.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if last := strings.TrimSpace(parts[len(parts)-1]); last != "" {
				return last
			}
		}
	}
	return host
}

// sessionWriter records the sessions a response starts: a Set-Cookie of the console's
// cookie with a value is stored as a live session before the response leaves, or the
// response becomes a 503 without the cookie.
type sessionWriter struct {
	http.ResponseWriter
	g      *Guard
	r      *http.Request
	now    time.Time
	status int
	failed bool // the session could not be stored: the 503 is written, the handler's answer dropped
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
		if err := s.g.Store.ConsoleSessionInsert(s.r.Context(), store.ConsoleSession{SessionHash: Hash(c.Value),
			Principal: principal, CreatedOn: s.now.UTC(), LastSeenOn: s.now.UTC(), ExpiresOn: s.now.UTC().Add(s.g.absolute())}); err != nil {
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
