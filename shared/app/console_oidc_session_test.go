package app_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/console"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/session"
)

// consoleCall sends one console request with cookie to o's server.
func (o *oidcConsole) consoleCall(t *testing.T, method, path, cookie string, form url.Values) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, o.srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", o.srv.URL)
	}
	req.Header.Set("Cookie", console.CookieName+"="+cookie)
	resp, err := noRedirects(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// Issue 37: "changing a person's roles ends their sessions at once". A person's session keeps
// the claims their roles came from (here only a group, as Entra ID's groups claim) and maps
// them again on every request with the mapping in force (AUTOMATION_OIDC_GROUPS): after the
// mapping narrows the group from operate to read (the app restarted with the new setting,
// as an Azure app-settings change does), the same cookie's next action is refused (403,
// nothing done); after the group grants nothing, the next request finds no session (401) and
// the row is ended with reason "roles".
func TestConsoleSessionFollowsTheCurrentRoleMapping(t *testing.T) {
	data := t.TempDir()
	withGroups := func(grant string) map[string]string {
		return map[string]string{"AUTOMATION_DATA_DIR": data, "AUTOMATION_OIDC_GROUPS": grant}
	}
	o := newOIDCConsoleWith(t, automation.SystemClock{}, withGroups(`{"g-ops":{"roles":["operate"],"units":"bu-a"}}`))
	req, _ := http.NewRequest("POST", o.srv.URL+"/api/business-units", strings.NewReader(`{"id":"bu-a","name":"U","timeZone":"UTC"}`))
	req.Header.Set("Authorization", "Bearer boot")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("seed: %v %v", resp, err)
	}
	jar, _ := cookiejar.New(nil)
	c := noRedirects(jar)
	resp, err := c.Get(o.authorize(t, c, "grouped"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("grouped's sign-in: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	cookie := consoleCookie(jar, o.srv.URL)
	row, err := o.rt.Store.ConsoleSessionGet(context.Background(), session.Hash(cookie))
	if err != nil || row.Principal != "oidc:grouped" || !strings.Contains(row.Claims, "g-ops") {
		t.Fatalf("the session keeps the claims: %+v %v", row, err)
	}
	code, page := o.consoleCall(t, "GET", "/api/console/releases?businessUnitId=bu-a", cookie, nil)
	csrf := csrfRE.FindStringSubmatch(page)
	if code != 200 || csrf == nil {
		t.Fatalf("the operator's releases page: %d %s", code, page)
	}
	release := url.Values{"csrf": {csrf[1]}, "businessUnitId": {"bu-a"}, "perMinute": {"10"}}
	if code, page := o.consoleCall(t, "POST", "/api/console/releases", cookie, release); code == 401 || code == 403 {
		t.Fatalf("a release under the operate grant: %d %s", code, page)
	}

	// The group is narrowed to read: the same session may read, not act.
	o.rt.Close()
	o.srv.Close()
	o = newOIDCConsoleWith(t, automation.SystemClock{}, withGroups(`{"g-ops":{"roles":["read"],"units":"bu-a"}}`))
	if code, page := o.consoleCall(t, "GET", "/api/console/rows?businessUnitId=bu-a", cookie, nil); code != 200 {
		t.Fatalf("reading under the read grant: %d %s", code, page)
	}
	if code, page := o.consoleCall(t, "POST", "/api/console/releases", cookie, release); code != 403 || !strings.Contains(page, "operate") {
		t.Fatalf("a release under the read grant: %d %s, want 403", code, page)
	}

	// The group grants nothing any more: the session ends at the next request.
	o.rt.Close()
	o.srv.Close()
	o = newOIDCConsoleWith(t, automation.SystemClock{}, withGroups(""))
	if code, _ := o.consoleCall(t, "GET", "/api/console/rows?businessUnitId=bu-a", cookie, nil); code != 401 {
		t.Fatalf("with no grant: %d, want 401 (the sign-in form)", code)
	}
	if row, _ := o.rt.Store.ConsoleSessionGet(context.Background(), session.Hash(cookie)); row.EndedOn == nil || row.EndReason != session.ReasonRoles {
		t.Fatalf("the row with no grant: %+v", row)
	}
}

// Issue 37: failed OIDC callbacks (a forged state, no flow, an error from the provider) count
// against the per-address sign-in throttle like wrong tokens: a storm of 300 is slowed (at
// least 290 answered 429 with Retry-After, none exchanged), and once the delay has passed the
// person signs in through the real provider from the same address.
func TestOIDCCallbackStormIsSlowedAndTheRightSignInWorksAfter(t *testing.T) {
	clock := automation.NewManualClock(time.Now().UTC())
	o := newOIDCConsoleWith(t, clock, nil)
	slowed, retry := 0, 0
	for i := range 300 {
		path := "/api/console/oidc/callback?code=c" + strconv.Itoa(i) + "&state=forged"
		if i%3 == 1 {
			path = "/api/console/oidc/callback?error=access_denied&state=forged"
		}
		resp, err := http.Get(o.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case 429:
			slowed++
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
				t.Fatalf("429 without Retry-After: %v", resp.Header)
			} else {
				retry = s
			}
		case 401:
		default:
			t.Fatalf("callback %d: %d", i, resp.StatusCode)
		}
	}
	if slowed < 290 {
		t.Fatalf("%d of 300 failed callbacks slowed, want 290 or more", slowed)
	}
	if live, _ := o.sessionRows(t, "oidc:reader"); live != 0 {
		t.Fatalf("%d sessions after the storm", live)
	}
	clock.Advance(time.Duration(retry)*time.Second + time.Second)
	jar, _ := cookiejar.New(nil)
	c := noRedirects(jar)
	resp, err := c.Get(o.authorize(t, c, "reader"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || consoleCookie(jar, o.srv.URL) == "" || !regexp.MustCompile(`Signed in as oidc:reader`).Match(b) {
		t.Fatalf("the right sign-in after the delay: %d %s", resp.StatusCode, b)
	}
}
