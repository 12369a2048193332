package channel_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
)

// The vectors of Microsoft's own HMAC tests for ACS (azure-sdk-for-python,
// sdk/communication/azure-communication-identity/tests/test_hmac.py): access key "pw==",
// host contoso.communicationservices.azure.com, x-ms-date "Wed, 13 Apr 2022 18:09:12 GMT",
// GET with an empty body. They fix the string to sign, the key decoding, the content hash
// and the header format independently of our simulator.
func TestACSSignMicrosoftVectors(t *testing.T) {
	t.Parallel()
	conn, err := channel.ParseACSConnectionString("endpoint=https://contoso.communicationservices.azure.com/;accesskey=pw==")
	if err != nil {
		t.Fatal(err)
	}
	if conn.Endpoint != "https://contoso.communicationservices.azure.com" {
		t.Fatalf("endpoint %q", conn.Endpoint)
	}
	date := time.Date(2022, 4, 13, 18, 9, 12, 0, time.UTC)
	for _, c := range []struct{ url, want string }{
		{"https://contoso.communicationservices.azure.com/", "88MDmJhUR3m5QhFxb8ztShsSwlGrg7g/6XPnWf7QEO4="},
		{"https://contoso.communicationservices.azure.com/testPath", "RoCrHjw7fb9fpHSbqvRUY2xa8RBS0YvI1cxI1x8AS38="},
		{"https://contoso.communicationservices.azure.com/testPath?testQuery=yes", "il99+rd6V5O136roX/zVePCNle78HmvC4B7tu9zRH3I="},
	} {
		req, _ := http.NewRequest(http.MethodGet, c.url, http.NoBody)
		channel.ACSSign(req, nil, conn.AccessKey, date)
		if got, want := req.Header.Get("Authorization"), channel.ACSAuthorization(c.want); got != want {
			t.Errorf("%s: Authorization %q, want %q", c.url, got, want)
		}
		if d := req.Header.Get("x-ms-date"); d != "Wed, 13 Apr 2022 18:09:12 GMT" {
			t.Errorf("x-ms-date %q", d)
		}
		if h := req.Header.Get("x-ms-content-sha256"); h != "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" {
			t.Errorf("x-ms-content-sha256 of an empty body %q", h)
		}
	}
	for _, bad := range []string{"accesskey=pw==", "endpoint=https://x.example/;accesskey=not base64!", "endpoint=ftp://x/;accesskey=pw=="} {
		if _, err := channel.ParseACSConnectionString(bad); err == nil {
			t.Errorf("ParseACSConnectionString(%q) accepted", bad)
		}
	}
}

// Every ACS answer maps to the outcome docs/channels.md gives it, for SMS and WhatsApp alike
// through their one mapping, plus what each channel adds: WhatsApp retries 409 (the first
// request with the id is still in progress) and calls 412 UNKNOWN (first-sent outside the
// window), both permanent for SMS like any other 4xx it does not name.
func TestACSAnswerOutcomes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	answer := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(answer)
	}))
	t.Cleanup(srv.Close)
	conn := "endpoint=" + srv.URL + "/;accesskey=cHc9PQ=="
	sms, err := channel.NewSMS(channel.SMSConfig{ConnectionString: conn, From: "+61400000001", Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	wa, err := channel.NewWhatsApp(channel.WhatsAppConfig{ConnectionString: conn, ChannelRegistrationID: "7c4f1e52-3a6b-4c8d-9e0f-1a2b3c4d5e6f", Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	msg := delivery.Message{DeliveryKey: "dlv_acs_1", BusinessUnitID: "bu-1", Recipient: "+61400000000", SentOn: now, CreatedOn: now,
		Content: &delivery.Content{Text: "hello", WhatsApp: &delivery.WhatsAppTemplate{Name: "otp_code", Language: "en", Values: []string{"1"}}}}
	for _, c := range []struct {
		status    int
		sms, wapp automation.Intent
	}{
		{http.StatusBadRequest, automation.IntentPermanent, automation.IntentPermanent},
		{http.StatusUnauthorized, automation.IntentRetry, automation.IntentRetry},
		{http.StatusForbidden, automation.IntentRetry, automation.IntentRetry},
		{http.StatusRequestTimeout, automation.IntentRetry, automation.IntentRetry},
		{http.StatusConflict, automation.IntentPermanent, automation.IntentRetry},
		{http.StatusPreconditionFailed, automation.IntentPermanent, automation.IntentUnknown},
		{http.StatusTooManyRequests, automation.IntentRetryAfter, automation.IntentRetryAfter},
		{http.StatusInternalServerError, automation.IntentUnknown, automation.IntentUnknown},
		{http.StatusServiceUnavailable, automation.IntentUnknown, automation.IntentUnknown},
		{http.StatusFound, automation.IntentPermanent, automation.IntentPermanent},
	} {
		mu.Lock()
		answer = c.status
		mu.Unlock()
		for name, ch := range map[string]struct {
			send func() (string, error)
			want automation.Intent
		}{
			"sms":      {func() (string, error) { return sms.Send(t.Context(), msg) }, c.sms},
			"whatsapp": {func() (string, error) { return wa.Send(t.Context(), msg) }, c.wapp},
		} {
			ref, err := ch.send()
			if got := automation.IntentOf(err); ref != "" || got != ch.want || !strings.Contains(fmt.Sprint(err), fmt.Sprint(c.status)) {
				t.Errorf("%s answered %d: %q %v (%s), want %s naming the status", name, c.status, ref, err, got, ch.want)
			}
			if d, ok := automation.RetryAfterOf(err); c.status == http.StatusTooManyRequests && (!ok || d != 7*time.Second) {
				t.Errorf("%s answered 429: retry after %s %v, want 7s", name, d, ok)
			}
		}
	}
}
