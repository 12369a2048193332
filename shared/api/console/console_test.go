package console_test

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/console"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs c in with the token form and returns the CSRF token of the overview page.
func (e *env) signIn(t *testing.T, c *http.Client) string {
	t.Helper()
	code, _ := e.form(t, c, "/api/console/login", url.Values{"token": {token}, "next": {"/api/console/"}})
	if code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", code)
	}
	code, body := e.get(t, c, "/api/console/")
	m := csrfRE.FindStringSubmatch(body)
	if code != 200 || m == nil {
		t.Fatalf("overview after sign-in: %d %.300s", code, body)
	}
	return m[1]
}

// TestSignInSessionAndExpiry: an anonymous browser gets the sign-in form with 401; a wrong
// token signs nothing in; the right one sets an HttpOnly, SameSite=Strict cookie scoped to the
// console (Secure behind TLS), which ends with its lifetime on the runtime's clock; sign-out
// ends it at once.
func TestSignInSessionAndExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := client(t)
	code, body := e.get(t, c, "/api/console/rows")
	if code != 401 || !strings.Contains(body, `name="token"`) || !strings.Contains(body, `value="/api/console/rows"`) {
		t.Fatalf("anonymous: %d %.400s", code, body)
	}
	if code, body = e.form(t, c, "/api/console/login", url.Values{"token": {"not-" + token}}); code != 401 || !strings.Contains(body, "not the API token") {
		t.Fatalf("wrong token: %d %.300s", code, body)
	}
	u, _ := url.Parse(e.srv.URL + "/api/console/")
	if len(c.Jar.Cookies(u)) != 0 {
		t.Fatal("a wrong token set a cookie")
	}
	req, _ := http.NewRequest("POST", e.url("/api/console/login"), strings.NewReader(url.Values{"token": {token}, "next": {"//evil.example/x"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-Proto", "https")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	ck := res.Cookies()
	if res.StatusCode != 303 || res.Header.Get("Location") != "/api/console/" || len(ck) != 1 || ck[0].Name != console.CookieName ||
		!ck[0].HttpOnly || !ck[0].Secure || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/api/console" || strings.Contains(ck[0].Value, token) {
		t.Fatalf("sign-in answer %d %q, cookies %+v", res.StatusCode, res.Header.Get("Location"), ck)
	}
	csrf := e.signIn(t, c)
	if code, body = e.get(t, c, "/api/console/rows?businessUnitId=bu-syd"); code != 200 || !strings.Contains(body, fmt.Sprintf("/api/console/rows/%d", e.held.ID)) {
		t.Fatalf("rows after sign-in: %d %.300s", code, body)
	}
	// The lifetime is counted on the runtime's clock.
	e.clock.Set(now.Add(console.DefaultSessionLifetime + time.Minute))
	if code, _ = e.get(t, c, "/api/console/"); code != 401 {
		t.Fatalf("after the session's lifetime: %d", code)
	}
	e.clock.Set(now)
	csrf = e.signIn(t, c)
	if code, _ = e.form(t, c, "/api/console/logout", url.Values{"csrf": {csrf}}); code != 303 {
		t.Fatalf("sign out: %d", code)
	}
	if code, _ = e.get(t, c, "/api/console/"); code != 401 {
		t.Fatalf("after sign-out: %d", code)
	}
}

// TestPostsNeedTheSessionsCSRFToken: an action posted without the session's CSRF token, with
// another session's, or marked cross-site is refused with 403 and changes nothing; the same
// form with the token runs.
func TestPostsNeedTheSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := client(t)
	csrf := e.signIn(t, c)
	other := e.signIn(t, client(t))
	path := fmt.Sprintf("/api/console/rows/%d/run-now", e.wait.ID)
	form := func(tok string) url.Values {
		return url.Values{"csrf": {tok}, "version": {fmt.Sprint(e.wait.Version)}, "operator": {"ops.jane"}, "reason": {"asked today"}}
	}
	for _, b := range []struct {
		name    string
		v       url.Values
		headers []string
	}{
		{"no token", form(""), nil},
		{"another session's token", form(other), nil},
		{"cross-site fetch", form(csrf), []string{"Sec-Fetch-Site", "cross-site"}},
		{"another origin", form(csrf), []string{"Origin", "https://evil.example"}},
	} {
		code, body := e.form(t, c, path, b.v, b.headers...)
		if code != 403 || !strings.Contains(body, "did not come from this console") {
			t.Errorf("%s: %d %.300s", b.name, code, body)
		}
		if r := e.Row(t, e.wait.ID); r.Version != e.wait.Version {
			t.Errorf("%s changed the row", b.name)
		}
	}
	code, body := e.form(t, c, path, form(csrf), "Origin", e.srv.URL)
	if code != 200 || !strings.Contains(body, "RunNow done") {
		t.Fatalf("with the token: %d %.500s", code, body)
	}
	if r := e.Row(t, e.wait.ID); !r.ScheduledOn.Equal(now) || r.Version != e.wait.Version+1 {
		t.Fatalf("run now: %+v", r)
	}
	audit, _ := e.rt.Store.SupportAuditList(context.Background(), []int64{e.wait.ID}, 10)
	if len(audit) != 1 || audit[0].Action != store.SupportRunNow || audit[0].Operator != "ops.jane" || audit[0].Reason != "asked today" {
		t.Fatalf("audit %+v", audit)
	}
}

// TestActionsAnswerLikeTheAPI: a stale version is a 412 page that says what changed and
// offers the current version; a state that forbids the action is a 409 page; no version is
// 428; a row of another business unit is 404 like an unknown one (the bearer header with a
// narrowed X-Automation-Business-Units).
func TestActionsAnswerLikeTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := client(t)
	csrf := e.signIn(t, c)
	act := func(id int64, action string, version string) (int, string) {
		return e.form(t, c, fmt.Sprintf("/api/console/rows/%d/%s", id, action),
			url.Values{"csrf": {csrf}, "version": {version}, "operator": {"ops.jane"}, "reason": {"smtp fixed"}})
	}
	code, body := act(e.held.ID, "release", fmt.Sprint(e.held.Version-1))
	if code != 412 || !strings.Contains(body, "The row changed since you loaded it") ||
		!strings.Contains(body, fmt.Sprintf(`name="version" value="%d"`, e.held.Version)) {
		t.Fatalf("stale: %d %.800s", code, body)
	}
	if code, body = act(e.wait.ID, "release", fmt.Sprint(e.wait.Version)); code != 409 || !strings.Contains(body, "not on support hold") {
		t.Fatalf("release of a row not on hold: %d %.300s", code, body)
	}
	if code, _ = act(e.wait.ID, "run-now", ""); code != 428 {
		t.Fatalf("no version: %d", code)
	}
	if code, _ = act(e.held.ID, "frobnicate", fmt.Sprint(e.held.Version)); code != 404 {
		t.Fatalf("unknown action: %d", code)
	}
	audit, _ := e.rt.Store.SupportAuditList(context.Background(), []int64{e.held.ID, e.wait.ID}, 10)
	if len(audit) != 0 {
		t.Fatalf("refused actions wrote audit records: %+v", audit)
	}
	bearer := []string{"Authorization", "Bearer " + token, "X-Automation-Business-Units", "bu-nyc"}
	unknown, _ := e.get(t, c, "/api/console/rows/999999", bearer...)
	if code, _ = e.get(t, c, fmt.Sprintf("/api/console/rows/%d", e.held.ID), bearer...); code != 404 || unknown != 404 {
		t.Fatalf("another unit's row: %d (unknown row %d)", code, unknown)
	}
	if code, _ = e.form(t, http.DefaultClient, fmt.Sprintf("/api/console/rows/%d/release", e.held.ID),
		url.Values{"version": {fmt.Sprint(e.held.Version)}, "operator": {"x"}, "reason": {"y"}}, bearer...); code != 404 {
		t.Fatalf("another unit's row, released by bearer: %d", code)
	}
	if code, _ = e.get(t, http.DefaultClient, "/api/console/", "Authorization", "Bearer wrong"); code != 401 {
		t.Fatalf("wrong bearer: %d", code)
	}
}

// TestPagesRender: every page answers 200 with its content for a signed-in caller; the
// overview's chart counts the fixture's deliveries; /console redirects to the console.
func TestPagesRender(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := client(t)
	e.signIn(t, c)
	for path, want := range map[string]string{
		"/api/console/?hours=4":                        fmt.Sprintf("Sent: %d</li><li class=\"failed\">Failed: %d</li><li class=\"unknown\">UNKNOWN: %d", e.sent, e.failed, e.unknown),
		"/api/console/rows?onHold=true":                fmt.Sprintf(`/api/console/rows/%d"`, e.held.ID),
		fmt.Sprintf("/api/console/rows/%d", e.held.ID): "smtp 550 mailbox unavailable for a***",
		"/api/console/releases":                        `id="release-form"`,
		"/api/console/unknown?businessUnitId=bu-syd":   "dlv_chart_011",
		"/api/console/reports":                         "Subscriptions",
		"/api/console/static/console.css":              "--accent",
	} {
		code, body := e.get(t, c, path)
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %q in %.600s", path, code, want, body)
		}
	}
	if code, _ := e.get(t, c, "/api/console/nothing-here"); code != 404 {
		t.Errorf("unknown page: %d", code)
	}
	res, err := client(t).Get(e.url("/console/rows"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/api/console/rows" {
		t.Fatalf("/console: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestConsoleNeedsAToken: the Functions app's console without AUTOMATION_API_TOKEN answers
// 503 and never serves a page (serve sets app.Options.ConsoleWithoutToken).
func TestConsoleNeedsAToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"AUTOMATION_API_TOKEN": ""})
	for _, p := range []string{"/api/console/", fmt.Sprintf("/api/console/rows/%d", e.held.ID)} {
		if code, body := e.get(t, client(t), p); code != 503 || !strings.Contains(body, "AUTOMATION_API_TOKEN") {
			t.Errorf("%s: %d %.200s", p, code, body)
		}
	}
}

// TestAPageAddedByAnotherPackage: a console.Page gets the layout, its navigation entry, the
// sign-in and the CSRF check of the built-in pages; its forms carry the field it is handed.
func TestAPageAddedByAnotherPackage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	posted := 0
	r := funchost.NewRouter(nil)
	api := httpapi.New(httpapi.Options{Token: token, Clock: e.clock})
	console.Register(r, api, console.Deps{Support: e.rt.Support}, console.Options{Pages: []console.Page{{
		Path: "budgets", Title: "Budgets",
		Render: func(r *http.Request, pc console.PageCall) (template.HTML, error) {
			return template.HTML(`<form method="post" action="/api/console/budgets">`) + pc.CSRFField + `<button id="b">Go</button></form>`, nil
		},
		Post: func(r *http.Request, pc console.PageCall) (template.HTML, error) {
			posted++
			return template.HTML("<p id=done>posted " + template.HTMLEscapeString(r.PostForm.Get("x")) + "</p>"), nil
		},
	}}})
	srv := httptest.NewServer(r)
	defer srv.Close()
	c := client(t)
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		return do(t, c, req)
	}
	post := func(v url.Values) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/console/budgets", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return do(t, c, req)
	}
	if code, _ := get("/api/console/budgets"); code != 401 {
		t.Fatalf("anonymous: %d", code)
	}
	if code, _ := post(url.Values{"token": {token}}); code != 401 {
		t.Fatalf("anonymous post: %d", code)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/api/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if code, _ := do(t, c, req); code != 303 {
		t.Fatalf("sign in: %d", code)
	}
	code, body := get("/api/console/budgets")
	m := csrfRE.FindStringSubmatch(body)
	if code != 200 || m == nil || !strings.Contains(body, `href="/api/console/budgets" aria-current="page">Budgets`) || !strings.Contains(body, `id="b"`) {
		t.Fatalf("page: %d %.2000s", code, body)
	}
	if code, _ := post(url.Values{"x": {"1"}}); code != 403 || posted != 0 {
		t.Fatalf("post without the CSRF field: %d (posted %d)", code, posted)
	}
	if code, body := post(url.Values{"x": {"<1>"}, "csrf": {m[1]}}); code != 200 || posted != 1 || !strings.Contains(body, "posted &lt;1&gt;") {
		t.Fatalf("post: %d %d %.300s", code, posted, body)
	}
}
