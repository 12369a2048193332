package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Message is what a channel sends.
type Message struct {
	DeliveryKey    string          `json:"deliveryKey"` // also the provider idempotency key
	SchedulerKey   string          `json:"schedulerKey"`
	BusinessUnitID string          `json:"businessUnitId"`
	Channel        string          `json:"channel"`
	Recipient      string          `json:"recipient"`
	Template       string          `json:"template"`
	PayloadJSON    string          `json:"-"`
	Payload        json.RawMessage `json:"payload,omitempty"` // PayloadJSON as JSON
	// Content is the rendered template; nil when the channel needs none and the template
	// key has no stored template.
	Content *Content  `json:"content,omitempty"`
	SentOn  time.Time `json:"sentOn"` // UTC, the dispatcher's clock
	// CreatedOn is when the delivery was created (UTC), the same on every attempt; zero
	// when the caller has no stored delivery (a campaign action). The SMS channel sends it
	// as ACS's repeatabilityFirstSent.
	CreatedOn time.Time `json:"-"`
	// ListUnsubscribe is the https URL of the one-click unsubscribe link (RFC 8058) of a
	// marketing message, set by the dispatcher's Gate; "" for a transactional one. The
	// e-mail channel sends it as List-Unsubscribe with List-Unsubscribe-Post.
	ListUnsubscribe string `json:"-"`
	// Attachments are the files to send with the message (only to channels whose Traits
	// say Attachments); loaded from blobs, never logged or stored.
	Attachments []Attachment `json:"-"`
}

// Content is a rendered message.
type Content struct {
	Subject         string `json:"subject"`
	Text            string `json:"text,omitempty"`
	HTML            string `json:"html,omitempty"`
	TemplateVersion int64  `json:"templateVersion"`
	// WhatsApp is the provider-side template a WhatsApp notification names (WhatsApp
	// business messages outside a conversation must be pre-approved templates); nil for
	// other channels.
	WhatsApp *WhatsAppTemplate `json:"whatsApp,omitempty"`
	// Data is a push template's rendered data members (kind "push"), which the push channel
	// adds to the message's data; nil for other kinds.
	Data map[string]string `json:"data,omitempty"`
	// Kind is the kind of the template rendered ("message", "push", "sms", "whatsapp");
	// "" when the content was not rendered from a stored template.
	Kind string `json:"kind,omitempty"`
}

// WhatsAppTemplate names an approved WhatsApp template and the values of its body
// parameters, in order ({{1}}, {{2}}, …).
type WhatsAppTemplate struct {
	Name     string   `json:"name"`
	Language string   `json:"language"` // e.g. "en_US"
	Values   []string `json:"values,omitempty"`
}

// Traits are what a channel declares to the dispatcher (docs/architecture.md#dispatch).
type Traits struct {
	// Idempotent: the provider deduplicates by the message's DeliveryKey (its idempotency
	// key), so resending after an UNKNOWN outcome or a crash is safe.
	Idempotent bool
	// NeedsContent: the message must carry a rendered template (subject and body); a
	// missing template is then a permanent failure.
	NeedsContent bool
	// Attachments: the channel sends Message.Attachments (e-mail). A payload that asks for
	// an attachment on another channel is a permanent failure.
	Attachments bool
	// TemplateKinds are the template kinds the channel sends (docs/channels.md#template-kinds);
	// nil means "message" only. A delivery whose template is of another kind fails
	// permanently, naming both, before anything is sent.
	TemplateKinds []string
}

// Accepts reports whether a template of kind can be sent on a channel with these traits.
func (t Traits) Accepts(kind string) bool {
	if kind == "" {
		kind = KindMessage
	}
	if t.TemplateKinds == nil {
		return kind == KindMessage
	}
	for _, k := range t.TemplateKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// Channel sends messages to one kind of destination.
type Channel interface {
	// Traits declares the channel's idempotency and content needs.
	Traits() Traits
	// ValidateRecipient checks that addr is an address this channel can send to; an
	// invalid address is a permanent failure for that recipient only.
	ValidateRecipient(addr string) error
	// Send delivers m and returns the provider's reference. A recipient ValidateRecipient
	// rejects is an automation.Permanent error that reaches no provider. Errors: marked
	// automation.Permanent = it can never succeed; marked automation.Unknown = the provider
	// may have acted (e.g. a timeout after the request was written); anything else = not
	// delivered, retry later (the Dispatcher maps the intents).
	Send(ctx context.Context, m Message) (providerRef string, err error)
}

// LookupStatus is what a provider says about an earlier send.
type LookupStatus string

// Lookup statuses.
const (
	LookupDelivered    LookupStatus = "Delivered"    // it was delivered: record Sent
	LookupNotDelivered LookupStatus = "NotDelivered" // it never arrived: sending again is safe
	LookupUnknown      LookupStatus = "Unknown"      // the provider cannot tell yet: ask later
)

// Looker is implemented by channels whose provider can say what happened to a send, by
// the message's DeliveryKey (the reconciliation path of an UNKNOWN outcome, docs/architecture.md#unknown-outcomes).
type Looker interface {
	Lookup(ctx context.Context, m Message) (status LookupStatus, providerRef string, err error)
}

// FuncChannel adapts a function to Channel: not idempotent, needs no content, accepts
// any non-empty recipient (tests, simulators).
type FuncChannel func(ctx context.Context, m Message) (string, error)

var _ Channel = FuncChannel(nil)

// Traits implements Channel.
func (f FuncChannel) Traits() Traits { return Traits{} }

// ValidateRecipient implements Channel.
func (f FuncChannel) ValidateRecipient(addr string) error {
	if addr == "" {
		return errors.New("empty recipient")
	}
	return nil
}

// Send calls f.
func (f FuncChannel) Send(ctx context.Context, m Message) (string, error) { return f(ctx, m) }
