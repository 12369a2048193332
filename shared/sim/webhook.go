package sim

import (
	"maps"
	"slices"
	"sort"

	"github.com/automation-platform/automation/shared/delivery/acssim"

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
	for _, dk := range slices.Sorted(maps.Keys(keys)) {
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

// The sms channel's part: the replay's simulated ACS deduplicates by repeatabilityRequestId
// (the UUIDv5 of the delivery key) and records every request with its tag (the delivery
// key). A resend after a lost answer, a timeout or a crash after the send must carry the
// same id, so ACS sends the delivery's SMS once.

// SMS implements replay.SMSObserver.
func (d *driver) SMS(requests func() []acssim.Request) { d.chk.sms = requests }

// checkSMSOnce (at every instant): ACS sent each delivery key's SMS at most once.
func (c *checker) checkSMSOnce(r *report) {
	if c.sms == nil {
		return
	}
	sent := map[string]int{}
	var keys []string
	for _, rq := range c.sms() {
		if rq.SentThisRequest {
			if sent[rq.Tag] == 0 {
				keys = append(keys, rq.Tag)
			}
			sent[rq.Tag]++
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.check(InvSMSOnce, sent[k] == 1, "sms delivery %s was sent %d times by ACS", k, sent[k])
	}
}

// checkSMSSent (after the drain): every sms delivery recorded Sent was sent by ACS.
func (c *checker) checkSMSSent(r *report, jobs []job) {
	if c.sms == nil {
		return
	}
	sent := map[string]bool{}
	for _, rq := range c.sms() {
		sent[rq.Tag] = sent[rq.Tag] || rq.SentThisRequest
	}
	for _, j := range jobs {
		if j.channel == "sms" && j.status == "Sent" {
			r.check(InvSMSOnce, sent[j.key], "sms delivery %s (%s) is Sent and ACS never sent it", j.key, j.schedulerKey)
		}
	}
}
