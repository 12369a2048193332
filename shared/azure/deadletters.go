package azure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/automation-platform/automation/shared/bus"
)

// DeadLetterEntity is one Service Bus entity whose dead-letter subqueue is read: a queue, or
// a topic's subscription (the entities the functions consume, topology.Functions).
type DeadLetterEntity struct {
	Queue               string
	Topic, Subscription string
}

// path is the entity's name in a dead letter's ID: "queue" or "topic/subscription".
func (e DeadLetterEntity) path() string {
	if e.Queue != "" {
		return e.Queue
	}
	return e.Topic + "/" + e.Subscription
}

// destination is where a requeued message is sent: the queue, or the topic.
func (e DeadLetterEntity) destination() string {
	if e.Queue != "" {
		return e.Queue
	}
	return e.Topic
}

// DefaultDeadLetterScan bounds the messages one call reads from one dead-letter subqueue.
const DefaultDeadLetterScan = 1000

// ServiceBusDeadLetters implements bus.DeadLetterBox over the dead-letter subqueue
// ("{entity}/$DeadLetterQueue") of each entity, read with a receiver on
// azservicebus.SubQueueDeadLetter:
//
//   - a dead letter's ID is "{queue or topic/subscription}@{SequenceNumber}" (the subqueue's
//     sequence number), listed entity by entity in Entities' order, oldest first, by
//     PeekMessages (nothing is locked or removed);
//   - Reason is the broker's DeadLetterReason and DeadLetterErrorDescription (e.g.
//     "MaxDeliveryCountExceeded");
//   - a requeue (a discard likewise, without the copy) receives the subqueue's messages in peek-lock mode until it holds that
//     sequence number (abandoning the others at once), sends a copy to the entity's queue or
//     topic, then completes the dead letter (an abandoned one if the send fails). The copy's
//     MessageId is the original's with "~rq{SequenceNumber}" (hashed to fit 128 characters),
//     because the entity's duplicate detection would drop the original id within its window;
//     consumers deduplicate by what the body names (event id, delivery key, command id), not
//     by MessageId. A copy sent to a topic reaches every subscription of it again, each of
//     which deduplicates by the body the same way.
//
// Every call reads at most MaxScan messages per subqueue. Written from the azservicebus
// documentation and sources and never run against a live namespace (there is none where
// this repository's tests run): only the ID format and the mapping are unit-tested.
//
// What the broker dead-letters is here (MaxDeliveryCount reached, a lock lost too often). A
// message a function recorded as a dead letter and completed (a custom handler cannot
// dead-letter a message itself) is not: on Azure it is the diagnostics blob and trace row
// of docs/operations.md#dead-letters.
type ServiceBusDeadLetters struct {
	Publisher *ServiceBusPublisher
	Entities  []DeadLetterEntity
	MaxScan   int // 0: DefaultDeadLetterScan
}

var _ bus.DeadLetterBox = (*ServiceBusDeadLetters)(nil)

func (d *ServiceBusDeadLetters) maxScan() int {
	if d.MaxScan > 0 {
		return d.MaxScan
	}
	return DefaultDeadLetterScan
}

// deadLetterID formats and parseDeadLetterID reads a dead letter's ID.
func deadLetterID(e DeadLetterEntity, seq int64) string {
	return e.path() + "@" + strconv.FormatInt(seq, 10)
}

func parseDeadLetterID(id string) (path string, seq int64, ok bool) {
	i := strings.LastIndexByte(id, '@')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}

func (d *ServiceBusDeadLetters) entity(path string) (int, bool) {
	for i, e := range d.Entities {
		if e.path() == path {
			return i, true
		}
	}
	return 0, false
}

func (d *ServiceBusDeadLetters) receiver(e DeadLetterEntity) (*azservicebus.Receiver, error) {
	opts := &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter, ReceiveMode: azservicebus.ReceiveModePeekLock}
	if e.Queue != "" {
		return d.Publisher.client.NewReceiverForQueue(e.Queue, opts)
	}
	return d.Publisher.client.NewReceiverForSubscription(e.Topic, e.Subscription, opts)
}

// toDeadLetter maps a message of e's dead-letter subqueue.
func toDeadLetter(e DeadLetterEntity, m *azservicebus.ReceivedMessage) bus.DeadLetter {
	out := bus.DeadLetter{Message: bus.Message{ID: m.MessageID, Destination: e.destination(), Body: append([]byte(nil), m.Body...),
		DeliveryCount: int(m.DeliveryCount)}}
	if m.SequenceNumber != nil {
		out.ID = deadLetterID(e, *m.SequenceNumber)
	}
	if m.SessionID != nil {
		out.Message.SessionID = *m.SessionID
	}
	var why []string
	if m.DeadLetterReason != nil && *m.DeadLetterReason != "" {
		why = append(why, *m.DeadLetterReason)
	}
	if m.DeadLetterErrorDescription != nil && *m.DeadLetterErrorDescription != "" {
		why = append(why, *m.DeadLetterErrorDescription)
	}
	out.Reason = strings.Join(why, ": ")
	return out
}

// peek reads up to n messages of e's subqueue from sequence number from.
func (d *ServiceBusDeadLetters) peek(ctx context.Context, r *azservicebus.Receiver, from int64, n int) ([]*azservicebus.ReceivedMessage, error) {
	ms, err := r.PeekMessages(ctx, n, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &from})
	if err != nil {
		return nil, fmt.Errorf("azure service bus: peek dead letters: %w", err)
	}
	return ms, nil
}

// DeadLetterList implements bus.DeadLetterBox.
func (d *ServiceBusDeadLetters) DeadLetterList(ctx context.Context, p bus.DeadLetterListParams) ([]bus.DeadLetter, string, error) {
	limit := min(max(p.Limit, 1), bus.MaxDeadLetterPage)
	start, from := 0, int64(0)
	if p.After != "" {
		path, seq, ok := parseDeadLetterID(p.After)
		i, known := d.entity(path)
		if !ok || !known {
			return nil, "", bus.ErrDeadLetterNotFound
		}
		start, from = i, seq+1
	}
	var out []bus.DeadLetter
	for i := start; i < len(d.Entities); i++ {
		e := d.Entities[i]
		if i > start {
			from = 0
		}
		if p.Destination != "" && e.destination() != p.Destination {
			continue
		}
		r, err := d.receiver(e)
		if err != nil {
			return nil, "", err
		}
		scanned := 0
		for scanned < d.maxScan() {
			ms, err := d.peek(ctx, r, from, min(100, d.maxScan()-scanned))
			if err != nil {
				_ = r.Close(ctx)
				return nil, "", err
			}
			if len(ms) == 0 {
				break
			}
			scanned += len(ms)
			for _, m := range ms {
				if m.SequenceNumber != nil {
					from = *m.SequenceNumber + 1
				}
				dl := toDeadLetter(e, m)
				if p.Keep != nil && !p.Keep(dl) {
					continue
				}
				if len(out) == limit {
					_ = r.Close(ctx)
					return out, out[len(out)-1].ID, nil
				}
				out = append(out, dl)
			}
		}
		_ = r.Close(ctx)
	}
	return out, "", nil
}

// open resolves a dead letter's id to its entity and sequence number and opens a receiver
// on that entity's dead-letter subqueue (the caller closes it). Errors:
// bus.ErrDeadLetterNotFound for an id that is malformed or names no entity of ours; the
// SDK's error when the receiver cannot be made.
func (d *ServiceBusDeadLetters) open(id string) (DeadLetterEntity, int64, *azservicebus.Receiver, error) {
	path, seq, ok := parseDeadLetterID(id)
	i, known := d.entity(path)
	if !ok || !known {
		return DeadLetterEntity{}, 0, nil, bus.ErrDeadLetterNotFound
	}
	e := d.Entities[i]
	r, err := d.receiver(e)
	return e, seq, r, err
}

// DeadLetterGet implements bus.DeadLetterBox.
func (d *ServiceBusDeadLetters) DeadLetterGet(ctx context.Context, id string) (bus.DeadLetter, error) {
	e, seq, r, err := d.open(id)
	if err != nil {
		return bus.DeadLetter{}, err
	}
	defer r.Close(ctx)
	ms, err := d.peek(ctx, r, seq, 1)
	if err != nil {
		return bus.DeadLetter{}, err
	}
	if len(ms) == 0 || ms[0].SequenceNumber == nil || *ms[0].SequenceNumber != seq {
		return bus.DeadLetter{}, bus.ErrDeadLetterNotFound
	}
	return toDeadLetter(e, ms[0]), nil
}

// requeueID is the MessageId of a requeued copy: the original's with "~rq{seq}", or, when
// that is over Service Bus's 128 characters, a prefix of it with a hash of the whole.
func requeueID(original string, seq int64) string {
	id := original + "~rq" + strconv.FormatInt(seq, 10)
	if len(id) <= maxServiceBusMessageID {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	h := "~" + hex.EncodeToString(sum[:12])
	return id[:maxServiceBusMessageID-len(h)] + h
}

// DeadLetterRequeue implements bus.DeadLetterBox (see ServiceBusDeadLetters).
func (d *ServiceBusDeadLetters) DeadLetterRequeue(ctx context.Context, id string) (bus.DeadLetter, error) {
	return d.take(ctx, id, func(dl bus.DeadLetter, seq int64) error {
		copyMsg := dl.Message
		copyMsg.ID = requeueID(dl.Message.ID, seq)
		return d.Publisher.Publish(ctx, copyMsg)
	})
}

// DeadLetterDiscard implements bus.DeadLetterBox: the dead letter is received and completed
// (removed from its subqueue) without a copy being sent.
func (d *ServiceBusDeadLetters) DeadLetterDiscard(ctx context.Context, id string) (bus.DeadLetter, error) {
	return d.take(ctx, id, func(bus.DeadLetter, int64) error { return nil })
}

// take receives the subqueue's messages in peek-lock mode until it holds id's sequence
// number (abandoning the others at once), runs then on it and completes it; an error of then
// abandons it (it stays listed). Errors: bus.ErrDeadLetterNotFound when it is not within
// MaxScan messages.
func (d *ServiceBusDeadLetters) take(ctx context.Context, id string, then func(dl bus.DeadLetter, seq int64) error) (bus.DeadLetter, error) {
	e, seq, r, err := d.open(id)
	if err != nil {
		return bus.DeadLetter{}, err
	}
	defer r.Close(ctx)
	for scanned := 0; scanned < d.maxScan(); {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ms, err := r.ReceiveMessages(rctx, min(50, d.maxScan()-scanned), nil)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return bus.DeadLetter{}, fmt.Errorf("azure service bus: receive dead letters: %w", err)
		}
		if len(ms) == 0 {
			break
		}
		scanned += len(ms)
		var target *azservicebus.ReceivedMessage
		for _, m := range ms {
			if target == nil && m.SequenceNumber != nil && *m.SequenceNumber == seq {
				target = m
				continue
			}
			_ = r.AbandonMessage(ctx, m, nil)
		}
		if target == nil {
			continue
		}
		dl := toDeadLetter(e, target)
		if err := then(dl, seq); err != nil {
			_ = r.AbandonMessage(ctx, target, nil)
			return bus.DeadLetter{}, err
		}
		if err := r.CompleteMessage(ctx, target, nil); err != nil {
			// A requeue's copy is sent; the dead letter stays listed (its lock is lost)
			// until a second action, whose copy the consumers deduplicate by body.
			return dl, fmt.Errorf("azure service bus: complete dead letter %s: %w", id, err)
		}
		return dl, nil
	}
	return bus.DeadLetter{}, bus.ErrDeadLetterNotFound
}

// DeadLetterCount implements bus.DeadLetterBox: the dead letters keep returns true for, per
// destination, reading at most MaxScan messages of each subqueue (a count at that bound is
// a lower bound).
func (d *ServiceBusDeadLetters) DeadLetterCount(ctx context.Context, keep func(bus.DeadLetter) bool) (map[string]int, error) {
	out := map[string]int{}
	after := ""
	for pages := 0; pages < maxCountPages; pages++ {
		items, next, err := d.DeadLetterList(ctx, bus.DeadLetterListParams{After: after, Limit: bus.MaxDeadLetterPage, Keep: keep})
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out[it.Message.Destination]++
		}
		if next == "" {
			return out, nil
		}
		after = next
	}
	return out, nil
}

// maxCountPages bounds the pages one DeadLetterCount reads (a count at the bound is a lower
// bound).
const maxCountPages = 50
