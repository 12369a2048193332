package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
)

// WhatsAppChannelName is the WhatsApp channel's name in deliveries and campaign actions.
const WhatsAppChannelName = "whatsapp"

// ACSMessagesAPIVersion is the Advanced Messaging REST API version the channel speaks.
const ACSMessagesAPIVersion = "2024-08-30"

// Advanced Messaging's repeatable-request headers (OASIS Repeatable Requests 1.0).
const (
	RepeatabilityRequestIDHeader = "Repeatability-Request-ID"
	RepeatabilityFirstSentHeader = "Repeatability-First-Sent"
)

// MaxWhatsAppValues bounds a template's body parameters.
const MaxWhatsAppValues = delivery.MaxWhatsAppParameters

// ValidateWhatsAppTemplate checks a template reference: a WhatsApp template name (lower-case
// letters, digits, '_'), a language code ("en" or "en_US") and at most 20 non-empty values.
func ValidateWhatsAppTemplate(t *delivery.WhatsAppTemplate) error {
	if t == nil {
		return errors.New("no WhatsApp template: a WhatsApp notification names an approved template")
	}
	if err := delivery.ValidateWhatsAppReference(t.Name, t.Language); err != nil {
		return err
	}
	switch {
	case len(t.Values) > MaxWhatsAppValues:
		return fmt.Errorf("WhatsApp template %q: %d values, at most %d", t.Name, len(t.Values), MaxWhatsAppValues)
	}
	for i, v := range t.Values {
		if v == "" {
			return fmt.Errorf("WhatsApp template %q: value %d is empty", t.Name, i+1)
		}
	}
	return nil
}

// WhatsAppConfig configures the WhatsApp channel.
type WhatsAppConfig struct {
	ConnectionString      string // the ACS resource's
	ChannelRegistrationID string // the WhatsApp channel connected to the resource (a GUID)
	Timeout               time.Duration
	Client                *http.Client
	Clock                 automation.Clock
}

// WhatsApp is the "whatsapp" channel: ACS Advanced Messaging template notifications, POST
// {endpoint}/messages/notifications:send, signed like SMS (ACSSign), with
// Repeatability-Request-ID (the UUIDv5 of the delivery key) and Repeatability-First-Sent
// (the delivery's CreatedOn, else the attempt) headers, so ACS deduplicates a resend while
// it tracks the id (docs/channels.md#whatsapp). Answers: 202 = sent (the receipt's
// messageId); 400 = permanent (an unknown template, a bad number, or the id reused with
// another body); 412 (first-sent outside ACS's window) = UNKNOWN; 409 (the first request is
// still in progress), 401, 403, 408 = retry; 429 = retry after Retry-After; 5xx or no answer
// after the request was written = UNKNOWN.
type WhatsApp struct {
	cfg WhatsAppConfig
	acs acsClient
}

var _ delivery.Channel = (*WhatsApp)(nil)

// NewWhatsApp validates cfg and returns the channel.
func NewWhatsApp(cfg WhatsAppConfig) (*WhatsApp, error) {
	acs, timeout, err := newACSClient(WhatsAppChannelName, cfg.ConnectionString, cfg.Timeout, cfg.Client, cfg.Clock)
	if err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(cfg.ChannelRegistrationID); err != nil {
		return nil, fmt.Errorf("whatsapp: channel registration id %q is not a GUID", cfg.ChannelRegistrationID)
	}
	cfg.Timeout, cfg.Clock = timeout, acs.clock
	return &WhatsApp{cfg: cfg, acs: acs}, nil
}

// Traits implements delivery.Channel: ACS deduplicates by Repeatability-Request-ID.
func (w *WhatsApp) Traits() delivery.Traits {
	return delivery.Traits{Idempotent: true, NeedsContent: true, TemplateKinds: []string{delivery.KindWhatsApp}}
}

// ValidateRecipient implements delivery.Channel: an E.164 number.
func (w *WhatsApp) ValidateRecipient(addr string) error { return ValidatePhoneNumber(addr) }

// WhatsAppRequest is the notifications:send body for a template notification.
type WhatsAppRequest struct {
	ChannelRegistrationID string           `json:"channelRegistrationId"`
	To                    []string         `json:"to"`
	Kind                  string           `json:"kind"` // "template"
	Template              WhatsAppTemplate `json:"template"`
}

// WhatsAppTemplate is the template object of WhatsAppRequest: values named p1, p2, … bound
// to the body's parameters in order.
type WhatsAppTemplate struct {
	Name     string              `json:"name"`
	Language string              `json:"language"`
	Values   []WhatsAppValue     `json:"values,omitempty"`
	Bindings *WhatsAppBindingSet `json:"bindings,omitempty"`
}

// WhatsAppValue is one text value.
type WhatsAppValue struct {
	Kind string `json:"kind"` // "text"
	Name string `json:"name"`
	Text struct {
		Text string `json:"text"`
	} `json:"text"`
}

// WhatsAppBindingSet binds values to the template's body.
type WhatsAppBindingSet struct {
	Kind     string `json:"kind"` // "whatsApp"
	WhatsApp struct {
		Body []struct {
			RefValue string `json:"refValue"`
		} `json:"body"`
	} `json:"whatsApp"`
}

// WhatsAppRequestOf is the request body for template t to recipient.
func WhatsAppRequestOf(channelRegistrationID, recipient string, t delivery.WhatsAppTemplate) WhatsAppRequest {
	r := WhatsAppRequest{ChannelRegistrationID: channelRegistrationID, To: []string{recipient}, Kind: "template",
		Template: WhatsAppTemplate{Name: t.Name, Language: t.Language}}
	if len(t.Values) > 0 {
		b := &WhatsAppBindingSet{Kind: "whatsApp"}
		for i, v := range t.Values {
			name := "p" + strconv.Itoa(i+1)
			val := WhatsAppValue{Kind: "text", Name: name}
			val.Text.Text = v
			r.Template.Values = append(r.Template.Values, val)
			b.WhatsApp.Body = append(b.WhatsApp.Body, struct {
				RefValue string `json:"refValue"`
			}{name})
		}
		r.Template.Bindings = b
	}
	return r
}

// Send implements delivery.Channel.
func (w *WhatsApp) Send(ctx context.Context, m delivery.Message) (string, error) {
	// The attachments are refused after the template is checked, below.
	if err := refuseUnsendable("whatsapp", m, w.ValidateRecipient(m.Recipient), ""); err != nil {
		return "", err
	}
	if err := ValidateWhatsAppTemplate(m.Content.WhatsApp); err != nil {
		return "", automation.Permanent(fmt.Errorf("whatsapp: message %s: %w", m.DeliveryKey, err))
	}
	if len(m.Attachments) > 0 {
		return "", automation.Permanent(fmt.Errorf("whatsapp: message %s carries %d attachment(s); template notifications send none", m.DeliveryKey, len(m.Attachments)))
	}
	raw, err := json.Marshal(WhatsAppRequestOf(w.cfg.ChannelRegistrationID, m.Recipient, *m.Content.WhatsApp))
	if err != nil {
		return "", automation.Permanent(err)
	}
	ans, err := w.acs.post(ctx, "/messages/notifications:send?api-version="+ACSMessagesAPIVersion, raw, http.Header{
		RepeatabilityRequestIDHeader: {RepeatabilityRequestID(m.DeliveryKey)},
		RepeatabilityFirstSentHeader: {repeatabilityFirstSent(m)},
	})
	if err != nil {
		return "", err
	}
	switch ans.Code {
	case http.StatusAccepted, http.StatusOK:
		var out struct {
			Receipts []struct {
				MessageID string `json:"messageId"`
				To        string `json:"to"`
			} `json:"receipts"`
		}
		if err := json.Unmarshal(ans.Body, &out); err != nil || len(out.Receipts) != 1 || out.Receipts[0].MessageID == "" {
			return "", automation.Unknown(fmt.Errorf("%s: not one receipt", ans.Status))
		}
		return out.Receipts[0].MessageID, nil
	case http.StatusPreconditionFailed:
		return "", automation.Unknown(fmt.Errorf("%s: the first-sent instant is outside ACS's repeatability window", ans.Status))
	}
	// 409: the first request with this id is still in progress.
	return "", w.acs.refusal(ans, http.StatusConflict)
}
