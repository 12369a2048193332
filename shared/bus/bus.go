// Package bus is the messaging seam: a Message, a Publisher, a Handler, and the in-process
// bus used by the embedded runtime. Service Bus implements the same Publisher in the azure
// package; both pass bus/bustest.
package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Message is one broker message.
type Message struct {
	// ID is the broker MessageId: deterministic, used for duplicate detection.
	ID string
	// Destination is the queue or topic.
	Destination string
	// SessionID orders messages of one entity ("" = unordered).
	SessionID string
	Body      []byte
	// DeliveryCount is 1 on the first delivery (set by the bus).
	DeliveryCount int
}

// Publisher sends messages. Publish returns only after the broker accepted the message.
type Publisher interface {
	Publish(ctx context.Context, m Message) error
}

// Handler processes one delivered message. nil completes it; an error abandons it for
// redelivery, or dead-letters it once MaxDeliveryCount is reached; an error marked
// automation.Permanent dead-letters it at once (it can never succeed). See Settle.
type Handler func(ctx context.Context, m Message) error

// ErrQueueFull is returned by Memory.Publish when a queue holds MaxQueueLength messages;
// the caller (the outbox relay) keeps the message and retries later.
var ErrQueueFull = errors.New("bus: queue full")

// DeadLettered is a message that was given up on, with the reason.
type DeadLettered struct {
	Message Message
	Reason  string
}

// MemoryOptions configure the in-process bus. Zero values take the defaults.
type MemoryOptions struct {
	MaxQueueLength   int // per destination; default 10000
	MaxDeliveryCount int // default 10 (Service Bus default)
	DuplicateWindow  int // how many recent message ids are remembered; default 10000
	// RetryDelay, when set, delays a failed message's redelivery: RetryDelay after the first
	// failure, doubling up to MaxRetryDelay (default 1 min). Needs Now. Zero: redeliver at
	// once (the replay simulator's deterministic mode).
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	Now           func() time.Time
	// OnDeadLetter, when set, is called (outside the bus lock) for each dead-lettered
	// message, so the runtime can record it.
	OnDeadLetter func(DeadLettered)
	// MaxDeadLetters bounds the dead-letter list kept in memory (oldest dropped; default 1000).
	MaxDeadLetters int
	// OnSettled, when set, is called (outside the bus lock, with Drain's context) once a
	// message leaves the bus for good: its handler completed it, or it was dead-lettered.
	// The in-process bus is not durable (a message it holds is lost when the process stops),
	// so the embedded runtime's outbox relay keeps each row unpublished until this call
	// (delivery.Relay.MarkOnSettle): the outbox row is the message's durable copy.
	OnSettled func(ctx context.Context, m Message)
}

type delayed struct {
	m         Message
	notBefore time.Time
}

// Memory is the in-process bus: bounded FIFO queues, duplicate detection by message id over
// a bounded window, redelivery up to MaxDeliveryCount, and a dead-letter list. Delivery is
// pull-based (Drain), which keeps the replay simulator deterministic. Safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	opts     MemoryOptions
	queues   map[string][]Message
	order    []string // destinations in first-publish order, for deterministic draining
	handlers map[string]Handler
	recent   map[string]bool // destination + "\x00" + message id -> settled (completed or dead-lettered)
	recentQ  []string
	dead     []DeadLettered
	waiting  []delayed // failed messages waiting for their redelivery time
}

var _ Publisher = (*Memory)(nil)

// NewMemory returns an empty in-process bus.
func NewMemory(opts *MemoryOptions) *Memory {
	o := MemoryOptions{MaxQueueLength: 10000, MaxDeliveryCount: 10, DuplicateWindow: 10000, MaxRetryDelay: time.Minute, MaxDeadLetters: 1000}
	if opts != nil {
		o.RetryDelay, o.Now, o.OnDeadLetter, o.OnSettled = opts.RetryDelay, opts.Now, opts.OnDeadLetter, opts.OnSettled
		if opts.MaxRetryDelay > 0 {
			o.MaxRetryDelay = opts.MaxRetryDelay
		}
		if opts.MaxDeadLetters > 0 {
			o.MaxDeadLetters = opts.MaxDeadLetters
		}
		if o.RetryDelay > 0 && o.Now == nil {
			panic("bus: MemoryOptions.RetryDelay needs Now")
		}
		if opts.MaxQueueLength > 0 {
			o.MaxQueueLength = opts.MaxQueueLength
		}
		if opts.MaxDeliveryCount > 0 {
			o.MaxDeliveryCount = opts.MaxDeliveryCount
		}
		if opts.DuplicateWindow > 0 {
			o.DuplicateWindow = opts.DuplicateWindow
		}
	}
	return &Memory{opts: o, queues: map[string][]Message{}, handlers: map[string]Handler{}, recent: map[string]bool{}}
}

// Subscribe sets the handler of a destination (one per destination).
func (b *Memory) Subscribe(destination string, h Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handlers[destination] = h
}

// Handler returns the handler of a destination (nil: none), so an observer can wrap the
// consumer already subscribed instead of replacing it.
func (b *Memory) Handler(destination string) Handler {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.handlers[destination]
}

// Publish enqueues m. A message whose ID was published to the same destination within the
// duplicate window is accepted and dropped, as Service Bus duplicate detection (per entity)
// does.
func (b *Memory) Publish(ctx context.Context, m Message) error {
	if m.ID == "" || m.Destination == "" {
		return fmt.Errorf("bus: message needs an ID and a Destination")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bus: publish %s: %w", m.ID, err)
	}
	key := m.Destination + "\x00" + m.ID
	b.mu.Lock()
	if settled, dup := b.recent[key]; dup {
		b.mu.Unlock()
		if settled && b.opts.OnSettled != nil {
			// The first copy already left the bus: this one is settled as it is dropped.
			b.opts.OnSettled(ctx, m)
		}
		return nil
	}
	defer b.mu.Unlock()
	q := b.queues[m.Destination]
	if len(q) >= b.opts.MaxQueueLength {
		return fmt.Errorf("bus: %s: %w", m.Destination, ErrQueueFull)
	}
	if _, ok := b.queues[m.Destination]; !ok {
		b.order = append(b.order, m.Destination)
	}
	m.DeliveryCount = 0
	m.Body = append([]byte(nil), m.Body...)
	b.queues[m.Destination] = append(q, m)
	b.recent[key] = false
	b.recentQ = append(b.recentQ, key)
	if len(b.recentQ) > b.opts.DuplicateWindow {
		delete(b.recent, b.recentQ[0])
		b.recentQ = b.recentQ[1:]
	}
	return nil
}

// Drain delivers queued messages to their handlers until every queue with a handler is
// empty or limit deliveries were made (limit <= 0: no limit). Failed messages are requeued
// at the tail (redelivery) or dead-lettered. It returns the number of deliveries made.
func (b *Memory) Drain(ctx context.Context, limit int) (int, error) {
	n := 0
	for limit <= 0 || n < limit {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, h, ok := b.next()
		if !ok {
			return n, nil
		}
		n++
		// The handler gets its own copy of the body: what it does to it must not reach a
		// redelivery or the dead-letter list.
		delivered := m
		delivered.Body = append([]byte(nil), m.Body...)
		err := h(ctx, delivered)
		if err == nil {
			b.settle(m)
			if b.opts.OnSettled != nil {
				b.opts.OnSettled(ctx, m)
			}
			continue
		}
		b.mu.Lock()
		var dl *DeadLettered
		st := Settle(err, m.DeliveryCount, b.opts.MaxDeliveryCount)
		switch {
		case st.Action == ActionDeadLetter:
			dl = &DeadLettered{Message: m, Reason: err.Error()}
			b.dead = append(b.dead, *dl)
			if len(b.dead) > b.opts.MaxDeadLetters {
				b.dead = b.dead[len(b.dead)-b.opts.MaxDeadLetters:]
			}
		case st.Delay > 0 && b.opts.Now != nil:
			b.waiting = append(b.waiting, delayed{m: m, notBefore: b.opts.Now().Add(st.Delay)})
		case b.opts.RetryDelay > 0:
			d := b.opts.RetryDelay << min(m.DeliveryCount-1, 20)
			if d <= 0 || d > b.opts.MaxRetryDelay {
				d = b.opts.MaxRetryDelay
			}
			b.waiting = append(b.waiting, delayed{m: m, notBefore: b.opts.Now().Add(d)})
		default:
			b.queues[m.Destination] = append(b.queues[m.Destination], m)
		}
		b.mu.Unlock()
		if dl != nil && b.opts.OnDeadLetter != nil {
			b.opts.OnDeadLetter(*dl)
		}
		if dl != nil {
			b.settle(m)
		}
		if dl != nil && b.opts.OnSettled != nil {
			b.opts.OnSettled(ctx, m)
		}
	}
	return n, nil
}

// settle notes that m left the bus, for duplicate detection (a later copy is settled at once).
func (b *Memory) settle(m Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := m.Destination + "\x00" + m.ID
	if _, ok := b.recent[key]; ok {
		b.recent[key] = true
	}
}

func (b *Memory) next() (Message, Handler, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiting) > 0 {
		now := b.opts.Now()
		kept := b.waiting[:0]
		for _, w := range b.waiting {
			if w.notBefore.After(now) {
				kept = append(kept, w)
				continue
			}
			b.queues[w.m.Destination] = append(b.queues[w.m.Destination], w.m)
		}
		b.waiting = kept
	}
	for _, d := range b.order {
		q := b.queues[d]
		h := b.handlers[d]
		if len(q) == 0 || h == nil {
			continue
		}
		m := q[0]
		b.queues[d] = q[1:]
		m.DeliveryCount++
		return m, h, true
	}
	return Message{}, nil, false
}

// Len returns the number of messages at destination: queued, or waiting for redelivery.
func (b *Memory) Len(destination string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.queues[destination])
	for _, w := range b.waiting {
		if w.m.Destination == destination {
			n++
		}
	}
	return n
}

// DeadLetters returns a copy of the dead-letter list.
func (b *Memory) DeadLetters() []DeadLettered {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]DeadLettered(nil), b.dead...)
}
