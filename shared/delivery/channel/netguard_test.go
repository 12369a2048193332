package channel_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery/channel"
)

// Webhook URLs come from event data: outside local mode a URL that reaches the platform's
// own network (loopback, private, link-local metadata endpoint, …) is refused at dial time,
// permanently, and nothing is sent.
func TestWebhookRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	guarded, err := channel.NewWebhook(channel.WebhookConfig{Secret: []byte("0123456789abcdef0123"), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{
		srv.URL + "/hook",                  // https://127.0.0.1:port
		"https://169.254.169.254/metadata", // cloud metadata endpoint
		"https://10.1.2.3/hook",            // private
		"https://[::1]/hook",               // IPv6 loopback
		"https://100.64.0.1/hook",          // carrier-grade NAT
		"https://localhost" + srv.URL[len("https://127.0.0.1"):] + "/h", // a name that resolves to loopback
	} {
		_, err := guarded.Send(context.Background(), msg(url))
		if !errors.Is(err, channel.ErrAddressNotAllowed) || automation.IntentOf(err) != automation.IntentPermanent {
			t.Errorf("%s: err = %v (%s), want a permanent ErrAddressNotAllowed", url, err, automation.IntentOf(err))
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver got %d requests", hits.Load())
	}
	// Receivers inside the network: allowed when configured (here with the test CA's client).
	open, err := channel.NewWebhook(channel.WebhookConfig{Secret: []byte("0123456789abcdef0123"), Timeout: 2 * time.Second,
		AllowPrivateNetworks: true, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.Send(context.Background(), msg(srv.URL+"/hook")); err != nil || hits.Load() != 1 {
		t.Fatalf("allowed private receiver: %v, hits %d", err, hits.Load())
	}
	if !strings.Contains(channel.ErrAddressNotAllowed.Error(), "non-public") {
		t.Fatal("error text")
	}
}
