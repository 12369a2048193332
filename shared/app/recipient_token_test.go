package app_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/recipienttoken"
)

const recipientSecret = "a-recipient-token-secret-of-32-bytes-or-more"

// Recipient tokens (issue 37, item 4): a token minted offline with the shared secret opens
// its recipient's inbox routes in its unit and nothing else: another recipient's inbox,
// another unit, and every other route are refused; the stream takes it as ?access_token=
// (EventSource sends no header) and receives that recipient's message, while another
// recipient's stream receives nothing; an expired token, or one of a removed secret, is 401.
func TestRecipientTokens(t *testing.T) {
	clock := automation.NewManualClock(time.Now().UTC().Truncate(time.Second))
	rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": "boot",
		"AUTOMATION_RECIPIENT_TOKEN_KEYS": "k1=" + recipientSecret}, time.Time{}, app.Options{Clock: clock})
	h := rt.ListenerHandler(false)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	call := func(method, path, tok, body string) *httptest.ResponseRecorder {
		hdr := []string{"Content-Type", "application/json", "If-Match", `"1"`}
		if tok != "" {
			hdr = append(hdr, "Authorization", "Bearer "+tok)
		}
		return serveJSON(h, method, path, body, hdr...)
	}
	seedUnits(t, h, "boot", "bu-a", "bu-b")
	mint := func(unit, who string, ttl time.Duration) string {
		tok, err := recipienttoken.Mint("k1", []byte(recipientSecret), unit, who, clock.Now(), ttl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	r1 := mint("bu-a", "r1", 10*time.Minute)
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/inbox/r1?businessUnitId=bu-a", 200},
		{"GET", "/api/inbox/r2?businessUnitId=bu-a", 403},
		{"GET", "/api/inbox/r1?businessUnitId=bu-b", 404},
		{"POST", "/api/inbox/r2/messages/1/read?businessUnitId=bu-a", 403},
		{"GET", "/api/business-units", 403},
		{"GET", "/api/support/metrics?businessUnitId=bu-a", 403},
	} {
		if rec := call(c.method, c.path, r1, ""); rec.Code != c.want {
			t.Errorf("%s %s with r1's token: %d %s, want %d", c.method, c.path, rec.Code, rec.Body, c.want)
		}
	}
	// The stream, with the token in the query as EventSource would send it.
	open := func(who, tok string) (*http.Response, *bufio.Reader) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/inbox/"+who+"/stream?businessUnitId=bu-a&access_token="+tok, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res, bufio.NewReader(res.Body)
	}
	if res, _ := open("r1", mint("bu-a", "r2", time.Minute)); res.StatusCode != 403 {
		t.Fatalf("r2's token on r1's stream: %d", res.StatusCode)
	}
	res1, body1 := open("r1", r1)
	res2, body2 := open("r2", mint("bu-a", "r2", 10*time.Minute))
	if res1.StatusCode != 200 || res2.StatusCode != 200 {
		t.Fatalf("streams: %d %d", res1.StatusCode, res2.StatusCode)
	}
	ch := &inbox.Channel{Store: rt.Store, Broker: rt.InboxBroker}
	deadline := time.Now().Add(5 * time.Second)
	for rt.InboxBroker.Subscribers() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := ch.Send(context.Background(), delivery.Message{DeliveryKey: "dlv-1", BusinessUnitID: "bu-a", Recipient: "r1", Template: "t",
		Content: &delivery.Content{Subject: "for r1 only", Text: "hi"}, SentOn: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	got := firstData(body1)
	select {
	case line := <-got:
		if !strings.Contains(line, "for r1 only") {
			t.Fatalf("r1 received %s", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("r1's stream received nothing")
	}
	other := firstData(body2)
	select {
	case line := <-other:
		t.Fatalf("r2's stream received r1's message: %s", line)
	case <-time.After(300 * time.Millisecond):
	}
	// Expired, and minted with a secret the deployment does not hold.
	clock.Advance(11 * time.Minute)
	if rec := call("GET", "/api/inbox/r1?businessUnitId=bu-a", r1, ""); rec.Code != 401 {
		t.Fatalf("expired token: %d %s", rec.Code, rec.Body)
	}
	foreign, _ := recipienttoken.Mint("k2", []byte(recipientSecret+"-other"), "bu-a", "r1", clock.Now(), time.Minute)
	if rec := call("GET", "/api/inbox/r1?businessUnitId=bu-a", foreign, ""); rec.Code != 401 {
		t.Fatalf("unknown kid: %d %s", rec.Code, rec.Body)
	}
	if _, err := recipienttoken.Mint("k1", []byte(recipientSecret), "bu-a", "r1", clock.Now(), 2*time.Hour); err == nil {
		t.Fatal("a two-hour token was minted")
	}
}

// firstData reads stream's server-sent events in the background and sends its first "data:"
// line (with the newline) on the channel it returns; nothing is sent if the stream ends first.
func firstData(stream *bufio.Reader) <-chan string {
	got := make(chan string, 1)
	go func() {
		for {
			line, err := stream.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "data:") {
				got <- line
				return
			}
		}
	}()
	return got
}
