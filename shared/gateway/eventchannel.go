package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	ceext "github.com/cloudevents/sdk-go/v2/extensions"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/telemetry"
)

// EventChannelName is the delivery channel that turns a due reminder into an event through
// this gateway (docs/gateway.md#the-event-channel).
const EventChannelName = "event"

// EventChannelSource is the CloudEvents source of the events the channel ingests.
const EventChannelSource = "/automation/reminders"

// EventChannel is the "event" delivery channel: Send ingests one CloudEvent into the gateway,
// so a due reminder leaves the product as a registered event routed like any other (a
// DIRECT definition sends it to `events`, the rule/points engine's topic). UC-13 "dormant
// for 3 months" uses it: 90 days after the last qualifying transaction the reminder's
// `Dormant_User` event goes to the rule engine, and the same setting's inbox channel tells
// the customer.
//
// The event: type = the message's template key (a registered event type, e.g.
// "Dormant_User"), id = "rem-" + the first 40 hex digits of SHA-256(delivery key), source =
// EventChannelSource, businessunitid = the message's business unit, customerid = the
// recipient (a customer id), time = SentOn, data = the job's payload (for reminders
// settingName, targetDate, offsetDays, scheduledOn, localTime, timeZoneId and source).
//
// Outcomes: accepted or duplicate → sent (the gateway's ledger keeps (source, id) once, so a
// resend after a timeout or a crash routes nothing twice: Traits.Idempotent); rejected by
// the registry (an unregistered type, data against the type's schema) → permanent, naming
// the member and the reason; a store or registry failure → not delivered, retried.
type EventChannel struct {
	// Ingest is the gateway's Ingest (Service.Ingest), bound late by the composition root.
	Ingest func(ctx context.Context, scope automation.Scope, raws []events.Raw) ([]Result, error)
}

var _ delivery.Channel = (*EventChannel)(nil)

// Traits implements delivery.Channel: idempotent by event id; no template content needed.
func (c *EventChannel) Traits() delivery.Traits { return delivery.Traits{Idempotent: true} }

// ValidateRecipient implements delivery.Channel: the recipient is the customer id, the
// message's SessionId (1..MaxCustomerIDLength characters without spaces or control
// characters, the gateway's own rule for the customerid extension).
func (c *EventChannel) ValidateRecipient(id string) error {
	if id == "" || !tokenRE.MatchString(id) || utf16Len(id) > MaxCustomerIDLength {
		return fmt.Errorf("a customer id is a token of 1..%d characters", MaxCustomerIDLength)
	}
	return nil
}

// EventChannelID is the id of the event a delivery key produces.
func EventChannelID(deliveryKey string) string {
	sum := sha256.Sum256([]byte(deliveryKey))
	return "rem-" + hex.EncodeToString(sum[:])[:40]
}

// Send implements delivery.Channel; the provider reference is the event id.
func (c *EventChannel) Send(ctx context.Context, m delivery.Message) (string, error) {
	if err := c.ValidateRecipient(m.Recipient); err != nil {
		return "", automation.Permanent(err)
	}
	if len(m.Attachments) > 0 {
		return "", automation.Permanent(errors.New("the event channel carries no attachments"))
	}
	data := json.RawMessage(m.PayloadJSON)
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	id := EventChannelID(m.DeliveryKey)
	ev := map[string]any{"specversion": "1.0", "id": id, "source": EventChannelSource, "type": m.Template,
		"businessunitid": m.BusinessUnitID, "customerid": m.Recipient, "time": m.SentOn.UTC().Format(time.RFC3339),
		"datacontenttype": "application/json", "data": data}
	// The CloudEvents distributed-tracing extension: the trace of the delivery that emits the
	// event, so the gateway's ingest span links to it (docs/operations.md#trace-context).
	if tp, ts := telemetry.Inject(ctx); tp != "" {
		ev[ceext.TraceParentExtension] = tp
		if ts != "" {
			ev[ceext.TraceStateExtension] = ts
		}
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return "", automation.Permanent(fmt.Errorf("event channel: %w", err))
	}
	res, err := c.Ingest(ctx, automation.AllBusinessUnits(), []events.Raw{{JSON: raw}})
	if err != nil {
		return "", fmt.Errorf("event channel: %w", err)
	}
	if len(res) != 1 {
		return "", fmt.Errorf("event channel: %d results for one event", len(res))
	}
	if res[0].Status == StatusRejected {
		return "", automation.Permanent(fmt.Errorf("event channel: %s rejected at %s: %s", m.Template, res[0].Pointer, res[0].Reason))
	}
	return id, nil
}
