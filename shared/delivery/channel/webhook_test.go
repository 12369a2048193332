package channel_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
)

var secret = []byte("0123456789abcdef-test-secret")

// receiver is a webhook endpoint that verifies signatures and deduplicates by
// Idempotency-Key, as a well-behaved provider does.
type receiver struct {
	mu     sync.Mutex
	bodies map[string]channel.WebhookBody
	calls  int
	status int // answer for new keys (0: 200)
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad request shape", http.StatusBadRequest)
		return
	}
	ts := req.Header.Get(channel.TimestampHeader)
	if !channel.Verify(secret, ts, req.Header.Get(channel.SignatureHeader), body) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var b channel.WebhookBody
	if err := json.Unmarshal(body, &b); err != nil || b.DeliveryKey != req.Header.Get(channel.IdempotencyHeader) {
		http.Error(w, "body and Idempotency-Key disagree", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if r.bodies == nil {
		r.bodies = map[string]channel.WebhookBody{}
	}
	if _, seen := r.bodies[b.DeliveryKey]; !seen {
		r.bodies[b.DeliveryKey] = b
	}
	status := r.status
	r.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("X-Request-Id", "rcv-"+b.DeliveryKey)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"ok":true}`))
}

func (r *receiver) count() (calls, distinct int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, len(r.bodies)
}

func newWebhook(t *testing.T, srv *httptest.Server, mut func(*channel.WebhookConfig)) *channel.Webhook {
	t.Helper()
	cfg := channel.WebhookConfig{Secret: secret, Timeout: 2 * time.Second, Idempotent: true, Client: srv.Client()}
	if mut != nil {
		mut(&cfg)
	}
	w, err := channel.NewWebhook(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func msg(url string) delivery.Message {
	return delivery.Message{DeliveryKey: "dlv_0123456789abcdef0123456789abcdef", SchedulerKey: "reminder:x", BusinessUnitID: "bu-1",
		Channel: "webhook", Recipient: url, Template: "t", Payload: json.RawMessage(`{"a":1}`),
		Content: &delivery.Content{Subject: "Subject", Text: "Text", HTML: "<p>x</p>", TemplateVersion: 3},
		SentOn:  time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)}
}

func TestWebhookSignsAndSendsOverTLS(t *testing.T) {
	t.Parallel()
	rcv := &receiver{}
	srv := httptest.NewTLSServer(rcv)
	defer srv.Close()
	w := newWebhook(t, srv, nil)
	m := msg(srv.URL + "/hooks/reminders?token=abc")
	ref, err := w.Send(context.Background(), m)
	if err != nil || ref != "rcv-"+m.DeliveryKey {
		t.Fatalf("send: %q %v", ref, err)
	}
	// Retried with the same key (after an UNKNOWN): the receiver keeps one delivery.
	if _, err := w.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	calls, distinct := rcv.count()
	b := rcv.bodies[m.DeliveryKey]
	if calls != 2 || distinct != 1 || b.Subject != "Subject" || b.HTML != "<p>x</p>" || string(b.Payload) != `{"a":1}` || !b.SentOn.Equal(m.SentOn) {
		t.Fatalf("calls %d distinct %d body %+v", calls, distinct, b)
	}
	if !w.Traits().Idempotent || !w.Traits().NeedsContent {
		t.Fatal("traits")
	}
}

func TestWebhookSignatureCoversTimestampAndBody(t *testing.T) {
	t.Parallel()
	body := []byte(`{"deliveryKey":"dlv_x"}`)
	sig := channel.Sign(secret, "1790000000", body)
	if !strings.HasPrefix(sig, "v1=") || len(sig) != 3+64 || !channel.Verify(secret, "1790000000", sig, body) {
		t.Fatalf("sig %q", sig)
	}
	for name, ok := range map[string]bool{
		"other body":      channel.Verify(secret, "1790000000", sig, []byte(`{"deliveryKey":"dlv_y"}`)),
		"other timestamp": channel.Verify(secret, "1790000001", sig, body),
		"other secret":    channel.Verify([]byte("another-secret-of-16+"), "1790000000", sig, body),
	} {
		if ok {
			t.Errorf("%s verified", name)
		}
	}
}

func TestWebhookClassifiesAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		kind   automation.Intent
	}{
		{http.StatusBadRequest, automation.IntentPermanent},
		{http.StatusGone, automation.IntentPermanent},
		{http.StatusMovedPermanently, automation.IntentPermanent},
		{http.StatusTooManyRequests, automation.IntentRetry},
		{http.StatusRequestTimeout, automation.IntentRetry},
		{http.StatusInternalServerError, automation.IntentUnknown},
		{http.StatusBadGateway, automation.IntentUnknown},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewTLSServer(&receiver{status: tc.status})
			defer srv.Close()
			_, err := newWebhook(t, srv, nil).Send(context.Background(), msg(srv.URL))
			if err == nil || automation.IntentOf(err) != tc.kind {
				t.Fatalf("%d: %v (%s), want %s", tc.status, err, automation.IntentOf(err), tc.kind)
			}
			if strings.Contains(err.Error(), "?") {
				t.Fatalf("error leaks the URL query: %v", err)
			}
		})
	}
	t.Run("wrong secret is a permanent 401", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewTLSServer(&receiver{})
		defer srv.Close()
		w := newWebhook(t, srv, func(c *channel.WebhookConfig) { c.Secret = []byte("not-the-shared-secret") })
		if _, err := w.Send(context.Background(), msg(srv.URL)); automation.IntentOf(err) != automation.IntentPermanent || !strings.Contains(err.Error(), "401") {
			t.Fatalf("%v", err)
		}
	})
}

func TestWebhookFailureBeforeTheRequestIsTransient(t *testing.T) {
	t.Parallel()
	// A port nobody listens on: connection refused before anything was written.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	w, err := channel.NewWebhook(channel.WebhookConfig{Secret: secret, Timeout: time.Second, AllowLocalHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Send(context.Background(), msg("http://"+addr+"/hook"))
	if err == nil || automation.IntentOf(err) != automation.IntentRetry {
		t.Fatalf("%v (%s)", err, automation.IntentOf(err))
	}
	// A TLS server whose certificate the client does not trust: the handshake fails first.
	srv := httptest.NewTLSServer(&receiver{})
	defer srv.Close()
	w2, _ := channel.NewWebhook(channel.WebhookConfig{Secret: secret, Timeout: time.Second, AllowPrivateNetworks: true})
	if _, err := w2.Send(context.Background(), msg(srv.URL)); err == nil || automation.IntentOf(err) != automation.IntentRetry {
		t.Fatalf("untrusted certificate: %v (%s)", err, automation.IntentOf(err))
	}
}

func TestWebhookURLValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url   string
		local bool
		ok    bool
	}{
		{"https://hooks.example.test/reminders", false, true},
		{"https://hooks.example.test:8443/x?token=1", false, true},
		{"http://hooks.example.test/reminders", false, false},
		{"http://hooks.example.test/reminders", true, false},
		{"http://localhost:8080/hook", true, true},
		{"http://127.0.0.1:8080/hook", true, true},
		{"http://[::1]:8080/hook", true, true},
		{"http://localhost:8080/hook", false, false},
		{"https://user:pw@hooks.example.test/", false, false},
		{"ftp://hooks.example.test/", false, false},
		{"hooks.example.test/path", false, false},
		{"a@example.test", false, false},
		{"https:///nohost", false, false},
		{"https://" + strings.Repeat("a", 2000) + ".test/", false, false},
		{"https://hooks.example.test:99999/x", false, false},
		{"https://hooks.example.test:0/x", false, false},
		{"http://localhost:70000/hook", true, false},
		{"https://hooks.example.test:65535/x", false, true},
	}
	for _, tc := range cases {
		err := channel.ValidateWebhookURL(tc.url, tc.local)
		if (err == nil) != tc.ok {
			t.Errorf("%q local=%v: %v, want ok=%v", tc.url, tc.local, err, tc.ok)
		}
	}
	w, _ := channel.NewWebhook(channel.WebhookConfig{Secret: secret})
	if _, err := w.Send(context.Background(), msg("http://hooks.example.test/")); automation.IntentOf(err) != automation.IntentPermanent {
		t.Fatalf("plain http must be a permanent failure: %v", err)
	}
	noContent := msg("https://hooks.example.test/")
	noContent.Content = nil
	if _, err := w.Send(context.Background(), noContent); automation.IntentOf(err) != automation.IntentPermanent {
		t.Fatalf("no content: %v", err)
	}
	if _, err := channel.NewWebhook(channel.WebhookConfig{Secret: []byte("short")}); err == nil {
		t.Fatal("short secret accepted")
	}
}

// Go's HTTP client replays a request that carries an Idempotency-Key header on a fresh
// connection when a kept-alive one breaks after the request was written. For a receiver
// that does not deduplicate (Idempotent false) that is a second delivery the dispatcher
// never sees: the channel must report UNKNOWN instead, having sent once.
func TestWebhookNotIdempotentIsNeverReplayedByTheHTTPClient(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		key := r.Header.Get(channel.IdempotencyHeader)
		mu.Lock()
		got[key]++
		first := got[key] == 1
		mu.Unlock()
		if key == "dlv_second" && first {
			// The receiver acts on the request, then the connection breaks before it answers.
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	w := newWebhook(t, srv, func(c *channel.WebhookConfig) { c.Idempotent = false })
	m := msg(srv.URL)
	if _, err := w.Send(context.Background(), m); err != nil { // opens the kept-alive connection
		t.Fatal(err)
	}
	m.DeliveryKey = "dlv_second"
	_, err := w.Send(context.Background(), m)
	mu.Lock()
	n := got["dlv_second"]
	mu.Unlock()
	if n != 1 || automation.IntentOf(err) != automation.IntentUnknown {
		t.Fatalf("received %d times, outcome %v (%s); want once and Unknown", n, err, automation.IntentOf(err))
	}
}
