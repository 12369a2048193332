package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/automation-platform/automation/shared/browsertest"
)

// browser drives one headless Chromium for a test: TestConsoleInABrowser and
// TestConsoleInABrowserLoyaltyFlow share it. Its waits ask the page's own script (every
// 100 ms) instead of holding a DOM node: after a click swaps the document, a node query can
// stay bound to the old document and wait out the step's deadline, and a query can fail with
// "Not attached to an active page" while the swap is in progress. Any error before the
// deadline is retried; the deadline's error names what was awaited.
type browser struct {
	t   *testing.T
	ctx context.Context
	out string // where screenshots go (artifacts)
	axe string // axe-core's source, read once (axeScript)
}

// newBrowser starts Chromium at path (1280×1000) on the test's context, so a step's shorter
// deadline never ends it; screenshots go to out.
func newBrowser(t *testing.T, path, out string) *browser {
	t.Helper()
	ctx := browsertest.Start(t, path, chromedp.WindowSize(1280, 1000))
	return &browser{t: t, ctx: ctx, out: out, axe: axeScript(t)}
}

// until waits until the script js answers true in the current document.
func (b *browser) until(what, js string) chromedp.Action[chromedp.Void] {
	return browsertest.Until(what, js)
}

// visible waits for sel on the page a click or a submit leads to.
func (b *browser) visible(sel string) chromedp.Action[chromedp.Void] {
	return browsertest.Visible(sel)
}

// loaded waits until the current document's URL contains part and it has finished loading:
// an element that is on the page both before and after a submit (#rows) does not say that
// the submit's document is the one shown.
func (b *browser) loaded(part string) chromedp.Action[chromedp.Void] {
	return b.until("no loaded page at "+part, fmt.Sprintf(`location.href.includes(%q) && document.readyState === "complete"`, part))
}

// click waits for sel to be visible and clicks it from the page's own script
// (browsertest.Click says why not chromedp's Click).
func (b *browser) click(sel string) chromedp.Action[chromedp.Void] {
	return browsertest.Click(sel)
}

// choose picks value in the <select> sel (a business-unit picker) as a person would, and
// fails when the picker does not offer it.
func (b *browser) choose(sel, value string) chromedp.Action[chromedp.Void] {
	js := fmt.Sprintf(`(() => { const s = document.querySelector(%q); if (!s || s.tagName !== "SELECT") return "no select";
	  if (![...s.options].some(o => o.value === %q)) return "not offered: " + [...s.options].map(o => o.value).join(",");
	  s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); return ""; })()`, sel, value, value)
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := b.visible(sel)(ctx, tg); err != nil {
			return err
		}
		msg, err := chromedp.Evaluate[string](js)(ctx, tg)
		if err == nil && msg != "" {
			err = fmt.Errorf("%s: %s", sel, msg)
		}
		return err
	})
}

// shot saves the 1280×1000 viewport as out/name.png, and also to each of docs when the test
// runs with -update-docs (make screenshots). A capture that meets a document swap fails with
// "Not attached to an active page": it is retried until the step's deadline.
func (b *browser) shot(name string, docs ...string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var png []byte
		for {
			var err error
			if png, err = chromedp.CaptureScreenshot()(ctx, tg); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("screenshot %s: %w (last error: %v)", name, ctx.Err(), err)
			case <-time.After(200 * time.Millisecond):
			}
		}
		if err := os.WriteFile(filepath.Join(b.out, name+".png"), png, 0o644); err != nil {
			return err
		}
		if *updateDocs {
			for _, p := range docs {
				if err := os.WriteFile(p, png, 0o644); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// accessible runs axe-core (node_modules, package.json's pinned version) in the page shown
// and fails the test on each violation of WCAG 2.x A and AA (labels, headings, contrast,
// names, landmarks).
func (b *browser) accessible(page string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := b.until("document loaded", `document.readyState === "complete"`)(ctx, tg); err != nil {
			return err
		}
		if _, err := chromedp.Evaluate[bool](`typeof axe === "object" || (() => { `+b.axe+`; return true; })()`)(ctx, tg); err != nil {
			return fmt.Errorf("inject axe-core: %w", err)
		}
		out, err := chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise)(ctx, tg)
		if err != nil {
			return fmt.Errorf("axe-core on %s: %w", page, err)
		}
		for _, v := range out {
			b.t.Errorf("accessibility of %s: %s (%s, %s): %s", page, v.ID, v.Impact, v.Help, strings.Join(v.Targets, " | "))
		}
		return nil
	})
}

// text is sel's text in the current document.
func (b *browser) text(sel string) string {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	s, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// run runs a step's actions with its own deadline, generous because a loaded 2-core CI
// machine can stall Chromium for tens of seconds; a step that fails leaves a screenshot of
// where it stood.
func (b *browser) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		fctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		loc, _ := chromedp.Run(fctx, chromedp.Location())
		name := "failed-" + strings.ReplaceAll(step, " ", "-")
		_ = chromedp.Do(fctx, b.shot(name))
		b.t.Fatalf("%s: %v (the page: %s; screenshot %s.png)", step, err, loc, name)
	}
}
