package main

import (
	"testing"
	"time"
)

// TestReadmeLoyaltyTenMinutes runs every shell block of the README's "Loyalty events in ten
// minutes" against a live serve (runReadmeSection), with a 1-second OutboxRelay timer
// instead of 10 s. Each block's answer must hold what the README shows; serve's log must
// show the Direct event as the rule engine would receive it.
func TestReadmeLoyaltyTenMinutes(t *testing.T) {
	runReadmeSection(t, readmeSection{
		Heading: "Loyalty events in ten minutes",
		Env:     map[string]string{"OutboxRelaySchedule": "*/1 * * * * *"},
		Want: []string{
			"",
			`"id":"try-redeem-1","type":"Redeem_Item","status":"accepted","routes":["events","tracking"]`,
			`{"topic":"events","unpublished":0`,
			`"id":"try-scan-1","type":"Voucher_Used","status":"accepted","routes":["noti"]`,
			`"recipientId":"CUST-HCM-9","template":"voucher-used","subject":"Voucher VC-1001 used","text":"Your voucher VC-1001 was used at Pho 24."`,
			`"status":422,"detail":"/data/amount: does not match the registered schema (version 1): minimum: got 0, want 1"`,
		},
		After: func(t *testing.T, n int, stdout, logs *lockedBuffer) {
			if n == 5 { // the redemption's Direct event as the rule engine would receive it
				waitFor(t, "serve's log", logs, logs, `"destination":"events","messageId":"try-redeem-1:events","sessionId":"CUST-SYD-9"`, 10*time.Second)
			}
		},
	})
}
