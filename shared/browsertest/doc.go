// Package browsertest starts headless Chromium for the tests that drive a real browser
// (chromedp), the set-up those tests shared as copies: finding the browser on PATH (or
// skipping with the one command that installs it, `make chromium`), starting it with the
// flags a container needs (no sandbox, no GPU, no /dev/shm), ending it when the test ends,
// and waiting for a condition in the page (Until polls a script every 100 ms until it is
// true or the context ends). It imports "testing": tests only.
package browsertest
