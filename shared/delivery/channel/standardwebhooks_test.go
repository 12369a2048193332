package channel_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
)

// The Standard Webhooks specification's published test vector.
func TestStandardWebhooksSpecVector(t *testing.T) {
	t.Parallel()
	key, err := channel.ParseStandardSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := channel.StandardSign([][]byte{key}, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %q, want the specification's %q", got, want)
	}
	if s := channel.StandardSecret(key); s != "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" {
		t.Errorf("StandardSecret = %q", s)
	}
}

// specVerify is a receiver written from the specification's text, apart from the signer:
// the secret without its whsec_ prefix is base64; the signed content is id.timestamp.body;
// webhook-signature is a space-separated list of "v1,<base64>" of which one must match;
// the timestamp must be within five minutes of now.
func specVerify(secret string, h http.Header, body []byte, now time.Time) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)))
	want := mac.Sum(nil)
	for _, part := range strings.Split(h.Get("webhook-signature"), " ") {
		version, sig, ok := strings.Cut(part, ",")
		got, err := base64.StdEncoding.DecodeString(sig)
		if ok && version == "v1" && err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// A webhook request carries the Standard Webhooks headers (a receiver with the current or,
// during a rotation, the previous secret verifies it) and still the old headers.
func TestWebhookSignsAsStandardWebhooks(t *testing.T) {
	t.Parallel()
	current := []byte("0123456789abcdef-current")
	previous := []byte("0123456789abcdef-previous")
	var mu sync.Mutex
	var hdr http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hdr, body = r.Header.Clone(), b
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	now := time.Now().UTC()
	ch, err := channel.NewWebhook(channel.WebhookConfig{Secret: current, PreviousSecrets: [][]byte{previous}, AllowLocalHTTP: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := delivery.Message{DeliveryKey: "dlv_std_1", BusinessUnitID: "bu-1", Channel: "webhook", Recipient: srv.URL + "/hook", Template: "t",
		Content: &delivery.Content{Subject: "s", Text: "x"}, SentOn: now}
	if _, err := ch.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hdr.Get("webhook-id") != "dlv_std_1" || strings.Count(hdr.Get("webhook-signature"), "v1,") != 2 {
		t.Fatalf("headers %v", hdr)
	}
	for _, secret := range [][]byte{current, previous} {
		if !specVerify(channel.StandardSecret(secret), hdr, body, now) {
			t.Errorf("a receiver with %s cannot verify the request", channel.StandardSecret(secret))
		}
	}
	if specVerify(channel.StandardSecret([]byte("0123456789abcdef-stranger")), hdr, body, now) {
		t.Error("a receiver with another secret verified the request")
	}
	if specVerify(channel.StandardSecret(current), hdr, append(body, ' '), now) {
		t.Error("a changed body verified")
	}
	if !channel.Verify(current, hdr.Get(channel.TimestampHeader), hdr.Get(channel.SignatureHeader), body) {
		t.Error("the old X-Automation-Signature no longer verifies (the transition keeps it)")
	}
}
