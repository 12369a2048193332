package inbox

import (
	"errors"
	"sync"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// ErrTooManyStreams is Subscribe's answer when the broker holds its maximum of subscribers
// (a retry-later intent: the HTTP answer is 503 with Retry-After).
var ErrTooManyStreams = errors.New("inbox: too many live streams on this instance")

// Default broker bounds.
const (
	DefaultMaxSubscribers = 200 // live streams per instance
	DefaultQueue          = 64  // messages buffered per stream
)

// Broker fans stored messages out to the live streams of this process. Publish never
// blocks: a subscriber whose queue is full is dropped (its Dropped channel closes) and its
// stream must end so the client resumes with Last-Event-ID from SQL. Safe for concurrent use.
type Broker struct {
	maxSubs, queue int

	mu   sync.Mutex
	subs map[subKey]map[*Subscription]struct{}
	n    int
}

type subKey struct{ bu, recipient string }

// NewBroker returns a broker holding at most maxSubscribers subscribers with queue
// messages each (values <= 0 take the defaults).
func NewBroker(maxSubscribers, queue int) *Broker {
	if maxSubscribers <= 0 {
		maxSubscribers = DefaultMaxSubscribers
	}
	if queue <= 0 {
		queue = DefaultQueue
	}
	return &Broker{maxSubs: maxSubscribers, queue: queue, subs: map[subKey]map[*Subscription]struct{}{}}
}

// Subscription is one live stream's queue of one recipient's messages.
type Subscription struct {
	b       *Broker
	key     subKey
	c       chan store.InboxMessage
	dropped chan struct{}
	once    sync.Once
}

// C delivers the recipient's messages as they are stored on this instance, in publish order
// (not necessarily Seq order: the stream orders them by Seq).
func (s *Subscription) C() <-chan store.InboxMessage { return s.c }

// Dropped is closed when the broker dropped the subscription because its queue was full.
func (s *Subscription) Dropped() <-chan struct{} { return s.dropped }

// Close removes the subscription (idempotent).
func (s *Subscription) Close() { s.b.remove(s, false) }

// Subscribe registers a subscriber for one recipient of one business unit. Errors:
// ErrTooManyStreams (marked automation.RetryAfter) when the broker is full.
func (b *Broker) Subscribe(businessUnitID, recipientID string) (*Subscription, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n >= b.maxSubs {
		return nil, automation.RetryAfter(retryStreams, ErrTooManyStreams)
	}
	k := subKey{businessUnitID, recipientID}
	s := &Subscription{b: b, key: k, c: make(chan store.InboxMessage, b.queue), dropped: make(chan struct{})}
	if b.subs[k] == nil {
		b.subs[k] = map[*Subscription]struct{}{}
	}
	b.subs[k][s] = struct{}{}
	b.n++
	return s, nil
}

// Subscribers returns how many subscribers the broker holds.
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// Publish hands m to every subscriber of its recipient without blocking; a subscriber whose
// queue is full is dropped.
func (b *Broker) Publish(m store.InboxMessage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[subKey{m.BusinessUnitID, m.RecipientID}] {
		select {
		case s.c <- m:
		default:
			b.removeLocked(s, true)
		}
	}
}

func (b *Broker) remove(s *Subscription, dropped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(s, dropped)
}

func (b *Broker) removeLocked(s *Subscription, dropped bool) {
	set := b.subs[s.key]
	if _, ok := set[s]; !ok {
		return
	}
	delete(set, s)
	if len(set) == 0 {
		delete(b.subs, s.key)
	}
	b.n--
	if dropped {
		s.once.Do(func() { close(s.dropped) })
	}
}
