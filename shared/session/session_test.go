package session_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/session"
	"github.com/automation-platform/automation/shared/store"
)

// memStore is a SessionStore in memory (the SQL stores pass storetest.RunSessions).
type memStore struct {
	mu   sync.Mutex
	rows map[string]store.ConsoleSession
}

func (m *memStore) ConsoleSessionInsert(_ context.Context, s store.ConsoleSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[s.SessionHash] = s
	return nil
}

func (m *memStore) ConsoleSessionGet(_ context.Context, h string) (store.ConsoleSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.rows[h]
	if !ok {
		return s, store.ErrNotFound
	}
	return s, nil
}

func (m *memStore) ConsoleSessionTouch(context.Context, string, time.Time) error { return nil }

func (m *memStore) ConsoleSessionEnd(_ context.Context, h string, now time.Time, reason string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.rows[h]; ok && s.EndedOn == nil {
		s.EndedOn, s.EndReason = &now, reason
		m.rows[h] = s
	}
	return nil
}

func (m *memStore) ConsoleSessionEndPrincipal(context.Context, string, time.Time, string) (int, error) {
	return 0, nil
}

func (m *memStore) ConsoleSessionPurge(context.Context, time.Time, int) (int, error) { return 0, nil }

// The guard re-checks a live session on every request through Resolve: an *Ended ends the
// row with its reason and the handler sees no cookie; a principal reaches the handler
// (PrincipalFrom); another error is 503. A sign-in's Subject (Begin) is stored with the row,
// and claims over MaxClaimsBytes start no session (503, no cookie). A 401 of any of the
// SignInPatterns counts against SignIns.
func TestGuardResolvesEveryRequest(t *testing.T) {
	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	st := &memStore{rows: map[string]store.ConsoleSession{}}
	throttle := httpapi.NewThrottle(clock)
	g := &session.Guard{Store: st, Clock: clock, CookieName: "c", SignInPatterns: []string{"POST /login", "GET /callback"},
		LogoutPattern: "POST /logout", Principal: "bootstrap", SignIns: throttle,
		Resolve: func(_ context.Context, s store.ConsoleSession) (*httpapi.Principal, error) {
			switch s.KeyPrefix {
			case "revoked":
				return nil, &session.Ended{Reason: session.ReasonRevoked}
			case "broken":
				return nil, errors.New("store down")
			case "":
				return nil, nil
			}
			return &httpapi.Principal{Name: "key:" + s.KeyPrefix, Roles: []httpapi.Role{httpapi.RoleRead}}, nil
		}}
	var seen struct {
		cookie    bool
		principal string
	}
	handler := func(pattern string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := r.Cookie("c")
			seen.cookie = err == nil
			p, _ := session.PrincipalFrom(r.Context())
			seen.principal = p.Name
			switch pattern {
			case "POST /login":
				subject := session.Subject{Principal: "key:ok", KeyPrefix: r.URL.Query().Get("key"), Claims: r.URL.Query().Get("claims")}
				if subject.KeyPrefix == "bad" {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				session.Begin(r.Context(), subject)
				http.SetCookie(w, &http.Cookie{Name: "c", Value: "v-" + subject.KeyPrefix + "-" + r.URL.Query().Get("n")})
				w.WriteHeader(http.StatusSeeOther)
			case "GET /callback":
				w.WriteHeader(http.StatusUnauthorized)
			default:
				w.WriteHeader(http.StatusOK)
			}
		})
	}
	do := func(pattern, target, cookie string) *httptest.ResponseRecorder {
		method, _, _ := strings.Cut(pattern, " ")
		r := httptest.NewRequest(method, target, nil)
		r.RemoteAddr = "192.0.2.1:1000"
		if cookie != "" {
			r.Header.Set("Cookie", "c="+cookie)
		}
		rec := httptest.NewRecorder()
		g.Wrap(pattern, handler(pattern)).ServeHTTP(rec, r)
		return rec
	}
	for _, k := range []string{"live", "revoked", "broken"} {
		if rec := do("POST /login", "/login?key="+k+"&n=1", ""); rec.Code != http.StatusSeeOther {
			t.Fatalf("sign-in %s: %d", k, rec.Code)
		}
		if s, err := st.ConsoleSessionGet(context.Background(), session.Hash("v-"+k+"-1")); err != nil || s.KeyPrefix != k || s.Principal != "key:ok" {
			t.Fatalf("the row of %s: %+v %v", k, s, err)
		}
	}
	if rec := do("GET /page", "/page", "v-live-1"); rec.Code != 200 || !seen.cookie || seen.principal != "key:live" {
		t.Fatalf("a live key's session: %d %+v", rec.Code, seen)
	}
	if rec := do("GET /page", "/page", "v-revoked-1"); rec.Code != 200 || seen.cookie || seen.principal != "" {
		t.Fatalf("a revoked key's session reached the handler: %d %+v", rec.Code, seen)
	}
	if s, _ := st.ConsoleSessionGet(context.Background(), session.Hash("v-revoked-1")); s.EndReason != session.ReasonRevoked {
		t.Fatalf("the revoked key's row: %+v", s)
	}
	if rec := do("GET /page", "/page", "v-broken-1"); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("a failed re-check: %d, want 503", rec.Code)
	}
	big := strings.Repeat("x", session.MaxClaimsBytes+1)
	if rec := do("POST /login", "/login?key=live&n=2&claims="+big, ""); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Set-Cookie") != "" {
		t.Fatalf("claims over the bound: %d %v", rec.Code, rec.Header())
	}
	for range httpapi.DefaultThrottleBurst {
		do("GET /callback", "/callback", "")
	}
	if rec := do("POST /login", "/login?key=live&n=3", ""); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("a sign-in after %d refused callbacks: %d, want 429", httpapi.DefaultThrottleBurst, rec.Code)
	}
}

// The sign-in throttle counts failures per client address, and behind the Functions host
// (the loopback, a trusted proxy in Azure) that address is the last X-Forwarded-For entry, which Azure's front ends (App Service,
// Application Gateway) write as "IP:port". The port is the client's source port, new on
// every connection, so keyed with it each connection started a fresh bucket: a storm on new
// connections was never slowed. The address is the IP alone, whatever port or spelling.
func TestClientAddressIsTheIPWithoutItsPort(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ peer, xff, want string }{
		{"127.0.0.1:40000", "203.0.113.5:54321", "203.0.113.5"},
		{"127.0.0.1:40001", "198.51.100.7, 203.0.113.5:54322", "203.0.113.5"},
		{"127.0.0.1:40002", "203.0.113.5", "203.0.113.5"},
		{"127.0.0.1:40003", "[2001:db8::1]:443", "2001:db8::1"},
		{"127.0.0.1:40004", "2001:DB8:0::1", "2001:db8::1"},
		{"[::1]:40005", "203.0.113.5:1", "203.0.113.5"},
		{"192.0.2.9:5555", "203.0.113.5:1", "192.0.2.9"}, // a peer that is not the loopback: its own address
	} {
		r := httptest.NewRequest("POST", "/api/console/login", nil)
		r.RemoteAddr = c.peer
		r.Header.Set("X-Forwarded-For", c.xff)
		if got := session.ClientAddress(r, loopback); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %q, want %q", c.peer, c.xff, got, c.want)
		}
	}
}

// loopback is what Bicep sets AUTOMATION_TRUSTED_PROXIES to: the Functions host.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}

// Forwarding headers are believed only from a configured proxy. The sign-in throttle once
// trusted X-Forwarded-For from any loopback peer, so on a local serve anyone on the machine
// named a fresh address on every try and was never slowed. With no trusted proxies (the
// local default) the peer is the client whatever it sends; with some, the walk goes from
// the right past every trusted hop, and stops at an entry that is no IP.
func TestForwardedForIsTrustedOnlyFromConfiguredProxies(t *testing.T) {
	t.Parallel()
	front := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, c := range []struct {
		peer    string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"127.0.0.1:40000", []string{"203.0.113.5"}, nil, "127.0.0.1"},
		{"[::1]:40000", []string{"203.0.113.5:1"}, nil, "::1"},
		{"[::1]:40000", []string{"203.0.113.5:1"}, front, "::1"}, // ::1 is not in front
		{"127.0.0.1:40000", []string{"203.0.113.5, 10.1.2.3:80"}, front, "203.0.113.5"},
		{"127.0.0.1:40000", []string{"203.0.113.5", "10.1.2.3"}, front, "203.0.113.5"}, // repeated headers are one list
		{"127.0.0.1:40000", []string{"198.51.100.1, 203.0.113.5, 10.1.2.3"}, front, "203.0.113.5"},
		{"127.0.0.1:40000", []string{"10.9.9.9, 10.1.2.3"}, front, "10.9.9.9"}, // only proxies: the farthest
		{"127.0.0.1:40000", []string{"203.0.113.5, junk"}, front, "127.0.0.1"}, // no IP: the last trusted hop
		{"127.0.0.1:40000", []string{"203.0.113.5, junk, 10.1.2.3"}, front, "10.1.2.3"},
		{"[::ffff:127.0.0.1]:40000", []string{"203.0.113.5"}, front, "203.0.113.5"}, // a mapped peer is unmapped
		{"127.0.0.1:40000", nil, front, "127.0.0.1"},
	} {
		r := httptest.NewRequest("POST", "/api/console/login", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := session.ClientAddress(r, c.trusted); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q, trusted %v: %q, want %q", c.peer, c.xff, c.trusted, got, c.want)
		}
	}
}
