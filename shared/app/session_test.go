package app_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/console"
	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/session"
)

// consoleEnv is a runtime served with token "boot" and a manual clock.
type consoleEnv struct {
	rt    *app.Runtime
	h     http.Handler
	clock *automation.ManualClock
}

func newConsoleEnv(t *testing.T) *consoleEnv {
	t.Helper()
	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": "boot"}, time.Time{}, app.Options{Clock: clock})
	return &consoleEnv{rt: rt, h: rt.ListenerHandler(false), clock: clock}
}

// createUnits creates each business unit through POST /api/business-units with the
// bootstrap token, failing t unless it answers 201.
func (e *consoleEnv) createUnits(t *testing.T, ids ...string) {
	t.Helper()
	seedUnits(t, e.h, "boot", ids...)
}

// ingestKeys creates each business unit (createUnits) and an API key of role ingest scoped
// to it, named namePrefix+unit, and returns the keys' secrets by unit.
func (e *consoleEnv) ingestKeys(t *testing.T, namePrefix string, units ...string) map[string]string {
	t.Helper()
	e.createUnits(t, units...)
	keys := map[string]string{}
	for _, bu := range units {
		c, err := e.rt.Keys.Create(context.Background(), apikey.CreateParams{Name: namePrefix + bu, Roles: []httpapi.Role{httpapi.RoleIngest}, Units: bu})
		if err != nil {
			t.Fatal(err)
		}
		keys[bu] = c.Secret
	}
	return keys
}

// send makes one console request from addr with cookie (may be "") and a form body.
func (e *consoleEnv) send(method, path, addr, cookie string, form url.Values) *httptest.ResponseRecorder {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, path, body)
	r.RemoteAddr = addr + ":40000"
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		r.Header.Set("Cookie", console.CookieName+"="+cookie)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, r)
	return rec
}

func (e *consoleEnv) signIn(t *testing.T, addr, token string) (string, *httptest.ResponseRecorder) {
	t.Helper()
	rec := e.send("POST", "/api/console/login", addr, "", url.Values{"token": {token}, "next": {"/api/console/"}})
	for _, c := range rec.Result().Cookies() {
		if c.Name == console.CookieName && c.Value != "" {
			return c.Value, rec
		}
	}
	return "", rec
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// Issue 37: logging out left the cookie valid for 8 hours, actions included. Now logout
// ends the session's row, and the same cookie replayed after it opens nothing: pages answer
// the sign-in form (401) and a form post with the session's CSRF token does nothing.
func TestReplayedLogoutCookieIsRefused(t *testing.T) {
	e := newConsoleEnv(t)
	cookie, rec := e.signIn(t, "203.0.113.7", "boot")
	if cookie == "" || rec.Code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", rec.Code, rec.Body)
	}
	page := e.send("GET", "/api/console/", "203.0.113.7", cookie, nil)
	m := csrfRE.FindStringSubmatch(page.Body.String())
	if page.Code != 200 || m == nil {
		t.Fatalf("signed-in page: %d", page.Code)
	}
	csrf := m[1]
	if rec := e.send("POST", "/api/console/logout", "203.0.113.7", cookie, url.Values{"csrf": {csrf}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("logout: %d %s", rec.Code, rec.Body)
	}
	if s, err := e.rt.Store.ConsoleSessionGet(context.Background(), session.Hash(cookie)); err != nil || s.EndedOn == nil || s.EndReason != "logout" {
		t.Fatalf("the session row after logout: %+v %v", s, err)
	}
	if rec := e.send("GET", "/api/console/", "203.0.113.7", cookie, nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("replayed cookie, page: %d", rec.Code)
	}
	rec = e.send("POST", "/api/console/releases", "203.0.113.7", cookie, url.Values{"csrf": {csrf}, "businessUnitId": {"bu-a"}, "operator": {"x"}, "reason": {"r"}})
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "nothing was done") {
		t.Fatalf("replayed cookie, action: %d %s", rec.Code, rec.Body)
	}
}

// A session ends after DefaultIdle without a request, and DefaultSessionLifetime after its
// sign-in however busy it is.
func TestSessionIdleAndAbsoluteLifetime(t *testing.T) {
	e := newConsoleEnv(t)
	idle, _ := e.signIn(t, "203.0.113.8", "boot")
	busy, _ := e.signIn(t, "203.0.113.8", "boot")
	e.clock.Advance(session.DefaultIdle - time.Minute)
	if rec := e.send("GET", "/api/console/", "203.0.113.8", idle, nil); rec.Code != 200 {
		t.Fatalf("before the idle timeout: %d", rec.Code)
	}
	e.clock.Advance(session.DefaultIdle + time.Second)
	if rec := e.send("GET", "/api/console/", "203.0.113.8", idle, nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("after the idle timeout: %d", rec.Code)
	}
	busy2, _ := e.signIn(t, "203.0.113.8", "boot")
	_ = busy
	start := e.clock.Now()
	for e.clock.Now().Sub(start) < console.DefaultSessionLifetime-session.DefaultIdle/2 {
		if rec := e.send("GET", "/api/console/", "203.0.113.8", busy2, nil); rec.Code != 200 {
			t.Fatalf("a busy session at %s: %d", e.clock.Now().Sub(start), rec.Code)
		}
		e.clock.Advance(session.DefaultIdle / 2)
	}
	e.clock.Advance(session.DefaultIdle/2 + time.Second)
	if rec := e.send("GET", "/api/console/", "203.0.113.8", busy2, nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("after the absolute lifetime: %d", rec.Code)
	}
}

// Issue 37: console sign-in had no rate limit (300 wrong tokens in 4 s, then the right one
// worked). Now a storm of wrong tokens from one address is answered 429 with Retry-After
// after the first few, the right token too while the delay lasts; another address is not
// slowed; and once the delay has passed the right token signs in.
func TestSignInStormIsSlowedAndTheRightTokenWorksAfter(t *testing.T) {
	e := newConsoleEnv(t)
	const storm = "198.51.100.9"
	limited := 0
	for i := range 300 {
		_, rec := e.signIn(t, storm, "wrong-"+strconv.Itoa(i))
		switch rec.Code {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			limited++
			if rec.Header().Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		default:
			t.Fatalf("wrong token %d: %d", i, rec.Code)
		}
		e.clock.Advance(4 * time.Second / 300)
	}
	if limited < 290 {
		t.Fatalf("only %d of 300 wrong sign-ins in 4 s were slowed", limited)
	}
	cookie, rec := e.signIn(t, storm, "boot")
	if rec.Code != http.StatusTooManyRequests || cookie != "" {
		t.Fatalf("the right token during the delay: %d", rec.Code)
	}
	if c, rec := e.signIn(t, "198.51.100.10", "boot"); c == "" {
		t.Fatalf("another address was slowed: %d", rec.Code)
	}
	wait, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
	e.clock.Advance(time.Duration(wait) * time.Second)
	if c, rec := e.signIn(t, storm, "boot"); c == "" || rec.Code != http.StatusSeeOther {
		t.Fatalf("the right token after Retry-After: %d %s", rec.Code, rec.Body)
	}
	// The delay grew during the storm: the last wait is longer than the first refill.
	if wait <= 2 {
		t.Errorf("Retry-After %d s after a storm of 300: the delay did not grow", wait)
	}
}

// The session table stays bounded: a sign-in deletes the sessions past their absolute
// lifetime.
func TestSignInPurgesEndedSessions(t *testing.T) {
	e := newConsoleEnv(t)
	for range 3 {
		e.signIn(t, "203.0.113.9", "boot")
	}
	e.clock.Advance(console.DefaultSessionLifetime + time.Minute)
	if c, _ := e.signIn(t, "203.0.113.9", "boot"); c == "" {
		t.Fatal("sign-in failed")
	}
	var n int
	if err := e.rt.Store.(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT COUNT(*) FROM ConsoleSession`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d sessions after the purge, want 1: %v", n, err)
	}
}

// The sign-in throttle is per address, and a success used to forget the address: whoever
// holds any credential that signs in (a support desk's read key) could reset the count
// between guesses of another (the bootstrap token, an admin's key), four wrong guesses and
// one right sign-in at a time, and was never slowed. A success no longer forgives the
// address's failures: a storm interleaved with right sign-ins is slowed like any storm, and
// the right credential still works once the delay has passed.
func TestSignInSuccessDoesNotResetTheThrottle(t *testing.T) {
	e := newConsoleEnv(t)
	own, err := e.rt.Keys.Create(context.Background(), apikey.CreateParams{Name: "support-desk",
		Roles: []httpapi.Role{httpapi.RoleRead}, Units: "*", Operator: "test"})
	if err != nil {
		t.Fatal(err)
	}
	const addr = "198.51.100.21"
	guesses, limited := 0, 0
	for i := range 300 {
		cred := "guess-" + strconv.Itoa(i)
		if i%5 == 4 {
			cred = own.Secret // the attacker's own key: a right sign-in
		} else {
			guesses++
		}
		_, rec := e.signIn(t, addr, cred)
		switch rec.Code {
		case http.StatusUnauthorized, http.StatusSeeOther:
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("sign-in %d: %d", i, rec.Code)
		}
		e.clock.Advance(4 * time.Second / 300)
	}
	if limited < 280 {
		t.Fatalf("only %d of 300 sign-ins (%d wrong guesses, each fifth a right key) in 4 s were slowed", limited, guesses)
	}
	_, rec := e.signIn(t, addr, own.Secret)
	wait, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
	if rec.Code != http.StatusTooManyRequests || wait < 1 {
		t.Fatalf("the right key during the delay: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	e.clock.Advance(time.Duration(wait) * time.Second)
	if c, rec := e.signIn(t, addr, own.Secret); c == "" || rec.Code != http.StatusSeeOther {
		t.Fatalf("the right key after Retry-After: %d %s", rec.Code, rec.Body)
	}
}

// The sign-in throttle once trusted X-Forwarded-For from any loopback peer, so on a local
// serve (whose peers are all the loopback) a storm that named a fresh address in every
// request was never slowed. Forwarding headers are now believed only from the proxies
// AUTOMATION_TRUSTED_PROXIES names: none by default, and the forged storm is slowed. With
// the loopback trusted (what Bicep sets: the Functions host), the header names the client,
// so the storm's addresses are apart and another client behind the same host is not
// slowed by one address's storm.
func TestForgedForwardedForStormIsSlowedUnlessTheProxyIsTrusted(t *testing.T) {
	storm := func(e *consoleEnv, forged func(i int) string) (limited int) {
		for i := range 300 {
			r := httptest.NewRequest("POST", "/api/console/login", strings.NewReader(url.Values{"token": {"wrong-" + strconv.Itoa(i)}}.Encode()))
			r.RemoteAddr = "127.0.0.1:40000"
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("X-Forwarded-For", forged(i))
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, r)
			if rec.Code == http.StatusTooManyRequests {
				limited++
			}
			e.clock.Advance(4 * time.Second / 300)
		}
		return limited
	}
	fresh := func(i int) string {
		return "203.0.113." + strconv.Itoa(i%250+1) + ", 198.51.100." + strconv.Itoa(i%200+1)
	}
	if n := storm(newConsoleEnv(t), fresh); n < 290 {
		t.Fatalf("local serve, no trusted proxy: only %d of 300 wrong sign-ins with forged X-Forwarded-For were slowed", n)
	}

	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": "boot", "AUTOMATION_TRUSTED_PROXIES": "127.0.0.1,::1"}, time.Time{}, app.Options{Clock: clock})
	behind := &consoleEnv{rt: rt, h: rt.ListenerHandler(false), clock: clock}
	if n := storm(behind, func(int) string { return "198.51.100.9:5000" }); n < 290 {
		t.Fatalf("behind a trusted proxy, one client's storm: only %d of 300 slowed", n)
	}
	r := httptest.NewRequest("POST", "/api/console/login", strings.NewReader(url.Values{"token": {"boot"}, "next": {"/api/console/"}}.Encode()))
	r.RemoteAddr = "127.0.0.1:40001"
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("X-Forwarded-For", "198.51.100.10:5001")
	rec := httptest.NewRecorder()
	behind.h.ServeHTTP(rec, r)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("another client behind the trusted proxy: %d %s", rec.Code, rec.Body)
	}
}
