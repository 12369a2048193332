package campaign

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
)

// ChannelProvider serves the NOTIFICATION_* actions through one of our delivery channels
// (log, webhook, smtp, inbox; docs/campaigns.md#providers): the command's EffectKey is the
// message's delivery key (the channel's Idempotency-Key), the parameters give the content
// ({"subject","text"}) and optionally the address ("recipient", default the execution's
// recipient id). The channel's Traits.Idempotent is the provider's Dedupe; a channel that
// implements delivery.Looker answers lookups.
type ChannelProvider struct {
	Name    string // the channel name ("log", "webhook", "email", "inbox")
	Channel delivery.Channel
	Clock   automation.Clock
}

var (
	_ Provider = (*ChannelProvider)(nil)
	_ Looker   = (*ChannelProvider)(nil)
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
}

func (p *ChannelProvider) message(c Call) (delivery.Message, error) {
	var np notificationParams
	if err := json.Unmarshal(c.Params, &np); err != nil {
		return delivery.Message{}, automation.Permanent(err)
	}
	to := np.Recipient
	if to == "" {
		to = c.RecipientID
	}
	tpl := np.Template
	if tpl == "" {
		tpl = "campaign:" + c.CampaignID
	}
	payload, _ := json.Marshal(map[string]any{"campaignId": c.CampaignID, "commandId": c.CommandID, "actionType": c.ActionType})
	return delivery.Message{DeliveryKey: c.EffectKey, SchedulerKey: c.CommandID, BusinessUnitID: c.BusinessUnitID, Channel: p.Name,
		Recipient: to, Template: tpl, PayloadJSON: string(payload), Payload: payload,
		Content: &delivery.Content{Subject: np.Subject, Text: np.Text}, SentOn: p.Clock.Now().UTC()}, nil
}

// Call implements Provider: the channel's ValidateRecipient (a bad address is permanent),
// then Send; the channel's errors already carry the intents.
func (p *ChannelProvider) Call(ctx context.Context, c Call) (Result, error) {
	m, err := p.message(c)
	if err != nil {
		return Result{}, err
	}
	if err := p.Channel.ValidateRecipient(m.Recipient); err != nil {
		return Result{}, automation.Permanent(err)
	}
	ref, err := p.Channel.Send(ctx, m)
	return Result{Reference: ref}, err
}

// Lookup implements Looker through the channel's delivery.Looker, if any.
func (p *ChannelProvider) Lookup(ctx context.Context, c Call) (LookupStatus, Result, error) {
	l, ok := p.Channel.(delivery.Looker)
	if !ok {
		return LookupUnknown, Result{}, nil
	}
	m, err := p.message(c)
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
