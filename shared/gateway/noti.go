package gateway

import (
	"context"
	"encoding/json"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
)

// UserMessageKey is the SchedulerKey of a noti route's deliveries: "user-message:" + the
// event's identity (events.Identity of its source and id), so every delivery key
// (delivery.Key of it, the channel and the recipient) is the same however often the message
// arrives, the send claim keeps each to one send, and two sources' events with the same id
// are two messages.
func UserMessageKey(source, eventID string) string {
	return "user-message:" + events.Identity(source, eventID)
}

// NotiDelivery turns a noti message (a fat Payload with its Notification) into immediate
// NotificationJobs and their dispatch messages, in one transaction (docs/gateway.md#noti).
type NotiDelivery struct {
	Store store.NotificationEnqueuer
	Clock automation.Clock
}

// Handle processes one noti message body. Errors: automation.Invalid for a body that is not
// a noti payload (dead-lettered by the caller); the store's otherwise (retried: the writes
// are idempotent by delivery key).
func (n *NotiDelivery) Handle(ctx context.Context, body []byte) error {
	var p Payload
	if err := strictjson.Decode(body, &p); err != nil {
		return automation.Invalid("body", "not a gateway payload: %v", err)
	}
	if p.EventID == "" || p.Route != RouteNoti || p.Notification == nil || len(p.Notification.Recipients) == 0 || len(p.Notification.Channels) == 0 {
		return automation.Invalid("body", "a noti payload needs event_id, route noti and a notification with channels and recipients")
	}
	render := map[string]any{"eventId": p.EventID, "eventType": p.SourceEvent, "customerId": p.CustomerID, "timestamp": p.Timestamp}
	if len(p.Data) > 0 {
		var data any
		_ = json.Unmarshal(p.Data, &data)
		render["data"] = data
	}
	var reqs []delivery.Request
	for _, ch := range p.Notification.Channels {
		for _, r := range p.Notification.Recipients {
			reqs = append(reqs, delivery.Request{SchedulerKey: UserMessageKey(p.Source, p.EventID), BusinessUnitID: p.BusinessUnitID, Channel: ch,
				Recipient: r, Template: p.Notification.Template, Payload: render})
		}
	}
	jobs, msgs, err := delivery.Build(reqs)
	if err != nil {
		return automation.Invalid("body", "%v", err)
	}
	return n.Store.NotificationEnqueue(ctx, store.NotificationEnqueueParams{Now: n.Clock.Now().UTC(), Deliveries: jobs, Outbox: msgs})
}
