package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/browsertest"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/recipienttoken"
)

// Recipient tokens in a real browser (issue 37, item 4): a page opens two streams with
// Chromium's EventSource, which cannot send an Authorization header, each with its own
// recipient's token as ?access_token=; a message to r1 reaches r1's stream and r2's stream
// receives nothing; an EventSource opened on r1's stream with r2's token never opens (403).
// Skips without Chromium (`make chromium`).
func TestRecipientTokenEventSourceInChromium(t *testing.T) {
	path := browsertest.Chromium(t)
	clock := automation.NewManualClock(time.Now().UTC().Truncate(time.Second))
	rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": "boot",
		"AUTOMATION_RECIPIENT_TOKEN_KEYS": "k1=" + recipientSecret}, time.Time{}, app.Options{Clock: clock})
	// The member app's page, served from the API's origin (an EventSource to another origin
	// would need CORS, which the API does not answer).
	mux := http.NewServeMux()
	mux.HandleFunc("GET /member-app.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>member app</title><p>inbox</p>")
	})
	mux.Handle("/", rt.ListenerHandler(false))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	req := httptest.NewRequest("POST", "/api/business-units", strings.NewReader(`{"id":"bu-a","name":"U","timeZone":"UTC"}`))
	req.Header.Set("Authorization", "Bearer boot")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	rt.ListenerHandler(false).ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("seed: %d %s", rec.Code, rec.Body)
	}
	mint := func(who string) string {
		tok, err := recipienttoken.Mint("k1", []byte(recipientSecret), "bu-a", who, clock.Now(), 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	ctx := browsertest.Start(t, path)
	eval := func(js string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		s, err := chromedp.Run(sctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	waitFor := func(what, js string, d time.Duration) bool {
		t.Helper()
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if eval(js) == "true" {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	if _, err := chromedp.Run(sctx, chromedp.Navigate(srv.URL+"/member-app.html")); err != nil {
		t.Fatal(err)
	}
	cancel()
	eval(fmt.Sprintf(`(() => {
		window.got = {r1: [], r2: [], wrong: []}; window.opened = {}; window.failed = {};
		const open = (name, who, tok) => {
			const es = new EventSource("/api/inbox/" + who + "/stream?businessUnitId=bu-a&access_token=" + encodeURIComponent(tok));
			es.onopen = () => { window.opened[name] = true; };
			es.onmessage = (e) => { window.got[name].push(e.data); };
			es.onerror = () => { if (es.readyState === EventSource.CLOSED) window.failed[name] = true; };
		};
		open("r1", "r1", %q); open("r2", "r2", %q); open("wrong", "r1", %q);
		return "ok";
	})()`, mint("r1"), mint("r2"), mint("r2")))
	if !waitFor("both streams open", `String(!!(window.opened.r1 && window.opened.r2))`, 20*time.Second) {
		t.Fatalf("streams did not open: %s", eval(`JSON.stringify(window.opened)`))
	}
	if !waitFor("r2's token on r1's stream refused", `String(!!window.failed.wrong)`, 20*time.Second) {
		t.Fatalf("an EventSource with r2's token on r1's stream did not fail: opened %s", eval(`JSON.stringify(window.opened)`))
	}
	deadline := time.Now().Add(5 * time.Second)
	for rt.InboxBroker.Subscribers() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	ch := &inbox.Channel{Store: rt.Store, Broker: rt.InboxBroker}
	if _, err := ch.Send(context.Background(), delivery.Message{DeliveryKey: "dlv-browser-1", BusinessUnitID: "bu-a", Recipient: "r1", Template: "t",
		Content: &delivery.Content{Subject: "for r1 in the browser", Text: "hi"}, SentOn: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if !waitFor("r1 receives", `String(window.got.r1.length > 0)`, 10*time.Second) {
		t.Fatal("r1's EventSource received nothing")
	}
	if got := eval(`window.got.r1.join("\n")`); !strings.Contains(got, "for r1 in the browser") {
		t.Fatalf("r1 received %s", got)
	}
	time.Sleep(500 * time.Millisecond)
	if got := eval(`JSON.stringify([window.got.r2, window.got.wrong])`); got != "[[],[]]" {
		t.Fatalf("other streams received %s", got)
	}
}
