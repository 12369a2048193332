package main

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/logsink"
)

// TestReadmeLoyaltyTenMinutes runs every shell block of docs/loyalty-in-ten-minutes.md,
// "Loyalty events in ten minutes" (moved there from the README with this test) against a live
// serve (runReadmeSection), with a 1-second OutboxRelay timer instead of 10 s. Each block's
// answer must hold what the guide shows; serve's log must
// show the login's trigger event and the Direct event as the rule engine would receive them.
func TestReadmeLoyaltyTenMinutes(t *testing.T) {
	runReadmeSection(t, readmeSection{
		File:    "docs/loyalty-in-ten-minutes.md",
		Heading: "Loyalty events in ten minutes",
		Env:     map[string]string{"OutboxRelaySchedule": "*/1 * * * * *"},
		Want: []string{
			"",
			`{"businessUnitId":"bu-hcm","campaignId":"first-login-welcome","runId":"run-1","name":"First login welcome","status":"ACTIVE"`,
			`{"businessUnitId":"bu-hcm","campaignId":"first-login-welcome","currency":"VND","maxCost":"1000000","cost":"0","reservedCost":"0","available":"1000000","status":"ACTIVE","heldReservations":0,"oldestHeldAgeSeconds":0,"version":1`,
			`"id":"try-login-1","type":"Login","status":"accepted","routes":["tracking"]`, // a COUNTER event (seed 003)
			`{"attribute":"first_login","type":"boolean","value":true`,
			`"recipientId":"CUST-HCM-8","template":"campaign:first-login-welcome","subject":"Welcome to the club"`,
			`"id":"try-redeem-1","type":"Redeem_Item","status":"accepted","routes":["events","tracking"]`,
			all(`"registrySeq":`, `{"eventType":"Redeem_Item","accepted":1,"duplicate":0,"rejected":0,"registryVersion":1}`, `{"topic":"events","unpublished":0`),
			`"id":"try-scan-1","type":"Voucher_Used","status":"accepted","routes":["noti"]`,
			`"recipientId":"CUST-HCM-9","template":"voucher-used","subject":"Voucher VC-1001 used","text":"Your voucher VC-1001 was used at Pho 24."`,
			`"status":422,"detail":"/data/amount: does not match the registered schema (version 1): minimum: got 0, want 1"`,
		},
		After: func(t *testing.T, n int, stdout, logs *logsink.Buffer) {
			if n == 7 { // every events message published: the log shows them as the rule engine would receive them
				// The login's trigger event: its id is a function of the login's identity (source
				// and id), the customer and the attribute.
				waitFor(t, "serve's log", logs, logs, `"destination":"events","messageId":"attr-gen-928c378f20634947123d5819:events","sessionId":"CUST-HCM-8","payload":"{\"event_id\":\"attr-gen-928c378f20634947123d5819\",\"event_name\":\"First_Login_Reward\"`, 10*time.Second)
				// The Direct event's MessageId is its identity (docs/gateway.md#event-identity).
				waitFor(t, "serve's log", logs, logs, `"destination":"events","messageId":"`+events.Identity("/member-app", "try-redeem-1")+`:events","sessionId":"CUST-SYD-9"`, 10*time.Second)
			}
		},
	})
}
