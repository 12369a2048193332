package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// ChannelProvider serves the NOTIFICATION_* actions through one of our delivery channels
// (log, webhook, smtp, inbox; docs/campaigns.md#providers): the command's EffectKey is the
// message's delivery key (the channel's Idempotency-Key), the parameters give the content
// ({"subject","text"}) and optionally the address ("recipient", default the execution's
// recipient id). The channel's Traits.Idempotent is the provider's Dedupe; a channel that
// implements delivery.Looker answers lookups.
//
// A "template" parameter names a stored notification template (the same templates the
// reminder deliveries render, per business unit with a default): when Templates is set and
// the template is stored, the content is rendered from it with delivery.RenderData's data
// plus "params" (the action's parameters) and "recipientId"; the subject/text parameters
// are then only the fallback for a template that is not stored. A template that is not
// stored and no subject/text, or a render error (a missing field), is a permanent failure.
type ChannelProvider struct {
	Name      string // the channel name ("log", "webhook", "email", "inbox")
	Channel   delivery.Channel
	Clock     automation.Clock
	Templates *delivery.Templates // nil: the subject/text parameters are sent as they are
}

var (
	_ Provider      = (*ChannelProvider)(nil)
	_ Looker        = (*ChannelProvider)(nil)
	_ GatedProvider = (*ChannelProvider)(nil)
)

// Traits implements Provider.
func (p *ChannelProvider) Traits() Traits { return Traits{Dedupe: p.Channel.Traits().Idempotent} }

// Serves implements Provider: every NOTIFICATION_* type.
func (p *ChannelProvider) Serves(t string) bool { return strings.HasPrefix(t, "NOTIFICATION_") }

type notificationParams struct {
	Subject   string `json:"subject"`
	Text      string `json:"text"`
	Recipient string `json:"recipient"`
	Template  string `json:"template"`
	// Category names the notification category for the recipient's preferences and quiet
	// hours (docs/channels.md#categories); "" lets the template key decide.
	Category string `json:"category"`
	// NOTIFICATION_WHATSAPP: the approved template and its body values.
	WhatsAppTemplate string   `json:"whatsappTemplate"`
	Language         string   `json:"language"`
	Values           []string `json:"values"`
}

func (p *ChannelProvider) message(ctx context.Context, c Call) (delivery.Message, error) {
	var np notificationParams
	if err := json.Unmarshal(c.Params, &np); err != nil {
		return delivery.Message{}, automation.Permanent(err)
	}
	m, err := p.plain(c, np)
	if err == nil && c.ActionType == "NOTIFICATION_WHATSAPP" {
		m.Content.WhatsApp = &delivery.WhatsAppTemplate{Name: np.WhatsAppTemplate, Language: np.Language, Values: np.Values}
		return m, nil
	}
	if err != nil || np.Template == "" || p.Templates == nil {
		return m, err
	}
	tpl, err := p.Templates.Get(ctx, np.Template, c.BusinessUnitID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if np.Subject == "" && np.Text == "" {
			return delivery.Message{}, automation.Permanent(fmt.Errorf("template %q is not stored for %s and the action has no subject or text", np.Template, c.BusinessUnitID))
		}
		return m, nil
	case err != nil:
		return delivery.Message{}, err
	}
	data, err := delivery.RenderData(m)
	if err != nil {
		return delivery.Message{}, automation.Permanent(err)
	}
	var params map[string]any
	dec := json.NewDecoder(bytes.NewReader(c.Params))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil {
		return delivery.Message{}, automation.Permanent(err)
	}
	data["params"], data["recipientId"] = params, c.RecipientID
	content, err := tpl.Render(data)
	if err != nil {
		return delivery.Message{}, automation.Permanent(fmt.Errorf("template %q: %w", np.Template, err))
	}
	m.Content = &content
	return m, nil
}

// plain is the message with the subject/text parameters as its content.
func (p *ChannelProvider) plain(c Call, np notificationParams) (delivery.Message, error) {
	to := np.Recipient
	if to == "" {
		to = c.RecipientID
	}
	tpl := np.Template
	if tpl == "" {
		tpl = "campaign:" + c.CampaignID
	}
	fields := map[string]any{"campaignId": c.CampaignID, "commandId": c.CommandID, "actionType": c.ActionType}
	if np.Category != "" {
		fields["category"] = np.Category
	}
	payload, _ := json.Marshal(fields)
	return delivery.Message{DeliveryKey: c.EffectKey, SchedulerKey: c.CommandID, BusinessUnitID: c.BusinessUnitID, Channel: p.Name,
		Recipient: to, Template: tpl, PayloadJSON: string(payload), Payload: payload,
		Content: &delivery.Content{Subject: np.Subject, Text: np.Text}, SentOn: p.Clock.Now().UTC()}, nil
}

// Call implements Provider: the channel's ValidateRecipient (a bad address is permanent),
// then Send; the channel's errors already carry the intents.
func (p *ChannelProvider) Call(ctx context.Context, c Call) (Result, error) {
	m, err := p.message(ctx, c)
	if err != nil {
		return Result{}, err
	}
	if err := p.Channel.ValidateRecipient(m.Recipient); err != nil {
		return Result{}, automation.Permanent(err)
	}
	ref, err := p.Channel.Send(ctx, m)
	return Result{Reference: ref}, err
}

// GateJob implements GatedProvider: the delivery the recipient gate decides for c, as the
// dispatcher's gate sees a reminder's (channel, recipient address, template key, and a payload
// whose "category" is the action's category parameter). A malformed parameter set is
// permanent.
func (p *ChannelProvider) GateJob(c Call) (store.NotificationJob, error) {
	var np notificationParams
	if err := json.Unmarshal(c.Params, &np); err != nil {
		return store.NotificationJob{}, automation.Permanent(err)
	}
	m, err := p.plain(c, np)
	if err != nil {
		return store.NotificationJob{}, err
	}
	return store.NotificationJob{DeliveryKey: m.DeliveryKey, EffectKey: c.EffectKey, SchedulerKey: m.SchedulerKey, BusinessUnitID: m.BusinessUnitID,
		Channel: m.Channel, Recipient: m.Recipient, Template: m.Template, PayloadJSON: m.PayloadJSON}, nil
}

// Lookup implements Looker through the channel's delivery.Looker, if any.
func (p *ChannelProvider) Lookup(ctx context.Context, c Call) (LookupStatus, Result, error) {
	l, ok := p.Channel.(delivery.Looker)
	if !ok {
		return LookupUnknown, Result{}, nil
	}
	m, err := p.message(ctx, c)
	if err != nil {
		return LookupUnknown, Result{}, err
	}
	st, ref, err := l.Lookup(ctx, m)
	switch st {
	case delivery.LookupDelivered:
		return LookupApplied, Result{Reference: ref}, err
	case delivery.LookupNotDelivered:
		return LookupNotApplied, Result{}, err
	}
	return LookupUnknown, Result{}, err
}

// canLookup reports whether p answers lookups.
func canLookup(p Provider) bool {
	switch v := p.(type) {
	case *HTTPProvider:
		return v.HasLookup
	case *ChannelProvider:
		_, ok := v.Channel.(delivery.Looker)
		return ok
	case Looker:
		return true
	}
	return false
}
