package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/telemetry"
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
	// TraceParent and TraceState are the W3C trace context the message carries (the
	// application properties traceparent, Diagnostic-Id and tracestate on Service Bus,
	// telemetry.Properties). Publish sets them from ctx when TraceParent is empty; the
	// outbox relay sets them from the row (the transaction that wrote it). Empty: not traced.
	TraceParent string
	TraceState  string
}

// Publisher sends messages. Publish returns only after the broker accepted the message.
type Publisher interface {
	Publish(ctx context.Context, m Message) error
}

// BatchHandler processes messages handed over together, as a Service Bus trigger declared
// with "cardinality": "many" receives them. nil completes every message of the batch; an
// error fails the batch as a whole, and each of its messages is then settled by its own
// DeliveryCount (Settle: redelivered, or dead-lettered at MaxDeliveryCount), as the Functions
// host abandons every message of a failed batch invocation. A batch handler therefore fails
// only when a redelivery of every message is harmless (see SubscribeBatch).
type BatchHandler func(ctx context.Context, ms []Message) error

// Handler processes one delivered message. nil completes it; an error abandons it for
// redelivery, or dead-letters it once MaxDeliveryCount is reached; an error marked
// automation.Permanent dead-letters it at once (it can never succeed). See Settle.
type Handler func(ctx context.Context, m Message) error

// ErrQueueFull is returned by Memory.Publish when a queue holds MaxQueueLength messages;
// the caller (the outbox relay) keeps the message and retries later.
var ErrQueueFull = errors.New("bus: queue full")

// DeadLettered is a message that was given up on, with the reason. ID and DeadLetteredOn
// are its entry in the in-process bus's dead-letter list (Memory sets them when it lists
// it: DeadLetter.ID and DeadLetter.DeadLetteredOn), so a durable record of it can rebuild
// the entry after a restart (RestoreDeadLetters).
type DeadLettered struct {
	Message        Message
	Reason         string
	ID             string
	DeadLetteredOn time.Time
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
	// MaxDeadLetters bounds the dead-letter list kept in memory (default 1000). The oldest
	// is dropped past it, and counted per (destination, DeadLetterLabel) as evicted
	// (DeadLetterEvicted), so none leaves the counts unseen.
	MaxDeadLetters int
	// DeadLetterLabel, when set, labels an evicted dead letter's count (the business unit its
	// body names, for a scoped count); nil labels every one "".
	DeadLetterLabel func(Message) string
	// OnSettled, when set, is called (outside the bus lock, with Drain's context) once a
	// message leaves the bus for good: its handler completed it, or it was dead-lettered.
	// The in-process bus is not durable (a message it holds is lost when the process stops),
	// so the embedded runtime's outbox relay keeps each row unpublished until this call
	// (delivery.Relay.MarkOnSettle): the outbox row is the message's durable copy.
	OnSettled func(ctx context.Context, m Message)
	// AfterDrain, when set, is called (outside the bus lock, with Drain's context) when a
	// Drain that delivered at least one message returns, so a consumer of OnSettled that
	// gathers the settled messages writes them once per drain (delivery.Relay.FlushSettled)
	// instead of once per message.
	AfterDrain func(ctx context.Context)
}

// batchConsumer is a destination's batch handler and the most messages it takes at once.
type batchConsumer struct {
	h   BatchHandler
	max int
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
	batches  map[string]batchConsumer
	recent   map[string]bool // destination + "\x00" + message id -> settled (completed or dead-lettered)
	recentQ  []string
	dead     []deadEntry // the dead-letter list, oldest first (DeadLetterBox)
	deadSeq  uint64
	// evicted counts the dead letters dropped from dead past MaxDeadLetters, per
	// (destination, label); at most MaxEvictedKeys keys, the rest under the ("", "") key.
	evicted map[evictedKey]int
	waiting []delayed // failed messages waiting for their redelivery time
	// busy holds the sessions (destination + "\x00" + SessionID) of messages handed to a
	// handler and not yet settled: next skips their later messages, so concurrent drains
	// (DrainDestination) never run two messages of one session at once nor out of order.
	busy map[string]int
}

var _ Publisher = (*Memory)(nil)

// NewMemory returns an empty in-process bus.
func NewMemory(opts *MemoryOptions) *Memory {
	o := MemoryOptions{MaxQueueLength: 10000, MaxDeliveryCount: 10, DuplicateWindow: 10000, MaxRetryDelay: time.Minute, MaxDeadLetters: 1000}
	if opts != nil {
		o.RetryDelay, o.Now, o.OnDeadLetter, o.OnSettled, o.AfterDrain = opts.RetryDelay, opts.Now, opts.OnDeadLetter, opts.OnSettled, opts.AfterDrain
		o.DeadLetterLabel = opts.DeadLetterLabel
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
	return &Memory{opts: o, queues: map[string][]Message{}, handlers: map[string]Handler{}, batches: map[string]batchConsumer{}, recent: map[string]bool{}, busy: map[string]int{}, evicted: map[evictedKey]int{}}
}

// Subscribe sets the handler of a destination (one per destination; it replaces a batch
// handler).
func (b *Memory) Subscribe(destination string, h Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.batches, destination)
	b.handlers[destination] = h
}

// SubscribeBatch sets the batch handler of a destination (it replaces a one-message
// handler): Drain hands it the messages waiting there, up to most at once (below 1 is
// taken as 1), without waiting for more, as bus.TakeWaiting takes them from a channel.
// Each message of a batch counts as one delivery (its DeliveryCount grows by one per
// batch it is in), and Drain's limit bounds the messages, so a batch may be cut short by it.
func (b *Memory) SubscribeBatch(destination string, most int, h BatchHandler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.handlers, destination)
	b.batches[destination] = batchConsumer{h: h, max: max(most, 1)}
}

// BatchHandler returns the batch handler of a destination and the most messages it takes
// at once (nil, 0: none), so an observer can wrap it (SubscribeBatch) instead of replacing it.
func (b *Memory) BatchHandler(destination string) (BatchHandler, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.batches[destination]
	return c.h, c.max
}

// Handler returns the one-message handler of a destination (nil: none, or a batch
// handler), so an observer can wrap the consumer already subscribed instead of replacing it.
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
	if m.TraceParent == "" && telemetry.Enabled() {
		m.TraceParent, m.TraceState = telemetry.Inject(ctx)
	}
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
// empty or limit deliveries were made (limit <= 0: no limit): one message at a time to a
// Handler, up to its max waiting messages at once to a BatchHandler (each message one
// delivery). Failed messages are requeued at the tail (redelivery) or dead-lettered, each by
// its own DeliveryCount. It returns the number of deliveries made.
func (b *Memory) Drain(ctx context.Context, limit int) (int, error) {
	return b.drain(ctx, "", limit)
}

// DrainDestination is Drain for one destination's messages only. Several goroutines may
// drain one destination at once (the embedded runtime's per-destination concurrency):
// messages of one session (SessionID) are still handed over one delivery at a time and in
// order, as Service Bus sessions give; messages without a session in any order.
func (b *Memory) DrainDestination(ctx context.Context, destination string, limit int) (int, error) {
	if destination == "" {
		return 0, fmt.Errorf("bus: DrainDestination needs a destination")
	}
	return b.drain(ctx, destination, limit)
}

// DrainInTurn is Drain taking the destinations in turn: after a delivery from one
// destination, the next comes from the next destination (in first-publish order, wrapping
// round) that has a message ready, where Drain starts again from the first destination
// every time. A consumer that serves every destination (the local host's own loop) so gives
// each destination one delivery (a message, or a batch) in every round, however busy the
// destinations published before it are: with Drain, a destination late in the order got
// the loop only when every earlier queue was empty (issue 39: campaign-results, last in
// the order, held the in-process bus's whole in-flight bound while the loop served the
// single messages of events and campaign-commands). Sessions keep their order as with
// Drain. The order of one call depends only on the queues, so a run stays deterministic.
func (b *Memory) DrainInTurn(ctx context.Context, limit int) (int, error) {
	return b.drainFrom(ctx, "", limit, true)
}

// drain is Drain, restricted to destination when it is not "".
func (b *Memory) drain(ctx context.Context, destination string, limit int) (int, error) {
	return b.drainFrom(ctx, destination, limit, false)
}

// drainFrom is drain; inTurn starts each next delivery's search after the destination of
// the one before (DrainInTurn).
func (b *Memory) drainFrom(ctx context.Context, destination string, limit int, inTurn bool) (int, error) {
	n := 0
	from := 0 // index in b.order where next starts its search
	if b.opts.AfterDrain != nil {
		defer func() {
			if n > 0 {
				b.opts.AfterDrain(ctx)
			}
		}()
	}
	for limit <= 0 || n < limit {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		room := 0
		if limit > 0 {
			room = limit - n
		}
		ms, h, bh, at, ok := b.next(destination, room, from)
		if !ok {
			return n, nil
		}
		if inTurn {
			from = at + 1
		}
		n += len(ms)
		// The handler gets its own copy of each body: what it does to it must not reach a
		// redelivery or the dead-letter list.
		delivered := make([]Message, len(ms))
		for i, m := range ms {
			delivered[i] = m
			delivered[i].Body = append([]byte(nil), m.Body...)
		}
		var err error
		if bh != nil {
			err = bh(ctx, delivered)
		} else {
			err = h(ctx, delivered[0])
		}
		for _, m := range ms {
			b.settleAfter(ctx, m, err)
		}
		b.release(ms)
	}
	return n, nil
}

// release frees the sessions of ms (next marked them busy) once they are settled.
func (b *Memory) release(ms []Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range ms {
		if m.SessionID == "" {
			continue
		}
		k := m.Destination + "\x00" + m.SessionID
		if b.busy[k]--; b.busy[k] <= 0 {
			delete(b.busy, k)
		}
	}
}

// settleAfter settles one delivered message by its handler's result (Settle).
func (b *Memory) settleAfter(ctx context.Context, m Message, err error) {
	if err == nil {
		b.settle(m)
		if b.opts.OnSettled != nil {
			b.opts.OnSettled(ctx, m)
		}
		return
	}
	b.mu.Lock()
	var dl *DeadLettered
	st := Settle(err, m.DeliveryCount, b.opts.MaxDeliveryCount)
	switch {
	case st.Action == ActionDeadLetter:
		e := b.listDeadLocked(m, err.Error())
		dl = &DeadLettered{Message: m, Reason: e.d.Reason, ID: strconv.FormatUint(e.seq, 10), DeadLetteredOn: e.on}
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
	if dl == nil {
		return
	}
	if b.opts.OnDeadLetter != nil {
		b.opts.OnDeadLetter(*dl)
	}
	b.settle(m)
	if b.opts.OnSettled != nil {
		b.opts.OnSettled(ctx, m)
	}
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

// next takes the next delivery from destination ("" any, in first-publish order): one
// message for a Handler, or up to the batch handler's max (and room, when room > 0) waiting
// messages for a BatchHandler. A message whose session is busy (handed over and not
// settled, or skipped earlier in this pass) is left in its place with every later message
// of its session, so a session's messages go one delivery at a time, in queue order. The
// search starts at b.order[from] and wraps round (from 0: first-publish order); at is the
// index in b.order of the destination served.
func (b *Memory) next(destination string, room, from int) (_ []Message, _ Handler, _ BatchHandler, at int, _ bool) {
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
	for k := range b.order {
		at = (from + k) % len(b.order)
		d := b.order[at]
		if destination != "" && d != destination {
			continue
		}
		q := b.queues[d]
		h, bc := b.handlers[d], b.batches[d]
		if len(q) == 0 || (h == nil && bc.h == nil) {
			continue
		}
		take := 1
		if bc.h != nil {
			take = min(len(q), bc.max)
			if room > 0 {
				take = min(take, room)
			}
		}
		var ms []Message
		var skipped map[string]bool // sessions passed over in this pass
		var kept []Message          // messages left in place before the last one taken
		end := len(q)               // q[end:] is left untouched
		for i, m := range q {
			if len(ms) == take {
				end = i
				break
			}
			if m.SessionID != "" {
				k := d + "\x00" + m.SessionID
				if b.busy[k] > 0 || skipped[k] {
					if skipped == nil {
						skipped = map[string]bool{}
					}
					skipped[k] = true
					kept = append(kept, m)
					continue
				}
			}
			ms = append(ms, m)
		}
		if len(ms) > 0 {
			if len(kept) == 0 {
				b.queues[d] = q[end:] // the common case: a prefix taken, nothing copied
			} else {
				b.queues[d] = append(kept, q[end:]...)
			}
		}
		if len(ms) == 0 {
			continue
		}
		for i := range ms {
			ms[i].DeliveryCount++
			if ms[i].SessionID != "" {
				b.busy[d+"\x00"+ms[i].SessionID]++
			}
		}
		return ms, h, bc.h, at, true
	}
	return nil, nil, nil, 0, false
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

// Waiting returns the messages held at every destination: queued, or waiting for
// redelivery (the backpressure gate's measure of the consumers' lag).
func (b *Memory) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.waiting)
	for _, q := range b.queues {
		n += len(q)
	}
	return n
}

// Lengths returns the messages held per destination (queued, or waiting for redelivery),
// destinations with none left out: the per-consumer lag the metrics and benchmarks show.
func (b *Memory) Lengths() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.queues))
	for d, q := range b.queues {
		if len(q) > 0 {
			out[d] = len(q)
		}
	}
	for _, w := range b.waiting {
		out[w.m.Destination]++
	}
	return out
}

// DeadLetters returns a copy of the dead-letter list.
func (b *Memory) DeadLetters() []DeadLettered {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]DeadLettered, len(b.dead))
	for i, e := range b.dead {
		out[i] = e.d
		out[i].ID, out[i].DeadLetteredOn = strconv.FormatUint(e.seq, 10), e.on
	}
	return out
}
