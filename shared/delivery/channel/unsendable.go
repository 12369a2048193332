package channel

import (
	"fmt"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
)

// refuseUnsendable is the permanent refusal a channel's Send starts with, before anything
// reaches its provider: recipientErr (the channel's ValidateRecipient of m.Recipient), a
// message without rendered content, and, when noAttachments is not "", a message that
// carries attachments the channel cannot send ("fcm: message k carries 2 attachment(s);
// push sends none": nothing is dropped silently). nil when m can be sent. channel names the
// channel in the errors.
func refuseUnsendable(channel string, m delivery.Message, recipientErr error, noAttachments string) error {
	if recipientErr != nil {
		return automation.Permanent(recipientErr)
	}
	if m.Content == nil {
		return automation.Permanent(fmt.Errorf("%s: message %s has no rendered content", channel, m.DeliveryKey))
	}
	if noAttachments != "" && len(m.Attachments) > 0 {
		return automation.Permanent(fmt.Errorf("%s: message %s carries %d attachment(s); %s", channel, m.DeliveryKey, len(m.Attachments), noAttachments))
	}
	return nil
}
