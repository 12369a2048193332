package sim

import (
	"sort"

	"github.com/automation-platform/automation/shared/replay"
)

// The webhook's part of the simulation: the replay's webhook receiver applies each
// Idempotency-Key once and records every request that reached it (replay.WebhookReceipt);
// the checker reads those receipts. A resend after a lost answer or a crash after the send
// must carry the delivery's one key, so the receiver applies the delivery once; a sender
// whose key changed between attempts would be applied again under the new key.

// Webhooks implements replay.WebhookObserver: the checker reads the receiver's receipts.
func (d *driver) Webhooks(receipts func() []replay.WebhookReceipt) { d.chk.webhooks = receipts }

// checkWebhookOnce (at every instant): each delivery key was applied at the receiver at
// most once, whatever Idempotency-Keys its attempts carried.
func (c *checker) checkWebhookOnce(r *report) {
	if c.webhooks == nil {
		return
	}
	keys := map[string][]string{} // delivery key -> the Idempotency-Keys applied for it
	for _, rc := range c.webhooks() {
		if rc.Applied > 0 {
			keys[rc.DeliveryKey] = append(keys[rc.DeliveryKey], rc.IdempotencyKey)
		}
	}
	dks := make([]string, 0, len(keys))
	for dk := range keys {
		dks = append(dks, dk)
	}
	sort.Strings(dks)
	for _, dk := range dks {
		r.check(InvWebhookOnce, len(keys[dk]) == 1, "webhook delivery %s applied %d times at the receiver, under Idempotency-Keys %v", dk, len(keys[dk]), keys[dk])
	}
}

// checkWebhookSent (after the drain): every webhook delivery recorded Sent was received and
// applied at the receiver.
func (c *checker) checkWebhookSent(r *report, jobs []job) {
	if c.webhooks == nil {
		return
	}
	applied := map[string]bool{}
	for _, rc := range c.webhooks() {
		applied[rc.DeliveryKey] = applied[rc.DeliveryKey] || rc.Applied > 0
	}
	for _, j := range jobs {
		if j.channel == "webhook" && j.status == "Sent" {
			r.check(InvWebhookOnce, applied[j.key], "webhook delivery %s (%s) is Sent and the receiver never applied it", j.key, j.schedulerKey)
		}
	}
}
