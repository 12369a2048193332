package delivery_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
	"github.com/automation-platform/automation/shared/logsink"
)

// TestLogChannelConformance runs the channel conformance suite on the "log" channel. It
// writes to a local writer, so the provider-side cases are skipped with the reason below.
func TestLogChannelConformance(t *testing.T) {
	t.Parallel()
	channeltest.Run(t, func(t channeltest.TB) channeltest.Harness {
		return &logHarness{t: t, ch: &delivery.LogChannel{W: &logsink.Buffer{}}}
	})
}

type logHarness struct {
	t  channeltest.TB
	ch *delivery.LogChannel
}

func (h *logHarness) Channel() delivery.Channel { return h.ch }

func (h *logHarness) Capabilities() channeltest.Capabilities {
	return channeltest.Capabilities{
		NoIdempotencyKey:    "the log channel writes a line to a local writer; no provider deduplicates it",
		NoProviderFailures:  "the log channel writes a line to a local writer; there is no provider to refuse it or to leave it unanswered",
		NoAttachmentContent: "the log line records the message, not its files (Message.Attachments is not serialised)",
	}
}

func (h *logHarness) Recipient(b channeltest.Behaviour) string {
	switch b {
	case channeltest.Accept:
		return "amelia.nguyen@example.test"
	case channeltest.Invalid:
		return ""
	}
	h.t.Fatalf("the log harness has no recipient for %s", b)
	return ""
}

func (h *logHarness) Received() []channeltest.Received {
	var out []channeltest.Received
	sc := bufio.NewScanner(strings.NewReader(h.ch.W.(*logsink.Buffer).String()))
	for sc.Scan() {
		var m delivery.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			h.t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		r := channeltest.Received{DeliveryKey: m.DeliveryKey}
		if m.Content != nil {
			r.Subject, r.Text = m.Content.Subject, m.Content.Text
		}
		out = append(out, r)
	}
	return out
}
