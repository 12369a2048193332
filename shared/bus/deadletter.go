package bus

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// DeadLetter is one message a bus gave up on, as a dead-letter list shows it.
type DeadLetter struct {
	// ID names the dead letter in its list: opaque, stable until it is requeued (the
	// in-process bus: a sequence number; Service Bus: the dead-letter subqueue's
	// SequenceNumber, prefixed by its entity).
	ID string
	// Message is the original message: Destination is its route (queue or topic), Body the
	// bytes published, DeliveryCount the deliveries made before it was given up on.
	Message Message
	Reason  string
	// DeadLetteredOn is when it was given up on (UTC; zero when the bus does not say).
	DeadLetteredOn time.Time
}

// DeadLetterListParams selects a page of dead letters, oldest first.
type DeadLetterListParams struct {
	// Destination, when set, keeps one route's dead letters.
	Destination string
	// After is the ID of the last dead letter of the previous page ("" from the start).
	After string
	// Limit bounds the page (1..MaxDeadLetterPage).
	Limit int
	// Keep, when set, keeps only the dead letters it returns true for (a business-unit
	// scope); the page is filled with kept ones.
	Keep func(DeadLetter) bool
}

// MaxDeadLetterPage bounds one page of DeadLetterList.
const MaxDeadLetterPage = 200

// ErrDeadLetterNotFound: no dead letter has that ID (never one, or requeued already).
var ErrDeadLetterNotFound = errors.New("bus: dead letter not found")

// DeadLetterBox is a bus's dead letters: listed with their reason and original message,
// requeued after a fix, counted. The in-process bus (Memory) implements it over its bounded
// list; a Service Bus implementation serves the same interface from each entity's
// dead-letter subqueue (docs/operations.md#dead-letters).
type DeadLetterBox interface {
	// DeadLetterList returns up to p.Limit dead letters after p.After, oldest first, and
	// the ID to continue after ("" on the last page).
	DeadLetterList(ctx context.Context, p DeadLetterListParams) (items []DeadLetter, next string, err error)
	// DeadLetterGet returns one dead letter, or ErrDeadLetterNotFound.
	DeadLetterGet(ctx context.Context, id string) (DeadLetter, error)
	// DeadLetterRequeue puts the original message back on its destination as a new
	// delivery (DeliveryCount from 1 again, duplicate detection bypassed: the same
	// MessageId) and removes it from the dead letters. Errors: ErrDeadLetterNotFound.
	DeadLetterRequeue(ctx context.Context, id string) (DeadLetter, error)
	// DeadLetterDiscard removes a dead letter without delivering it (an operator decided it
	// must not be; the reason is audited by the caller) and returns it. Errors:
	// ErrDeadLetterNotFound.
	DeadLetterDiscard(ctx context.Context, id string) (DeadLetter, error)
	// DeadLetterCount counts the dead letters per destination that keep returns true for
	// (nil keep: all).
	DeadLetterCount(ctx context.Context, keep func(DeadLetter) bool) (map[string]int, error)
}

var _ DeadLetterBox = (*Memory)(nil)

// DeadLetterList implements DeadLetterBox over the bounded in-memory list (oldest dropped
// beyond MaxDeadLetters; the list is lost when the process stops, and each entry was also
// recorded by OnDeadLetter).
func (b *Memory) DeadLetterList(ctx context.Context, p DeadLetterListParams) ([]DeadLetter, string, error) {
	limit := min(max(p.Limit, 1), MaxDeadLetterPage)
	var after uint64
	if p.After != "" {
		n, err := strconv.ParseUint(p.After, 10, 64)
		if err != nil {
			return nil, "", ErrDeadLetterNotFound
		}
		after = n
	}
	b.mu.Lock()
	list := append([]deadEntry(nil), b.dead...)
	b.mu.Unlock()
	var out []DeadLetter
	for _, e := range list {
		if e.seq <= after || (p.Destination != "" && e.d.Message.Destination != p.Destination) {
			continue
		}
		d := e.public()
		if p.Keep != nil && !p.Keep(d) {
			continue
		}
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, d)
	}
	return out, "", nil
}

// DeadLetterGet implements DeadLetterBox.
func (b *Memory) DeadLetterGet(ctx context.Context, id string) (DeadLetter, error) {
	return b.onDead(id, func(i int) DeadLetter { return b.dead[i].public() })
}

// onDead runs fn, under b.mu, with the index in b.dead of the entry id (its sequence number
// in decimal) and returns what fn returns. Errors: ErrDeadLetterNotFound (fn not run).
func (b *Memory) onDead(id string, fn func(i int) DeadLetter) (DeadLetter, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, e := range b.dead {
		if strconv.FormatUint(e.seq, 10) == id {
			return fn(i), nil
		}
	}
	return DeadLetter{}, ErrDeadLetterNotFound
}

// DeadLetterRequeue implements DeadLetterBox: the message goes to the tail of its queue
// with DeliveryCount 0 (the next delivery is the first again).
func (b *Memory) DeadLetterRequeue(ctx context.Context, id string) (DeadLetter, error) {
	return b.onDead(id, func(i int) DeadLetter {
		e := b.dead[i]
		m := e.d.Message
		m.DeliveryCount = 0
		m.Body = append([]byte(nil), m.Body...)
		if _, ok := b.queues[m.Destination]; !ok {
			b.order = append(b.order, m.Destination)
		}
		b.queues[m.Destination] = append(b.queues[m.Destination], m)
		key := m.Destination + "\x00" + m.ID
		if _, ok := b.recent[key]; !ok {
			b.recentQ = append(b.recentQ, key)
		}
		b.recent[key] = false // in flight again: a copy published meanwhile is a duplicate
		b.dead = append(b.dead[:i:i], b.dead[i+1:]...)
		return e.public()
	})
}

// DeadLetterDiscard implements DeadLetterBox: the entry leaves the list; nothing is
// published.
func (b *Memory) DeadLetterDiscard(ctx context.Context, id string) (DeadLetter, error) {
	return b.onDead(id, func(i int) DeadLetter {
		e := b.dead[i]
		b.dead = append(b.dead[:i:i], b.dead[i+1:]...)
		return e.public()
	})
}

// DeadLetterCount implements DeadLetterBox.
func (b *Memory) DeadLetterCount(ctx context.Context, keep func(DeadLetter) bool) (map[string]int, error) {
	b.mu.Lock()
	list := append([]deadEntry(nil), b.dead...)
	b.mu.Unlock()
	out := map[string]int{}
	for _, e := range list {
		if keep == nil || keep(e.public()) {
			out[e.d.Message.Destination]++
		}
	}
	return out, nil
}

// RecordDeadLetter adds m to the dead-letter list with reason, as if the bus had given up on
// it: a message its consumer recorded as a dead letter and completed (a Functions handler
// cannot dead-letter a message itself), so the list shows it and a requeue delivers it
// again. OnDeadLetter is not called (the consumer kept its own record).
func (b *Memory) RecordDeadLetter(m Message, reason string) {
	m.Body = append([]byte(nil), m.Body...)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deadSeq++
	var on time.Time
	if b.opts.Now != nil {
		on = b.opts.Now().UTC()
	}
	b.dead = append(b.dead, deadEntry{seq: b.deadSeq, on: on, d: DeadLettered{Message: m, Reason: reason}})
	b.trimDeadLocked()
}

// MaxEvictedKeys bounds Memory's evicted counts: (destination, label) keys past it count
// under the ("", "") key (seen only by a caller of every label).
const MaxEvictedKeys = 1000

type evictedKey struct{ destination, label string }

// trimDeadLocked drops the oldest dead letters past MaxDeadLetters, counting each as
// evicted. b.mu is held.
func (b *Memory) trimDeadLocked() {
	over := len(b.dead) - b.opts.MaxDeadLetters
	if over <= 0 {
		return
	}
	for _, e := range b.dead[:over] {
		k := evictedKey{destination: e.d.Message.Destination}
		if b.opts.DeadLetterLabel != nil {
			k.label = b.opts.DeadLetterLabel(e.d.Message)
		}
		if _, ok := b.evicted[k]; !ok && len(b.evicted) >= MaxEvictedKeys {
			k = evictedKey{}
		}
		b.evicted[k]++
	}
	b.dead = append(b.dead[:0:0], b.dead[over:]...)
}

// DeadLetterEvicted returns, per destination, the dead letters dropped from the list past
// MaxDeadLetters whose label keep returns true for (nil keep: all). A count past
// MaxEvictedKeys has destination "" and label "".
func (b *Memory) DeadLetterEvicted(ctx context.Context, keep func(label string) bool) (map[string]int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, n := range b.evicted {
		if keep == nil || keep(k.label) {
			out[k.destination] += n
		}
	}
	return out, nil
}

// deadEntry is one entry of Memory's dead-letter list.
type deadEntry struct {
	seq uint64
	on  time.Time
	d   DeadLettered
}

func (e deadEntry) public() DeadLetter {
	m := e.d.Message
	m.Body = append([]byte(nil), m.Body...)
	return DeadLetter{ID: strconv.FormatUint(e.seq, 10), Message: m, Reason: e.d.Reason, DeadLetteredOn: e.on}
}
