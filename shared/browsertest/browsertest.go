package browsertest

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Names are the browser executables looked up on PATH, in order: Debian's chromium (what
// `make chromium` installs), then the other common names.
var Names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// SkipText is what a browser test says when it skips for want of a browser.
const SkipText = "SKIP: no Chromium on PATH (chromium, chromium-browser, google-chrome): `make chromium` installs Debian's"

// Path is the first of Names found on PATH, or "" when there is none.
func Path() string {
	for _, name := range Names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Chromium is Path, and skips t (SkipText) when there is no browser.
func Chromium(t testing.TB) string {
	t.Helper()
	p := Path()
	if p == "" {
		t.Skip(SkipText)
	}
	return p
}

// Start starts the headless browser at path (from Chromium) with the flags a container
// needs and extra (chromedp.WindowSize, ...), and answers the context its actions run in.
// The browser ends when t ends; a browser that does not start fails t.
func Start(t testing.TB, path string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(cancelCtx)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// Until polls the script js (which answers a boolean) in the current document every 100 ms
// until it answers true; an error in between (a document swapped while it ran) is retried.
// When the context ends first, the error names what was awaited and the last error seen.
func Until(what, js string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var last error
		for {
			ok, err := chromedp.Evaluate[bool](js)(ctx, tg)
			if err == nil && ok {
				return nil
			}
			if err != nil {
				last = err
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), last)
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// Visible waits until the element sel is in the current document and shown (it has a
// layout box), on the page a click or a submit leads to.
func Visible(sel string) chromedp.Action[chromedp.Void] {
	return Until(sel+" not visible", fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.getClientRects().length > 0; })()`, sel))
}

// Click waits for sel to be visible and clicks it from the page's own script (the element's
// click(), as a user's click runs its default action: follow the link, submit the form).
// chromedp's Click dispatches mouse events on a DOM node and then keeps querying that node,
// which could wait out a step's deadline when the click swapped the document.
func Click(sel string) chromedp.Action[chromedp.Void] {
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, sel)
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := Visible(sel)(ctx, tg); err != nil {
			return err
		}
		ok, err := chromedp.Evaluate[bool](js)(ctx, tg)
		if err == nil && !ok {
			err = fmt.Errorf("%s: no such element to click", sel)
		}
		return err
	})
}
