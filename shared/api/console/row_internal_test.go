package console

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/support"
)

// The row page's deliveries show each one's provider reference (an ACS message id; a push's
// FCM message names with the device each reached and the tokens it retired, masked), the
// recipient as support masked it, a test send's mark, and the recipient gate's decision (an opt-out
// that skipped it, a quiet-hours wait) in a column of its own.
func TestRowPageShowsProviderReferenceAndTestMark(t *testing.T) {
	t.Parallel()
	sent := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	d := rowData{Detail: support.Detail{Deliveries: []support.Delivery{
		{DeliveryKey: "dlv_1", Channel: "sms", Recipient: "+614*******78", Status: "Sent", AttemptCount: 1,
			ProviderReference: "Outgoing_20261001_abc", SentOn: &sent, Test: true},
		{DeliveryKey: "dlv_2", Channel: "push", Recipient: "c***", Status: "Sent", AttemptCount: 1,
			ProviderReference: "projects/p/messages/0:1 to token fcm-li…abcdef; retired token fcm-de…uvwxyz (UNREGISTERED)", SentOn: &sent},
		{DeliveryKey: "dlv_3", Channel: "sms", Recipient: "+614*******11", Status: "Skipped", Decision: "Skipped: opted out of marketing sms messages (sms-stop)",
			LastError: "opted out of marketing sms messages (sms-stop)"},
		{DeliveryKey: "dlv_4", Channel: "push", Recipient: "c***", Status: "Queued", Decision: "Waiting for quiet hours to end at 2026-10-02 08:00 (Australia/Sydney)",
			LastError: "waiting for quiet hours to end at 2026-10-02 08:00 (Australia/Sydney)"},
	}}}
	var buf bytes.Buffer
	if err := parsePages()["row"].ExecuteTemplate(&buf, "layout", &pageData{Title: "Row", Base: Base, Data: d}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"Provider reference", "Outgoing_20261001_abc", "projects/p/messages/0:1 to token fcm-li…abcdef", "retired token fcm-de…uvwxyz (UNREGISTERED)", "614*******78",
		`sms <span class="status">test</span>`, "Preference / quiet hours",
		"<td>Skipped: opted out of marketing sms messages (sms-stop)</td>", "<td>Waiting for quiet hours to end at 2026-10-02 08:00 (Australia/Sydney)</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the row page lacks %q", want)
		}
	}
	if strings.Count(page, `<span class="status">test</span>`) != 1 {
		t.Error("the test mark is not on the test send alone")
	}
}
