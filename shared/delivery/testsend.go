package delivery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// TestSendKeyPrefix starts the SchedulerKey of every test send (docs/channels.md#test-send):
// the mark a test delivery carries in its NotificationJob row and in each of its facts, for
// support and the reporting to tell it from a real one. No reminder, report or event key
// starts with it (theirs begin with their setting GUID, "report:" or "noti:").
const TestSendKeyPrefix = "test-send:"

// IsTestSend reports whether a delivery's SchedulerKey marks it as a test send.
func IsTestSend(schedulerKey string) bool { return strings.HasPrefix(schedulerKey, TestSendKeyPrefix) }

// TestSendRequest asks for one test delivery of a template: to one Recipient on one
// Channel, rendered with Payload (a JSON object; empty: {}), for BusinessUnitID.
type TestSendRequest struct {
	BusinessUnitID string
	Template       string
	Channel        string
	Recipient      string
	Payload        json.RawMessage
	Operator       string // who asked (logged by the API layer's audit)
}

// TestSendResult is the queued test delivery.
type TestSendResult struct {
	DeliveryKey     string `json:"deliveryKey"`
	SchedulerKey    string `json:"schedulerKey"` // TestSendKeyPrefix + a unique id
	Channel         string `json:"channel"`
	Template        string `json:"template"`
	TemplateVersion int64  `json:"templateVersion"` // the version the check rendered; the send renders the latest at its time
	Test            bool   `json:"test"`
	Status          string `json:"status"` // Queued
}

// TestSender queues test sends: real deliveries through the dispatcher, with the channel's
// guarantees, marked by their SchedulerKey.
type TestSender struct {
	Store     store.NotificationEnqueuer
	Templates *Templates
	Channels  map[string]Channel
	Clock     automation.Clock
}

// Send checks the request as the dispatcher would (the channel exists, takes the recipient
// and the template's kind, and the template renders with the payload) and queues one
// delivery. Errors, nothing queued: automation.Invalid naming "channel", "recipient",
// "payload" or "payload.<field>"; CodeNotFound for a template stored neither for the unit
// nor as the default. Each call is a new delivery (a new SchedulerKey): an HTTP caller that
// retries sends an Idempotency-Key.
func (s *TestSender) Send(ctx context.Context, r TestSendRequest) (TestSendResult, error) {
	if r.Channel == "" {
		return TestSendResult{}, automation.Invalid("channel", "is required")
	}
	ch, ok := s.Channels[r.Channel]
	if !ok || ch == nil {
		return TestSendResult{}, automation.Invalid("channel", "%q is not a channel configured here (configured: %s)", r.Channel,
			strings.Join(slices.Sorted(maps.Keys(s.Channels)), ", "))
	}
	if strings.TrimSpace(r.Recipient) == "" {
		return TestSendResult{}, automation.Invalid("recipient", "is required")
	}
	if err := ch.ValidateRecipient(strings.TrimSpace(r.Recipient)); err != nil {
		return TestSendResult{}, automation.Invalid("recipient", "is not a %s recipient: %v", r.Channel, err)
	}
	payload := strings.TrimSpace(string(r.Payload))
	if payload == "" || payload == "null" {
		payload = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(payload), &obj); err != nil {
		return TestSendResult{}, automation.Invalid("payload", "must be a JSON object")
	}
	tpl, err := s.Templates.Get(ctx, r.Template, r.BusinessUnitID)
	if errors.Is(err, store.ErrNotFound) {
		return TestSendResult{}, automation.Errorf(automation.CodeNotFound, "template %q is stored neither for %s nor as the default", r.Template, r.BusinessUnitID)
	}
	if err != nil {
		return TestSendResult{}, err
	}
	tr := ch.Traits()
	if !tr.Accepts(tpl.Kind) {
		return TestSendResult{}, automation.Invalid("channel", "template %q v%d is a %s template; channel %s sends %s", tpl.Key, tpl.Version, tpl.Kind, r.Channel, kindsOf(tr))
	}
	id, err := s.newID()
	if err != nil {
		return TestSendResult{}, err
	}
	schedulerKey := TestSendKeyPrefix + id
	data, err := RenderData(Message{DeliveryKey: Key(schedulerKey, r.Channel, r.Recipient), SchedulerKey: schedulerKey, BusinessUnitID: r.BusinessUnitID,
		Channel: r.Channel, Recipient: strings.TrimSpace(r.Recipient), Template: r.Template, PayloadJSON: payload})
	if err != nil {
		return TestSendResult{}, automation.Invalid("payload", "must be a JSON object")
	}
	if _, err := tpl.Render(data); err != nil {
		var re *RenderError
		if errors.As(err, &re) && re.Field != "" {
			return TestSendResult{}, automation.Invalid("payload."+re.Field, "template %q v%d (%s) needs this field; the payload has none", tpl.Key, re.Version, re.Part)
		}
		if errors.As(err, &re) {
			return TestSendResult{}, automation.Invalid("payload", "template %q v%d (%s) does not render: %v", tpl.Key, re.Version, re.Part, re.Err)
		}
		return TestSendResult{}, err
	}
	jobs, msgs, err := Build([]Request{{SchedulerKey: schedulerKey, BusinessUnitID: r.BusinessUnitID, Channel: r.Channel, Recipient: r.Recipient,
		Template: r.Template, Payload: json.RawMessage(payload)}})
	if err != nil {
		return TestSendResult{}, err
	}
	if err := s.Store.NotificationEnqueue(ctx, store.NotificationEnqueueParams{Now: s.Clock.Now(), Deliveries: jobs, Outbox: msgs}); err != nil {
		return TestSendResult{}, fmt.Errorf("test send: %w", err)
	}
	return TestSendResult{DeliveryKey: jobs[0].DeliveryKey, SchedulerKey: schedulerKey, Channel: r.Channel, Template: r.Template,
		TemplateVersion: tpl.Version, Test: true, Status: string(store.NotificationQueued)}, nil
}

// newID is the test send's unique id: the UTC instant (from the Clock) and 64 random bits.
func (s *TestSender) newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("test send: id: %w", err)
	}
	return s.Clock.Now().UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:]), nil
}
