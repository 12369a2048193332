package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// ChannelName is the delivery channel's name in settings and subscriptions.
const ChannelName = "inbox"

// MaxRecipientID bounds a recipient id (UTF-16 code units, the SQL Server column's unit).
const MaxRecipientID = 200

// DefaultTimeout bounds one store write of the channel.
const DefaultTimeout = 10 * time.Second

// Channel is the "inbox" delivery channel (docs/inbox.md): Send stores the rendered message
// for the recipient (an opaque user id of the domain app, not an address) in SQL and hands it
// to the live streams of this instance.
//
// Its provider is our own database, so its outcomes are:
//   - idempotent: the delivery key is the InboxMessage.DeliveryKey UNIQUE column, so a resend
//     stores nothing new (Traits.Idempotent);
//   - UNKNOWN: the write's answer did not arrive within Timeout (or the caller's context
//     ended) — the commit may have happened, so the dispatcher resends the same key on its
//     ladder, which stores nothing twice;
//   - permanent: an invalid recipient id, a message without rendered content (NeedsContent),
//     an attachment (the inbox keeps none: refused rather than dropped), or a delivery key
//     stored for another recipient (store.ErrConflict);
//   - any other store error: not delivered, retried.
type Channel struct {
	Store store.InboxStore
	// Broker, when set, receives every stored message for the live streams.
	Broker *Broker
	// Timeout bounds one write (default DefaultTimeout).
	Timeout time.Duration
}

var _ delivery.Channel = (*Channel)(nil)

// Traits implements delivery.Channel.
func (c *Channel) Traits() delivery.Traits {
	return delivery.Traits{Idempotent: true, NeedsContent: true}
}

// ValidateRecipient implements delivery.Channel: a recipient id is 1..MaxRecipientID UTF-16
// code units of valid UTF-8 without spaces or control characters.
func (c *Channel) ValidateRecipient(id string) error { return ValidateRecipientID(id) }

// ValidateRecipientID is the rule of ValidateRecipient, for the HTTP routes too.
func ValidateRecipientID(id string) error {
	switch {
	case id == "":
		return errors.New("empty recipient id")
	case !utf8.ValidString(id):
		return errors.New("recipient id is not UTF-8")
	case len(utf16.Encode([]rune(id))) > MaxRecipientID:
		return fmt.Errorf("recipient id longer than %d characters", MaxRecipientID)
	case strings.IndexFunc(id, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
	}) >= 0:
		return errors.New("recipient id holds a space or control character")
	}
	return nil
}

// Send implements delivery.Channel; the provider reference is "inbox:{recipient seq}".
func (c *Channel) Send(ctx context.Context, m delivery.Message) (string, error) {
	if err := c.ValidateRecipient(m.Recipient); err != nil {
		return "", automation.Permanent(err)
	}
	if len(m.Attachments) > 0 {
		return "", automation.Permanent(errors.New("inbox: the in-app inbox keeps no attachments"))
	}
	if m.Content == nil {
		return "", automation.Permanent(errors.New("inbox: no rendered content (the template is missing)"))
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.Store.InboxInsert(wctx, store.InboxInsertParams{BusinessUnitID: m.BusinessUnitID, RecipientID: m.Recipient,
		DeliveryKey: m.DeliveryKey, Template: m.Template, Subject: m.Content.Subject, Text: m.Content.Text, HTML: m.Content.HTML,
		PayloadJSON: m.PayloadJSON, Now: m.SentOn.UTC()})
	switch {
	case err == nil:
	case errors.Is(err, store.ErrConflict):
		return "", automation.Permanent(err)
	case wctx.Err() != nil:
		return "", automation.Unknown(fmt.Errorf("inbox: no answer from the database within %s (the message may be stored): %w", timeout, err))
	default:
		return "", err
	}
	if c.Broker != nil {
		c.Broker.Publish(res.Message) // also on a resend: a stream skips what it has
	}
	return fmt.Sprintf("inbox:%d", res.Message.Seq), nil
}
