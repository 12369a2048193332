package delivery_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
)

// TestLogChannelConformance runs the channel conformance suite on the "log" channel. It
// writes to a local writer, so the provider-side cases are skipped with the reason below.
func TestLogChannelConformance(t *testing.T) {
	t.Parallel()
	channeltest.Run(t, func(t channeltest.TB) channeltest.Harness {
		return &logHarness{t: t, ch: &delivery.LogChannel{W: &lockedBuffer{}}}
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
	sc := bufio.NewScanner(bytes.NewReader(h.ch.W.(*lockedBuffer).bytes()))
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

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
