package channel

import (
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
)

// refuseUnsendable refuses, permanently and naming the channel and the delivery, a bad
// recipient, a message without rendered content, and attachments the channel cannot send;
// a sendable message passes. The texts are the ones FCM, the webhook and WhatsApp gave.
func TestRefuseUnsendable(t *testing.T) {
	t.Parallel()
	content := &delivery.Content{Text: "hi"}
	files := []delivery.Attachment{{}, {}}
	badAddr := errors.New("webhook: recipient is not an https URL")
	for _, c := range []struct {
		name, channel, none string
		m                   delivery.Message
		recipientErr        error
		want                string
	}{
		{"bad recipient", "webhook", "the webhook channel sends none", delivery.Message{DeliveryKey: "k1", Content: content}, badAddr, badAddr.Error()},
		{"no content", "fcm", "push sends none", delivery.Message{DeliveryKey: "k2"}, nil, "fcm: message k2 has no rendered content"},
		{"attachments", "fcm", "push sends none", delivery.Message{DeliveryKey: "k3", Content: content, Attachments: files},
			nil, "fcm: message k3 carries 2 attachment(s); push sends none"},
		{"attachments left to the caller", "whatsapp", "", delivery.Message{DeliveryKey: "k4", Content: content, Attachments: files}, nil, ""},
		{"sendable", "webhook", "the webhook channel sends none", delivery.Message{DeliveryKey: "k5", Content: content}, nil, ""},
	} {
		err := refuseUnsendable(c.channel, c.m, c.recipientErr, c.none)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", c.name, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || !automation.IsPermanent(err) {
			t.Errorf("%s: %v, want permanent %q", c.name, err, c.want)
		}
	}
}
