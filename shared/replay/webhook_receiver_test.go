package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery/channel"
)

// receiverRig is the replay's webhook receiver on a buffer, its clock at start.
func receiverRig(t *testing.T) (*webhookReceiver, *bytes.Buffer, *automation.ManualClock) {
	t.Helper()
	var out bytes.Buffer
	start := time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)
	clock := automation.NewManualClock(start)
	r := &runner{out: &out, enc: json.NewEncoder(&out), clock: clock}
	w := &webhookReceiver{r: r, f: &faults{clock: clock}, receipts: map[string]*WebhookReceipt{}}
	return w, &out, clock
}

// post sends one signed delivery of deliveryKey carrying idemKey ("" = no header).
func post(t *testing.T, w *webhookReceiver, deliveryKey, idemKey string) (int, error) {
	t.Helper()
	body, _ := json.Marshal(channel.WebhookBody{DeliveryKey: deliveryKey, SchedulerKey: "reminder:x:" + deliveryKey, BusinessUnitID: "bu-1",
		Template: "t", Subject: "s", Text: "x", Payload: json.RawMessage(`{}`), SentOn: time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://hooks.example.test/a", bytes.NewReader(body))
	ts := strconv.FormatInt(time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC).Unix(), 10)
	req.Header.Set(channel.TimestampHeader, ts)
	req.Header.Set(channel.SignatureHeader, channel.Sign(replaySecret, ts, body))
	if idemKey != "" {
		req.Header.Set(channel.IdempotencyHeader, idemKey)
	}
	resp, err := w.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestWebhookReceiverAppliesEachIdempotencyKeyOnce: the receiver accepts a well-formed
// delivery, applies a resend with the same key once (one delivery line, two requests
// recorded), applies a request whose key differs as a new delivery (it deduplicates by the
// header alone, as a real receiver: the simulator's webhook-received-once invariant is what
// catches a sender whose key changes), and refuses a request without the header (400,
// nothing recorded).
func TestWebhookReceiverAppliesEachIdempotencyKeyOnce(t *testing.T) {
	w, out, _ := receiverRig(t)
	for i := 0; i < 2; i++ {
		if code, err := post(t, w, "dlv_a", "dlv_a"); err != nil || code != http.StatusOK {
			t.Fatalf("attempt %d: %d %v, want 200", i+1, code, err)
		}
	}
	if n := strings.Count(out.String(), `"kind":"delivery"`); n != 1 {
		t.Fatalf("a resend with the same key wrote %d delivery lines, want 1:\n%s", n, out)
	}
	if code, err := post(t, w, "dlv_a", "dlv_a-2"); err != nil || code != http.StatusOK {
		t.Fatalf("another key: %d %v, want 200", code, err)
	}
	if n := strings.Count(out.String(), `"kind":"delivery"`); n != 2 {
		t.Fatalf("another key for the same delivery wrote %d delivery lines in all, want 2", n)
	}
	if code, err := post(t, w, "dlv_b", ""); err != nil || code != http.StatusBadRequest {
		t.Fatalf("no Idempotency-Key: %d %v, want 400", code, err)
	}
	got := w.Receipts()
	want := []WebhookReceipt{{IdempotencyKey: "dlv_a", DeliveryKey: "dlv_a", Requests: 2, Applied: 1},
		{IdempotencyKey: "dlv_a-2", DeliveryKey: "dlv_a", Requests: 1, Applied: 1}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("receipts %+v, want %+v", got, want)
	}
}

// TestWebhookReceiverFaultsKeepTheirMeaning: under a "timeout" window the delivery is
// applied and the answer lost (the resend is then deduplicated); under "lost" and "fail"
// nothing arrives and nothing is recorded.
func TestWebhookReceiverFaultsKeepTheirMeaning(t *testing.T) {
	w, out, clock := receiverRig(t)
	until := clock.Now().Add(time.Hour)
	w.f.set(ChannelFault{Channel: "webhook", Mode: FaultFail, Until: until})
	if _, err := post(t, w, "dlv_f", "dlv_f"); err == nil {
		t.Fatal("fail: answered")
	}
	w.f.set(ChannelFault{Channel: "webhook", Mode: FaultLost, Until: until})
	if _, err := post(t, w, "dlv_l", "dlv_l"); err == nil {
		t.Fatal("lost: answered")
	}
	if rs := w.Receipts(); len(rs) != 0 {
		t.Fatalf("fail and lost recorded %+v", rs)
	}
	w.f.set(ChannelFault{Channel: "webhook", Mode: FaultTimeout, Until: until})
	if _, err := post(t, w, "dlv_t", "dlv_t"); err == nil {
		t.Fatal("timeout: answered")
	}
	clock.Advance(2 * time.Hour)
	if code, err := post(t, w, "dlv_t", "dlv_t"); err != nil || code != http.StatusOK {
		t.Fatalf("resend after the window: %d %v", code, err)
	}
	if n := strings.Count(out.String(), `"kind":"delivery"`); n != 1 {
		t.Fatalf("timeout then resend wrote %d delivery lines, want 1", n)
	}
	if rs := w.Receipts(); len(rs) != 1 || rs[0].Requests != 2 || rs[0].Applied != 1 {
		t.Fatalf("receipts %+v, want dlv_t: 2 requests, applied once", rs)
	}
}
