package bus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
// beyond MaxDeadLetters). The list itself is lost when the process stops; a caller that
// keeps it durable saves DeadLetterState after each change and puts it back with
// RestoreDeadLetters (the embedded runtime does: shared/deadletter.Kept).
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
// again. OnDeadLetter is not called (the consumer kept its own record); the entry listed is
// returned, so the caller can keep a durable record of it (RestoreDeadLetters).
func (b *Memory) RecordDeadLetter(m Message, reason string) DeadLetter {
	m.Body = append([]byte(nil), m.Body...)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.listDeadLocked(m, reason).public()
}

// listDeadLocked appends m to the dead-letter list under the next sequence number, stamped
// with the bus's Now (UTC; zero without one), trims the list to MaxDeadLetters and returns
// the entry. b.mu is held.
func (b *Memory) listDeadLocked(m Message, reason string) deadEntry {
	b.deadSeq++
	var on time.Time
	if b.opts.Now != nil {
		on = b.opts.Now().UTC()
	}
	e := deadEntry{seq: b.deadSeq, on: on, d: DeadLettered{Message: m, Reason: reason}}
	b.dead = append(b.dead, e)
	b.trimDeadLocked()
	return e
}

// MaxDeadLetters is the bound of the dead-letter list (MemoryOptions.MaxDeadLetters).
func (b *Memory) MaxDeadLetters() int { return b.opts.MaxDeadLetters }

// DeadLetterState is the in-process bus's dead-letter list as a durable record of it keeps
// it across a restart (the embedded runtime: shared/deadletter.Kept, docs/operations.md#dead-letters).
type DeadLetterState struct {
	// Seq is the last sequence number the list gave (an ID is its decimal): a restored list
	// numbers its new dead letters after it, so no ID names two of them.
	Seq uint64
	// Items are the dead letters listed, oldest first (at most MaxDeadLetters).
	Items []DeadLetter
	// Evicted are the counts of the dead letters dropped past MaxDeadLetters
	// (DeadLetterEvicted).
	Evicted []EvictedCount
}

// EvictedCount is one (destination, label) count of dead letters dropped from the list.
type EvictedCount struct {
	Destination string `json:"destination"`
	Label       string `json:"label,omitempty"`
	Count       int    `json:"count"`
}

// DeadLetterState returns a copy of the dead-letter list, its last sequence number and its
// eviction counts (sorted by destination, then label).
func (b *Memory) DeadLetterState() DeadLetterState {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := DeadLetterState{Seq: b.deadSeq, Items: make([]DeadLetter, len(b.dead))}
	for i, e := range b.dead {
		s.Items[i] = e.public()
	}
	for k, n := range b.evicted {
		s.Evicted = append(s.Evicted, EvictedCount{Destination: k.destination, Label: k.label, Count: n})
	}
	slices.SortFunc(s.Evicted, func(a, c EvictedCount) int {
		return cmp.Or(cmp.Compare(a.Destination, c.Destination), cmp.Compare(a.Label, c.Label))
	})
	return s
}

// RestoreDeadLetters puts back, at start-up, a list DeadLetterState returned before (by the
// process before a restart): its dead letters, with their IDs, reasons and DeadLetteredOn
// (so an ETag read before the restart still names the same one), in ID order; the sequence
// continues after the highest of s.Seq and every restored ID, so a new dead letter never
// takes an old one's ID; eviction counts add up. Past MaxDeadLetters the oldest are dropped
// and counted as evicted. Errors (nothing restored): the list is not empty (restore before
// anything is dead-lettered), an ID that is not a positive decimal or is named twice.
func (b *Memory) RestoreDeadLetters(s DeadLetterState) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dead) > 0 || b.deadSeq > 0 {
		return errors.New("bus: restore dead letters: the list has had entries already; restore it at start-up, before anything is dead-lettered")
	}
	seen := map[uint64]bool{}
	restored := make([]deadEntry, 0, len(s.Items))
	top := s.Seq
	for i, d := range s.Items {
		n, err := strconv.ParseUint(d.ID, 10, 64)
		if err != nil || n == 0 || seen[n] {
			return fmt.Errorf("bus: restore dead letters: items[%d].ID %q is not a positive decimal or names a dead letter twice", i, d.ID)
		}
		seen[n] = true
		top = max(top, n)
		m := d.Message
		m.Body = append([]byte(nil), m.Body...)
		restored = append(restored, deadEntry{seq: n, on: d.DeadLetteredOn.UTC(), d: DeadLettered{Message: m, Reason: d.Reason}})
	}
	slices.SortStableFunc(restored, func(a, c deadEntry) int { return cmp.Compare(a.seq, c.seq) })
	b.dead = restored
	b.deadSeq = top
	for _, c := range s.Evicted {
		k := evictedKey{destination: c.Destination, label: c.Label}
		if _, ok := b.evicted[k]; !ok && len(b.evicted) >= MaxEvictedKeys {
			k = evictedKey{}
		}
		b.evicted[k] += max(c.Count, 0)
	}
	b.trimDeadLocked()
	return nil
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
