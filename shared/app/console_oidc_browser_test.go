package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/automation-platform/automation/shared/browsertest"
)

// TestConsoleBrowserSignsInThroughTheOpenIDProvider drives headless Chromium through the
// console's OIDC sign-in: the console's sign-in page offers the local provider, the browser
// goes there, a person logs in on the provider's own form (and confirms the client when it
// asks), comes back to the console signed in as that person (a live session row in their
// name), sees a page, and signs out (the row ends). It skips without Chromium (`make
// chromium`) or without the provider (OIDC_PROVIDER_ISSUER; `make test` starts it).
func TestConsoleBrowserSignsInThroughTheOpenIDProvider(t *testing.T) {
	path := browsertest.Chromium(t)
	o := newOIDCConsole(t)
	ctx := browsertest.Start(t, path, chromedp.WindowSize(1280, 1000))
	until, visible, click := browsertest.Until, browsertest.Visible, browsertest.Click
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			loc, _ := chromedp.Run(fctx, chromedp.Location())
			t.Fatalf("%s: %v (the page: %s)", step, err, loc)
		}
	}
	text := func(sel string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		s, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	back := fmt.Sprintf(`location.href.startsWith(%q) && document.readyState === "complete"`, o.srv.URL+"/api/console/")

	run("sign-in page", chromedp.Navigate(o.srv.URL+"/console"), visible("#oidc-sign-in"), visible("#token"))
	if got := text("#oidc-sign-in"); !strings.Contains(got, "Sign in with "+o.issuer) {
		t.Fatalf("sign-in link %q", got)
	}
	run("to the provider", click("#oidc-sign-in"), visible(`input[name="login"]`))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasPrefix(loc, o.issuer+"/") {
		t.Fatalf("the provider's login form is at %s, not at the issuer %s", loc, o.issuer)
	}
	run("log in at the provider", chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), "operator"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "any password"), click(`button[type="submit"]`),
		until("neither back nor a consent form", `(`+back+`) || !!document.querySelector('input[name="prompt"][value="consent"]')`))
	// oidc-provider asks a native client's user to confirm the client: confirm it.
	if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('input[name="prompt"][value="consent"]')`)); ok {
		run("confirm the client", click(`button[type="submit"]`))
	}
	run("back signed in", until("not back at the console", back), visible("#signed-in-as"), visible("nav"))
	if got := text("#signed-in-as"); !strings.Contains(got, "oidc:operator") {
		t.Fatalf("signed in as %q, want oidc:operator", got)
	}
	if live, _ := o.sessionRows(t, "oidc:operator"); live != 1 {
		t.Fatalf("%d live sessions of oidc:operator, want 1", live)
	}
	run("a page", click(`nav a[href="/api/console/rows"]`), until("no rows page", `location.pathname === "/api/console/rows"`), visible("#search"))
	run("sign out", click(`form.signout button`), visible("#token"))
	if live, ended := o.sessionRows(t, "oidc:operator"); live != 0 || ended != 1 {
		t.Fatalf("after sign-out: %d live, %d ended sessions of oidc:operator, want 0 and 1", live, ended)
	}
	run("signed out", chromedp.Navigate(o.srv.URL+"/api/console/rows"), visible("#token"))
}
