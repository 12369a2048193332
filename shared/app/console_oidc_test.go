package app_test

import (
	"context"
	"database/sql"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/console"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/session"
)

// oidcConsole is a runtime whose console signs people in through the local OpenID provider
// (scripts/oidc-provider.mjs, client automation-console), served on 127.0.0.1.
type oidcConsole struct {
	rt     *app.Runtime
	srv    *httptest.Server
	issuer string
}

func newOIDCConsole(t *testing.T) *oidcConsole {
	return newOIDCConsoleWith(t, automation.SystemClock{}, nil)
}

// newOIDCConsoleWith is newOIDCConsole with a clock (ID tokens carry real times: a manual
// clock must start at the real now) and more settings (extra; AUTOMATION_DATA_DIR there
// reopens a store).
func newOIDCConsoleWith(t *testing.T, clock automation.Clock, extra map[string]string) *oidcConsole {
	t.Helper()
	issuer := os.Getenv("OIDC_PROVIDER_ISSUER")
	if issuer == "" {
		t.Skip("needs OIDC_PROVIDER_ISSUER: export \"$(scripts/oidc.sh start)\", or run make test")
	}
	// The redirect URI names the server's port, so the listener comes first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	env := map[string]string{"AUTOMATION_API_TOKEN": "boot",
		"AUTOMATION_OIDC_ISSUER": issuer, "AUTOMATION_OIDC_AUDIENCE": "api://automation",
		"AUTOMATION_OIDC_CONSOLE_CLIENT_ID": "automation-console", "AUTOMATION_OIDC_CONSOLE_CLIENT_SECRET": "console-secret",
		"AUTOMATION_OIDC_CONSOLE_REDIRECT_URL": base + "/api/console/oidc/callback"}
	maps.Copy(env, extra) // AUTOMATION_DATA_DIR there reopens a store
	rt := apptest.Open(t, env, time.Time{}, app.Options{Clock: clock})
	srv := httptest.NewUnstartedServer(rt.ListenerHandler(false))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &oidcConsole{rt: rt, srv: srv, issuer: issuer}
}

// sessionCount counts the console's session rows, live or ended.
func (o *oidcConsole) sessionRows(t *testing.T, principal string) (live, ended int) {
	t.Helper()
	db := o.rt.Store.(interface{ DB() *sql.DB }).DB()
	if err := db.QueryRow(`SELECT COUNT(*) FROM ConsoleSession WHERE Principal = ? AND EndedOn IS NULL`, principal).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM ConsoleSession WHERE Principal = ? AND EndedOn IS NOT NULL`, principal).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	return live, ended
}

var (
	formActionRE = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	hiddenRE     = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)
)

// authorize drives the provider as a browser would, from the console's "Sign in with" link
// to the provider's redirect back, and returns the callback address (with code and state)
// without following it; c's jar then holds the console's flow cookie.
func (o *oidcConsole) authorize(t *testing.T, c *http.Client, login string) string {
	t.Helper()
	next := o.srv.URL + "/api/console/oidc/start?next=%2Fapi%2Fconsole%2Frows"
	var body []byte
	for range 12 {
		var resp *http.Response
		var err error
		if body != nil {
			m := formActionRE.FindSubmatch(body)
			if m == nil {
				t.Fatalf("the provider's page has no form: %s", body)
			}
			form := url.Values{"login": {login}, "password": {"any"}}
			for _, h := range hiddenRE.FindAllSubmatch(body, -1) {
				form.Set(string(h[1]), string(h[2]))
			}
			resp, err = c.PostForm(string(m[1]), form)
		} else {
			resp, err = c.Get(next)
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 {
			u, _ := resp.Location()
			if strings.HasPrefix(u.String(), o.srv.URL+"/api/console/oidc/callback") {
				return u.String()
			}
			next, body = u.String(), nil
			_ = loc
			continue
		}
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", next, resp.StatusCode, b)
		}
		body = b
	}
	t.Fatal("the provider did not send the browser back")
	return ""
}

func noRedirects(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func consoleCookie(jar http.CookieJar, base string) string {
	u, _ := url.Parse(base + "/api/console/")
	for _, c := range jar.Cookies(u) {
		if c.Name == console.CookieName {
			return c.Value
		}
	}
	return ""
}

// Console sign-in through the real OpenID provider (authorization code with PKCE): a
// person who logs in on the provider's form comes back with a session of their own (its row
// names them), sees the pages their role allows within their units, is refused an action
// above their role (403, nothing done) and ends the session by logging out. A callback with
// another state, a replayed callback and a replayed code start no session (401).
func TestConsoleSignsInThroughTheOpenIDProvider(t *testing.T) {
	o := newOIDCConsole(t)

	for _, bu := range []string{"bu-a", "bu-b"} {
		req, _ := http.NewRequest("POST", o.srv.URL+"/api/business-units", strings.NewReader(`{"id":"`+bu+`","name":"U","timeZone":"UTC"}`))
		req.Header.Set("Authorization", "Bearer boot")
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
			t.Fatalf("seed %s: %v %v", bu, resp, err)
		}
	}

	// The sign-in page offers the provider.
	resp, err := http.Get(o.srv.URL + "/api/console/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), "Sign in with "+o.issuer) || !strings.Contains(string(b), `name="token"`) {
		t.Fatalf("sign-in page: %d %s", resp.StatusCode, b)
	}

	// A wrong state: the code is not exchanged, no session.
	jar, _ := cookiejar.New(nil)
	c := noRedirects(jar)
	cb := o.authorize(t, c, "reader")
	bad := regexp.MustCompile(`state=[^&]+`).ReplaceAllString(cb, "state=forged")
	if resp, err := c.Get(bad); err != nil || resp.StatusCode != 401 || consoleCookie(jar, o.srv.URL) != "" {
		t.Fatalf("wrong state: %v %v cookie %q", resp.StatusCode, err, consoleCookie(jar, o.srv.URL))
	}
	// The flow cookie was spent: the right state now is refused as well.
	if resp, err := c.Get(cb); err != nil || resp.StatusCode != 401 || consoleCookie(jar, o.srv.URL) != "" {
		t.Fatalf("callback after its flow ended: %v %v", resp.StatusCode, err)
	}
	if live, _ := o.sessionRows(t, "oidc:reader"); live != 0 {
		t.Fatalf("%d sessions after refused callbacks", live)
	}

	// The reader signs in: a session named oidc:reader, pages within bu-a, no operate action.
	jar, _ = cookiejar.New(nil)
	c = noRedirects(jar)
	cb = o.authorize(t, c, "reader")
	resp, err = c.Get(cb)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `url=/api/console/rows`) || consoleCookie(jar, o.srv.URL) == "" {
		t.Fatalf("callback: %d %s", resp.StatusCode, b)
	}
	if live, _ := o.sessionRows(t, "oidc:reader"); live != 1 {
		t.Fatalf("%d live sessions of oidc:reader, want 1", live)
	}
	// Replaying the callback (the code and state again) starts nothing more.
	jar2, _ := cookiejar.New(nil)
	if resp, err := noRedirects(jar2).Get(cb); err != nil || resp.StatusCode != 401 || consoleCookie(jar2, o.srv.URL) != "" {
		t.Fatalf("replayed callback: %v %v", resp.StatusCode, err)
	}
	if live, _ := o.sessionRows(t, "oidc:reader"); live != 1 {
		t.Fatalf("%d live sessions of oidc:reader after a replay, want 1", live)
	}
	get := func(path string) (int, string) {
		resp, err := c.Get(o.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	code, page := get("/api/console/rows")
	if code != 200 || !strings.Contains(page, "oidc:reader") {
		t.Fatalf("reader's rows page: %d %s", code, page)
	}
	// The person's units, not the bootstrap admin's: bu-a's rows, and bu-b as if unknown.
	if code, page := get("/api/console/rows?businessUnitId=bu-a"); code != 200 {
		t.Fatalf("reader's bu-a rows: %d %s", code, page)
	}
	if code, page := get("/api/console/rows?businessUnitId=bu-b"); code != 404 {
		t.Fatalf("reader's bu-b rows: %d %s, want 404 (outside the person's units)", code, page)
	}
	csrf := csrfRE.FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no CSRF token on %s", page)
	}
	post := func(path string, form url.Values) (int, string) {
		req, _ := http.NewRequest("POST", o.srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", o.srv.URL)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, page := post("/api/console/releases", url.Values{"csrf": {csrf[1]}, "businessUnitId": {"bu-a"}}); code != 403 || !strings.Contains(page, "operate") {
		t.Fatalf("reader releases: %d %s", code, page)
	}
	// The console's admin forms (raise a budget, pause a campaign, save the registry or a
	// template) need the admin role, as the APIs behind them do: a reader's post is 403.
	for _, path := range []string{"/api/console/budgets", "/api/console/campaign-status", "/api/console/registry", "/api/console/templates"} {
		if code, page := post(path, url.Values{"csrf": {csrf[1]}, "businessUnitId": {"bu-a"}}); code != 403 || !strings.Contains(page, "admin") {
			t.Fatalf("reader posts %s: %d %s", path, code, page)
		}
	}
	// Creating a campaign or a budget from the console (action=SAVE, action=create on the same
	// paths) is as admin-only as the PUTs behind them.
	for path, action := range map[string]string{"/api/console/campaign-status": "SAVE", "/api/console/budgets": "create"} {
		v := url.Values{"csrf": {csrf[1]}, "action": {action}, "businessUnitId": {"bu-a"}, "campaignId": {"c1"}, "name": {"n"}, "maxCost": {"1"}, "currency": {"AUD"}}
		if code, page := post(path, v); code != 403 || !strings.Contains(page, "admin") {
			t.Fatalf("reader %s %s: %d %s", action, path, code, page)
		}
	}
	// Logout ends the row; the cookie replayed opens nothing.
	cookie := consoleCookie(jar, o.srv.URL)
	if code, _ := post("/api/console/logout", url.Values{"csrf": {csrf[1]}}); code != 303 {
		t.Fatalf("logout: %d", code)
	}
	if s, err := o.rt.Store.ConsoleSessionGet(context.Background(), session.Hash(cookie)); err != nil || s.EndedOn == nil || s.EndReason != "logout" || s.Principal != "oidc:reader" {
		t.Fatalf("session after logout: %+v %v", s, err)
	}
	req, _ := http.NewRequest("GET", o.srv.URL+"/api/console/rows", nil)
	req.Header.Set("Cookie", console.CookieName+"="+cookie)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("replayed cookie after logout: %v %v", resp.StatusCode, err)
	}
}
