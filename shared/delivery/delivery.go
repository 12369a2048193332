// Package delivery is stage ③ (ARCHITECTURE.md §5): delivery requests written with a
// completed scheduler row, the outbox relay that publishes them after commit, and the
// dispatcher that sends each one exactly once behind a send claim keyed by its delivery key.
package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
)

// DispatchQueue is the queue that carries delivery requests to NotificationDispatch (§1.3).
const DispatchQueue = "notification-dispatch"

// Key returns the delivery key of one (SchedulerKey, channel, recipient): "dlv_" + 32 hex
// digits of sha256 over the three, with the recipient trimmed and lower-cased. It is the
// NotificationJob's identity, the outbox MessageId and the provider idempotency key, so a
// redelivered request can never produce a second delivery (§5.2).
func Key(schedulerKey, channel, recipient string) string {
	sum := sha256.Sum256([]byte(schedulerKey + "\x00" + channel + "\x00" + strings.ToLower(strings.TrimSpace(recipient))))
	return "dlv_" + hex.EncodeToString(sum[:16])
}

// DispatchMessage is the body of a notification-dispatch message (JSON).
type DispatchMessage struct {
	DeliveryKey string `json:"deliveryKey"`
}

// Request describes one delivery to build.
type Request struct {
	SchedulerKey   string
	BusinessUnitID string
	Channel        string
	Recipient      string
	Template       string
	Payload        any // JSON-encodable render data
}

// Build turns requests into NotificationJob rows and their outbox messages, ready for
// store.SchedulerCompleteParams. Duplicate (channel, recipient) pairs collapse to one.
func Build(reqs []Request) ([]store.NotificationRequest, []store.OutboxMessage, error) {
	var jobs []store.NotificationRequest
	var msgs []store.OutboxMessage
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.Channel == "" || r.Recipient == "" {
			return nil, nil, fmt.Errorf("delivery: channel and recipient are required (key %s)", r.SchedulerKey)
		}
		k := Key(r.SchedulerKey, r.Channel, r.Recipient)
		if seen[k] {
			continue
		}
		seen[k] = true
		payload, err := json.Marshal(r.Payload)
		if err != nil {
			return nil, nil, fmt.Errorf("delivery: payload: %w", err)
		}
		body, _ := json.Marshal(DispatchMessage{DeliveryKey: k})
		jobs = append(jobs, store.NotificationRequest{DeliveryKey: k, SchedulerKey: r.SchedulerKey, BusinessUnitID: r.BusinessUnitID,
			Channel: r.Channel, Recipient: strings.TrimSpace(r.Recipient), Template: r.Template, PayloadJSON: string(payload)})
		msgs = append(msgs, store.OutboxMessage{MessageID: k, Destination: DispatchQueue, Body: body})
	}
	return jobs, msgs, nil
}

// Relay publishes unsent outbox messages (OutboxRelay, §5.1): it marks a message published
// only after the broker accepted it, and retries later with the same MessageId.
type Relay struct {
	Store     store.DeliveryStore
	Publisher bus.Publisher
	Clock     automation.Clock
	Batch     int // messages per RunOnce; default 100
	Log       *slog.Logger
}

// RunOnce publishes up to Batch messages, oldest first, and returns how many were published.
// It stops at the first publish failure (order is kept; the rest wait for the next run).
func (r *Relay) RunOnce(ctx context.Context) (int, error) {
	batch := r.Batch
	if batch == 0 {
		batch = 100
	}
	msgs, err := r.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: batch})
	if err != nil {
		return 0, err
	}
	var done []int64
	var pubErr error
	for _, m := range msgs {
		if err := r.Publisher.Publish(ctx, bus.Message{ID: m.MessageID, Destination: m.Destination, SessionID: m.SessionID, Body: m.Body}); err != nil {
			pubErr = fmt.Errorf("outbox relay: publish %s: %w", m.MessageID, err)
			_ = r.Store.OutboxRecordAttempt(ctx, m.ID, r.Clock.Now())
			break
		}
		done = append(done, m.ID)
	}
	if len(done) > 0 {
		if err := r.Store.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: done, Now: r.Clock.Now()}); err != nil {
			// Published but not marked: the next run publishes again with the same MessageId,
			// which duplicate detection and the send claim absorb.
			return 0, errors.Join(pubErr, err)
		}
	}
	return len(done), pubErr
}

// Message is what a channel sends.
type Message struct {
	DeliveryKey    string          `json:"deliveryKey"` // also the provider idempotency key
	SchedulerKey   string          `json:"schedulerKey"`
	BusinessUnitID string          `json:"businessUnitId"`
	Channel        string          `json:"channel"`
	Recipient      string          `json:"recipient"`
	Template       string          `json:"template"`
	PayloadJSON    string          `json:"-"`
	Payload        json.RawMessage `json:"payload,omitempty"` // PayloadJSON as JSON, for the log channel
	SentOn         time.Time       `json:"sentOn"`            // UTC, the dispatcher's clock
}

// Channel sends one message and returns a provider reference.
type Channel interface {
	Send(ctx context.Context, m Message) (providerRef string, err error)
}

// ErrInFlight means another sender holds a live send claim on the delivery key; the
// message is redelivered later rather than dropped.
var ErrInFlight = errors.New("delivery: another sender holds the send claim")

// Dispatcher sends queued deliveries (NotificationDispatch, §5.2).
type Dispatcher struct {
	Store    store.DeliveryStore
	Channels map[string]Channel
	Clock    automation.Clock
	Lease    time.Duration // send-claim lease; default 2 min
	Log      *slog.Logger
}

// Handle is the bus handler for DispatchQueue. A redelivered message for a job already
// sent is completed without sending; a malformed body or an unknown delivery key is
// dead-lettered (it can never succeed).
func (d *Dispatcher) Handle(ctx context.Context, m bus.Message) error {
	var body DispatchMessage
	dec := json.NewDecoder(strings.NewReader(string(m.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.DeliveryKey == "" {
		return bus.DeadLetter(fmt.Errorf("dispatch message %s: malformed body", m.ID))
	}
	lease := d.Lease
	if lease == 0 {
		lease = 2 * time.Minute
	}
	res, err := d.Store.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: body.DeliveryKey, Now: d.Clock.Now(), Lease: lease})
	if errors.Is(err, store.ErrNotFound) {
		return bus.DeadLetter(fmt.Errorf("dispatch message %s: no NotificationJob %s", m.ID, body.DeliveryKey))
	}
	if err != nil {
		return err
	}
	if !res.Claimed {
		if res.Job.Status == store.NotificationSending {
			return ErrInFlight
		}
		return nil // already Sent or Failed: a duplicate message
	}
	job := res.Job
	ch, ok := d.Channels[job.Channel]
	now := d.Clock.Now()
	if !ok {
		return d.finish(ctx, job, now, store.NotificationFailed, "", fmt.Sprintf("unknown channel %q", job.Channel))
	}
	ref, sendErr := ch.Send(ctx, Message{DeliveryKey: job.DeliveryKey, SchedulerKey: job.SchedulerKey, BusinessUnitID: job.BusinessUnitID,
		Channel: job.Channel, Recipient: job.Recipient, Template: job.Template, PayloadJSON: job.PayloadJSON, Payload: rawJSON(job.PayloadJSON), SentOn: now})
	if sendErr != nil {
		// The claim stays until its lease expires, then a redelivery re-claims it. Channels
		// that cannot say whether a send happened are handled by the UNKNOWN flow (issue 5).
		return fmt.Errorf("dispatch %s: %w", job.DeliveryKey, sendErr)
	}
	if err := d.finish(ctx, job, d.Clock.Now(), store.NotificationSent, ref, ""); err != nil {
		return err
	}
	if d.Log != nil {
		// The recipient is personal data: the log handler masks it (shared/logmask).
		d.Log.InfoContext(ctx, "delivery sent", "deliveryKey", job.DeliveryKey, "schedulerKey", job.SchedulerKey,
			"businessUnitId", job.BusinessUnitID, "channel", job.Channel, "recipient", job.Recipient, "step", "dispatch")
	}
	return nil
}

func rawJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return nil
}

func (d *Dispatcher) finish(ctx context.Context, job store.NotificationJob, now time.Time, st store.NotificationStatus, ref, msg string) error {
	err := d.Store.NotificationFinish(ctx, store.NotificationFinishParams{ID: job.ID, Token: job.Version, Now: now, Status: st, ProviderReference: ref, Error: msg})
	if errors.Is(err, store.ErrLeaseLost) {
		return nil // another sender took over after our lease expired; it records the outcome
	}
	return err
}
