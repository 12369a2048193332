package console_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// updateDocs rewrites the screenshots of every console page the documentation shows
// (docs/img/console-*.png): make screenshots, or
// go test ./shared/api/console -run TestConsoleInABrowser -count=1 -args -update-docs
var updateDocs = flag.Bool("update-docs", false, "rewrite docs/img/console-*.png, one per console page")

// chromium finds the browser the tests drive: Debian's chromium (`make chromium` installs it).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifacts is where the screenshots go: $AUTOMATION_ARTIFACTS/console-browser when set
// (CI keeps it), else the test's artifact directory (kept with go test -artifacts).
func artifacts(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("AUTOMATION_ARTIFACTS"); d != "" {
		dir := filepath.Join(d, "console-browser")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.ArtifactDir()
}

// TestConsoleInABrowser drives the console in headless Chromium as an operator would: sign in
// with the token, search the rows of a business unit, open the held row's detail (timeline,
// explain, diagnostics), release it from a page whose version went stale (the clear 412
// message, nothing done), release it again from the refreshed page (If-Match with the current
// version), and run a waiting row now. Each step's effect is checked in the store, and each
// page is saved as a screenshot.
func TestConsoleInABrowser(t *testing.T) {
	path := chromium()
	if path == "" {
		t.Skip("SKIP: no Chromium on PATH (chromium, chromium-browser, google-chrome): `make chromium` installs Debian's; the console's browser tests need it")
	}
	e := newEnv(t, nil)
	out := artifacts(t)
	t.Logf("screenshots in %s", out)

	br := newBrowser(t, path, out)
	ctx := br.ctx
	visible, loaded, click, shot, text, choose, accessible, run := br.visible, br.loaded, br.click, br.shot, br.text, br.choose, br.accessible, br.run

	e.historyFixture(t)
	// Sign in: /console goes to the console, which asks for the token.
	run("sign in", chromedp.Navigate(e.url("/console")), visible("#token"),
		shot("01-sign-in"), accessible("sign in"),
		chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Submit(chromedp.CSS("#token")),
		visible("#m-due"),
		chromedp.Navigate(e.url("/api/console/?hours=4")), visible("svg"),
		shot("02-overview", "../../../docs/img/console-overview.png"), accessible("overview"))
	if got := text("#m-holds"); strings.TrimSpace(got) != "1" {
		t.Fatalf("overview holds %q, want 1", got)
	}

	// Search: the rows of bu-syd, then the held row's detail.
	run("open rows", click(`nav a[href="/api/console/rows"]`), visible("#search"), accessible("rows"))
	run("search", choose("#bu", "bu-syd"), click("#search"))
	run("search results", loaded("businessUnitId=bu-syd"), visible("#rows"))
	run("search screenshot", shot("03-search"))
	if rows := text("#rows"); !strings.Contains(rows, "on hold") || strings.Contains(rows, "bu-nyc") {
		t.Fatalf("search results: %q", rows)
	}
	detail := fmt.Sprintf(`a[href="/api/console/rows/%d"]`, e.held.ID)
	run("detail", click(detail), visible("#timeline"),
		shot("04-row-detail", "../../../docs/img/console-row.png"), accessible("row"))
	// The scheduled card breaks between words, never inside one (issue 35: "Sydne y").
	for _, width := range []int64{1280, 390} {
		var broken []string
		run(fmt.Sprintf("scheduled card at %d px", width), chromedp.EmulateViewport(width, 1000), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			broken, err = chromedp.Evaluate[[]string](wordsBroken("#row-scheduled"))(ctx, tg)
			return err
		}))
		if len(broken) > 0 {
			t.Errorf("at %d px the scheduled card breaks inside %q", width, broken)
		}
	}
	run("back to 1280", chromedp.EmulateViewport(1280, 1000))
	if tl := text("#timeline"); !strings.Contains(tl, "Created") || !strings.Contains(tl, "Attempt 1") || !strings.Contains(tl, "HandlerError") {
		t.Fatalf("timeline: %q", tl)
	}
	if d := text("#diagnostics"); !strings.Contains(d, "smtp 550") || strings.Contains(d, "amelia.nguyen@") {
		t.Fatalf("diagnostics (masked): %q", d)
	}
	if x := text("#explain"); x == "" {
		t.Fatal("no explain sentences")
	}

	// Someone else changes the row while the page is open: the release is refused, clearly.
	if _, err := e.db.Exec(`UPDATE AutomationScheduler SET Version = Version + 1 WHERE Id = ?`, e.held.ID); err != nil {
		t.Fatal(err)
	}
	run("stale release", chromedp.SendKeys(chromedp.CSS("#op-release"), "ops.browser"),
		chromedp.SendKeys(chromedp.CSS("#reason-release"), "provider fixed"), click("#do-release"),
		visible("#problem"), shot("05-stale-version"))
	if p := text("#problem"); !strings.Contains(p, "The row changed since you loaded it") || !strings.Contains(p, "Nothing was done") {
		t.Fatalf("stale message: %q", p)
	}
	if r := e.Row(t, e.held.ID); !r.IsOnSupportHold {
		t.Fatal("a stale release changed the row")
	}
	// The refreshed page carries the current version: the release goes through.
	run("release", chromedp.SendKeys(chromedp.CSS("#op-release"), "ops.browser"),
		chromedp.SendKeys(chromedp.CSS("#reason-release"), "provider fixed"), click("#do-release"),
		visible("#notice"), shot("06-released"))
	if n := text("#notice"); !strings.Contains(n, "Release done") {
		t.Fatalf("release notice: %q", n)
	}
	r := e.Row(t, e.held.ID)
	audit, _ := e.rt.Store.SupportAuditList(context.Background(), []int64{e.held.ID}, 10)
	if r.IsOnSupportHold || len(audit) != 1 || audit[0].Action != store.SupportRelease || audit[0].Operator != "ops.browser" ||
		audit[0].VersionBefore != e.held.Version+1 {
		t.Fatalf("after the release: %+v, audit %+v", r, audit)
	}

	// Run now: a Pending row waiting for its time becomes due at once.
	run("run now", chromedp.Navigate(e.url(fmt.Sprintf("/api/console/rows/%d", e.wait.ID))), visible("#do-run-now"),
		chromedp.SendKeys(chromedp.CSS("#op-run-now"), "ops.browser"), chromedp.SendKeys(chromedp.CSS("#reason-run-now"), "asked for it today"),
		click("#do-run-now"), visible("#notice"), shot("07-run-now"))
	if n := text("#notice"); !strings.Contains(n, "RunNow done") {
		t.Fatalf("run now notice: %q", n)
	}
	if w := e.Row(t, e.wait.ID); !w.ScheduledOn.Equal(now) || w.Version != e.wait.Version+1 {
		t.Fatalf("run now: %+v", w)
	}

	// A page added through console.Page: the campaigns of bu-syd (none in this fixture).
	run("campaigns page", click(`nav a[href="/api/console/campaigns"]`), visible("#cp-bu"),
		chromedp.SetValue(chromedp.CSS("#cp-bu"), "bu-syd"), chromedp.Submit(chromedp.CSS("#cp-bu")), visible("#campaigns"), shot("08-campaigns"))

	// Dead letters: a tracking message of a business unit that does not exist yet is refused
	// by its consumer and dead-lettered; the page lists it with its reason; the unit is
	// created (the fix); it is requeued from the page and delivered exactly once — a second
	// submission of the same form replays the first and sends nothing.
	dl := e.deadLetterFixture(t)
	run("dead letters", click(`nav a[href="/api/console/dead-letters"]`), visible("#dead-letters"),
		shot("10-dead-letters", "../../../docs/img/console-dead-letters.png"), accessible("dead letters"))
	if list := text("#dead-letters"); !strings.Contains(list, "bu-late") || !strings.Contains(list, `business unit "bu-late" is not known`) {
		t.Fatalf("dead letters: %q", list)
	}
	if err := e.rt.Store.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-late", Name: "Late", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	run("requeue", chromedp.Navigate(e.url("/api/console/dead-letters?businessUnitId=bu-late")), click("#pick-"+dl.ID),
		chromedp.SendKeys(chromedp.CSS("#dl-op"), "ops.browser"), chromedp.SendKeys(chromedp.CSS("#dl-reason"), "bu-late created"),
		click("#dl-requeue"), visible("#dl-notice"), shot("11-requeued"))
	if n := text("#dl-notice"); !strings.Contains(n, "1 requeued") {
		t.Fatalf("requeue notice: %q", n)
	}
	e.drain(t)
	if v := e.visits(t); v != "1" {
		t.Fatalf("after the requeue C1's visits are %q, want 1", v)
	}
	// The same form again (a double click, a reload that posts again): a replay.
	again := url.Values{"ref": {dl.ID + " " + dl.ETag}, "do": {"requeue"}, "operator": {"ops.browser"}, "reason": {"bu-late created"}}
	if code, body := e.form(t, http.DefaultClient, "/api/console/dead-letters", again, "Authorization", "Bearer "+token); code != 200 || !strings.Contains(body, "requeued already by ops.browser") {
		t.Fatalf("the same requeue again: %d %s", code, body)
	}
	discard := url.Values{"ref": {dl.ID + " " + dl.ETag}, "do": {"discard"}, "operator": {"ops.browser"}, "reason": {"not wanted"}}
	if code, body := e.form(t, http.DefaultClient, "/api/console/dead-letters", discard, "Authorization", "Bearer "+token); code != 412 || !strings.Contains(body, "requeued by ops.browser") {
		t.Fatalf("a discard of the requeued dead letter: %d %s", code, body)
	}
	e.drain(t)
	if v := e.visits(t); v != "1" {
		t.Fatalf("after the replay C1's visits are %q, want still 1 (delivered exactly once)", v)
	}
	if acts, err := e.rt.DeadLetters.Actions(context.Background(), automation.AllBusinessUnits(), 10); err != nil || len(acts) != 1 ||
		acts[0].Operator != "ops.browser" || acts[0].Reason != "bu-late created" || acts[0].Action != store.DeadLetterRequeue {
		t.Fatalf("audit: %+v %v", acts, err)
	}

	// Every page of the navigation: accessible, and its screenshot (docs/img with -update-docs).
	var nav []string
	run("navigation", chromedp.Navigate(e.url("/api/console/")), visible("nav"), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var err error
		nav, err = chromedp.Evaluate[[]string](`[...document.querySelectorAll("nav a")].map(a => a.getAttribute("href"))`)(ctx, tg)
		return err
	}))
	for _, href := range nav {
		name := strings.Trim(strings.TrimPrefix(href, "/api/console"), "/")
		if name == "" {
			name = "overview"
		}
		var docs []string
		if name != "overview" && name != "dead-letters" { // documented above, with their content
			docs = append(docs, "../../../docs/img/console-"+name+".png")
		}
		run("page "+name, chromedp.Navigate(e.url(href)), visible("main h1"), shot("page-"+name, docs...), accessible(name))
	}
	run("page watch", chromedp.Navigate(e.url("/api/console/releases/watch")), visible("main h1"), accessible("releases/watch"))
	run("page error", chromedp.Navigate(e.url("/api/console/rows/999999")), visible("#problem"), accessible("error"))

	// Phone width: the row page still reads (no horizontal scroll of the page itself).
	run("phone width", chromedp.EmulateViewport(390, 844), chromedp.Navigate(e.url(fmt.Sprintf("/api/console/rows/%d", e.wait.ID))),
		visible("#timeline"), shot("09-phone"))
	scrollW, err1 := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
	clientW, err2 := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.clientWidth`))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if scrollW > clientW+1 {
		t.Errorf("at 390 px the page scrolls sideways: %d > %d", scrollW, clientW)
	}
}
