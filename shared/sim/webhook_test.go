package sim

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/replay"
)

// TestWebhookReceivedOnceCatchesAChangedKey: webhook-received-once fails a delivery applied
// under two Idempotency-Keys (a sender whose key changed between attempts) and a webhook
// delivery recorded Sent that the receiver never applied; a resend under the same key
// (two requests, applied once) and a Failed delivery never received pass.
func TestWebhookReceivedOnceCatchesAChangedKey(t *testing.T) {
	check := func(receipts []replay.WebhookReceipt, jobs []job) []Violation {
		c := &checker{checked: map[string]int{}, webhooks: func() []replay.WebhookReceipt { return receipts }}
		r := &report{c: c}
		c.checkWebhookOnce(r)
		c.checkWebhookSent(r, jobs)
		if c.checked[InvWebhookOnce] == 0 {
			t.Fatal("webhook-received-once not evaluated")
		}
		return r.vs
	}
	good := []replay.WebhookReceipt{{IdempotencyKey: "dlv_a", DeliveryKey: "dlv_a", Requests: 2, Applied: 1}}
	jobs := []job{{key: "dlv_a", channel: "webhook", status: "Sent"}, {key: "dlv_c", channel: "webhook", status: "Failed", lastError: "400"},
		{key: "dlv_l", channel: "log", status: "Sent"}}
	if vs := check(good, jobs); len(vs) != 0 {
		t.Fatalf("a resend under one key: %v", vs)
	}
	changed := append(good, replay.WebhookReceipt{IdempotencyKey: "dlv_a-1801026540", DeliveryKey: "dlv_a", Requests: 1, Applied: 1})
	vs := check(changed, jobs)
	if len(vs) != 1 || vs[0].Invariant != InvWebhookOnce || !strings.Contains(vs[0].Detail, "applied 2 times") {
		t.Fatalf("two keys for one delivery: %v", vs)
	}
	vs = check(good, append(jobs, job{key: "dlv_b", channel: "webhook", status: "Sent"}))
	if len(vs) != 1 || !strings.Contains(vs[0].Detail, "dlv_b") || !strings.Contains(vs[0].Detail, "never applied") {
		t.Fatalf("Sent but never received: %v", vs)
	}
}
