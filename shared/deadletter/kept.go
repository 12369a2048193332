package deadletter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/trace"
)

// Blobs is where Kept keeps the list: the diagnostics store (trace.Store: files under
// AUTOMATION_DATA_DIR/trace/blobs in the embedded runtime, Blob Storage in Azure).
type Blobs interface {
	// PutBlob stores data under name, replacing what was there as a whole.
	PutBlob(ctx context.Context, name string, data []byte) error
	// GetBlob returns the blob, or trace.ErrBlobNotFound.
	GetBlob(ctx context.Context, name string) ([]byte, error)
}

// ListBlobName is the blob holding the index of the in-process bus's dead-letter list (Kept).
// It has one segment under "deadletter/", so no record name (trace.DeadLetterBlobName:
// always a scope and a file) is ever it.
const ListBlobName = "deadletter/bus-list.json"

// RecordBlobName is the record of one dead letter of the in-process bus:
// "deadletter/bus/{destination}/{messageId}-{hash}.json" (trace.DeadLetterBlobName). A later
// dead letter of the same message (same route and message id, so the same bytes: message ids
// are derived from what they carry) overwrites it.
func RecordBlobName(destination, messageID string) string {
	return trace.DeadLetterBlobName("bus/"+destination, messageID)
}

// Kept is the in-process bus's dead-letter list kept across restarts of the embedded
// runtime (docs/operations.md#dead-letters): a bus.DeadLetterBox over bus.Memory that
// writes, for each dead letter, its record blob (RecordBlobName: what the runtime always
// wrote, plus the list id, DeadLetteredOn, session id, trace context and the exact body),
// and after each change of the list (a dead letter listed, requeued, delivered after its
// requeue, discarded, evicted) the list's index (ListBlobName): the last sequence number,
// each listed dead letter's id, route, message id, session, reason, delivery count,
// DeadLetteredOn and unit, and the eviction counts.
//
// Restore, at start-up, reads the index and the records it names, at most the list's bound
// (bus.MemoryOptions.MaxDeadLetters): the index holds only the listed dead letters and those
// requeued awaiting delivery, in id order, so the newest are its last entries and no blob is
// listed or scanned; older ones past the bound are counted as evicted, unread. It puts the
// list back with the same ids and DeadLetteredOn, so an ETag read before the restart, and the
// audit row keyed by it, still name the same dead letter, and an action that died between
// its audit row and the bus call is taken over after AbandonedAfter as before. New dead
// letters are numbered after the index's sequence number, so no id names two.
//
// Why blobs and no table: the records were written already (the diagnostics store is there
// whenever the in-process bus is), the list is small and bounded, and one index blob is
// read once at start-up; no migration. The index is replaced whole (localtrace writes a
// temporary file and renames it; a Blob Storage upload is atomic), so a crash leaves the one
// before or after a change, never half of it. A requeued dead letter stays in the index,
// marked requeued, until the bus settles its message (Settled): the in-process bus loses a
// queued message with its process, so a restart before its delivery lists it again. A dead
// letter listed again so, or after a crash between its requeue and the index write, has its
// audit row (DeadLetterAudit): an action on it is 409 and, after AbandonedAfter, takes the
// row over. A discard writes the index without its dead letter before the bus drops it, so
// a crash between the two leaves it discarded, as its audit row says (in the other order it
// was listed again and a requeue took the discard's row over). A dead letter listed just before a crash whose
// record or index write had not happened yet is not listed after it (its log line and, for
// the bus's own, its record remain). A failed blob write is logged (Error) and does not undo
// the change of the list: the action was done.
//
// Safe for concurrent use: the index is written under one lock, from the list as it is then,
// so a later write never carries an older list.
type Kept struct {
	Memory *bus.Memory
	Blobs  Blobs
	Clock  automation.Clock // the record's recordedOn; nil: the system clock
	Log    *slog.Logger

	mu     sync.Mutex
	labels map[string]string // list id -> business unit of its body, for the index
	// requeued holds the dead letters requeued whose message the bus has not settled yet
	// (destination + "\x00" + message id -> the dead letter): the in-process bus loses a
	// queued message with its process, so the index keeps them until Settled, and a restart
	// before lists them again (at most MaxDeadLetters; nRequeued is its size, read without mu
	// on the bus's hot path).
	requeued  map[string]bus.DeadLetter
	nRequeued atomic.Int64
	// discarding holds the ids of dead letters being discarded: the index is written without
	// them before the bus drops them (DeadLetterDiscard), so a crash in between leaves them
	// discarded, as the audit says, not listed again.
	discarding map[string]bool
}

var (
	_ bus.DeadLetterBox = (*Kept)(nil)
	_ EvictionCounter   = (*Kept)(nil)
)

// DeadLetterList implements bus.DeadLetterBox.
func (k *Kept) DeadLetterList(ctx context.Context, p bus.DeadLetterListParams) ([]bus.DeadLetter, string, error) {
	return k.Memory.DeadLetterList(ctx, p)
}

// DeadLetterGet implements bus.DeadLetterBox.
func (k *Kept) DeadLetterGet(ctx context.Context, id string) (bus.DeadLetter, error) {
	return k.Memory.DeadLetterGet(ctx, id)
}

// DeadLetterCount implements bus.DeadLetterBox.
func (k *Kept) DeadLetterCount(ctx context.Context, keep func(bus.DeadLetter) bool) (map[string]int, error) {
	return k.Memory.DeadLetterCount(ctx, keep)
}

// DeadLetterEvicted implements EvictionCounter.
func (k *Kept) DeadLetterEvicted(ctx context.Context, keep func(businessUnit string) bool) (map[string]int, error) {
	return k.Memory.DeadLetterEvicted(ctx, keep)
}

// DeadLetterRequeue implements bus.DeadLetterBox: the bus requeues it, and the index keeps
// it, marked requeued, until the bus settles its message (Settled): a restart before that
// (the message lost with the in-process queue) lists it again, with its id and ETag, where
// its audit row makes a requeue 409 and then a take-over. It is marked before the bus call,
// so a delivery that settles the message at once is never missed.
func (k *Kept) DeadLetterRequeue(ctx context.Context, id string) (bus.DeadLetter, error) {
	d, err := k.Memory.DeadLetterGet(ctx, id)
	if err != nil {
		return d, err
	}
	key := d.Message.Destination + "\x00" + d.Message.ID
	k.mu.Lock()
	if k.requeued == nil {
		k.requeued = map[string]bus.DeadLetter{}
	}
	old, had := k.requeued[key]
	k.requeued[key] = d
	k.nRequeued.Store(int64(len(k.requeued)))
	k.mu.Unlock()
	d, err = k.Memory.DeadLetterRequeue(ctx, id)
	k.mu.Lock()
	if err != nil {
		if had {
			k.requeued[key] = old
		} else {
			delete(k.requeued, key)
		}
	}
	k.boundRequeuedLocked()
	k.nRequeued.Store(int64(len(k.requeued)))
	k.mu.Unlock()
	if err == nil {
		k.Save(context.WithoutCancel(ctx))
	}
	return d, err
}

// boundRequeuedLocked keeps at most MaxDeadLetters requeued dead letters awaiting their
// settlement, dropping the oldest (logged: a restart before its delivery loses it). k.mu is
// held.
func (k *Kept) boundRequeuedLocked() {
	for len(k.requeued) > k.Memory.MaxDeadLetters() {
		var oldest string
		var seq uint64
		for key, d := range k.requeued {
			if n, _ := strconv.ParseUint(d.ID, 10, 64); oldest == "" || n < seq {
				oldest, seq = key, n
			}
		}
		d := k.requeued[oldest]
		k.log().Warn("requeued dead letter no longer kept until its delivery: too many awaiting theirs", "id", d.ID,
			"destination", d.Message.Destination, "messageId", d.Message.ID)
		delete(k.requeued, oldest)
	}
}

// Settled notes that the bus settled m (bus.MemoryOptions.OnSettled: completed, or
// dead-lettered again): a requeued dead letter of that message leaves the index. Cheap when
// none awaits its settlement (one atomic load).
func (k *Kept) Settled(ctx context.Context, m bus.Message) {
	if k.nRequeued.Load() == 0 {
		return
	}
	key := m.Destination + "\x00" + m.ID
	k.mu.Lock()
	_, ok := k.requeued[key]
	delete(k.requeued, key)
	k.nRequeued.Store(int64(len(k.requeued)))
	k.mu.Unlock()
	if ok {
		k.Save(context.WithoutCancel(ctx))
	}
}

// DeadLetterDiscard implements bus.DeadLetterBox: the index is written without it, then the
// bus drops it. In this order a crash in between leaves it discarded after the restart, as
// its audit row says; in the other, it was listed again and, after AbandonedAfter, a
// requeue took the discard's audit row over and delivered the message. A failed index write
// is logged and the discard still done (the next change writes the index again). The bus
// refusing (ErrDeadLetterNotFound) writes the index again with it, if listed.
func (k *Kept) DeadLetterDiscard(ctx context.Context, id string) (bus.DeadLetter, error) {
	if _, err := k.Memory.DeadLetterGet(ctx, id); err != nil {
		return bus.DeadLetter{}, err
	}
	k.mu.Lock()
	if k.discarding == nil {
		k.discarding = map[string]bool{}
	}
	k.discarding[id] = true
	k.mu.Unlock()
	k.Save(context.WithoutCancel(ctx))
	d, err := k.Memory.DeadLetterDiscard(ctx, id)
	k.mu.Lock()
	delete(k.discarding, id)
	k.mu.Unlock()
	if err != nil {
		k.Save(context.WithoutCancel(ctx))
	}
	return d, err
}

// record is a dead letter's record blob (RecordBlobName). destination, messageId,
// deliveryCount, reason, recordedOn and body (the bytes as text, for a reader) are what the
// runtime always wrote; the rest rebuilds the list entry (bodyBytes: the exact bytes,
// base64).
type record struct {
	Destination    string    `json:"destination"`
	MessageID      string    `json:"messageId"`
	DeliveryCount  int       `json:"deliveryCount"`
	Reason         string    `json:"reason"`
	RecordedOn     time.Time `json:"recordedOn"`
	Body           string    `json:"body"`
	ID             string    `json:"id"`
	DeadLetteredOn time.Time `json:"deadLetteredOn"`
	SessionID      string    `json:"sessionId,omitempty"`
	TraceParent    string    `json:"traceParent,omitempty"`
	TraceState     string    `json:"traceState,omitempty"`
	BodyBytes      []byte    `json:"bodyBytes"`
}

// index is the list's index blob (ListBlobName).
type index struct {
	// Seq is the last sequence number the list gave.
	Seq     uint64             `json:"seq"`
	Items   []indexItem        `json:"items"`
	Evicted []bus.EvictedCount `json:"evicted,omitempty"`
}

// MaxIndexReasonBytes bounds a dead letter's reason in the list's index (cut at a rune
// boundary, automation.Clip), so the index stays bounded however long an error's text; the
// record blob keeps the whole reason, and a restart lists the reason as the index kept it.
const MaxIndexReasonBytes = 1024

type indexItem struct {
	ID             string    `json:"id"`
	Destination    string    `json:"destination"`
	MessageID      string    `json:"messageId"`
	SessionID      string    `json:"sessionId,omitempty"`
	DeliveryCount  int       `json:"deliveryCount"`
	Reason         string    `json:"reason"`
	DeadLetteredOn time.Time `json:"deadLetteredOn"`
	TraceParent    string    `json:"traceParent,omitempty"`
	TraceState     string    `json:"traceState,omitempty"`
	// BusinessUnitID is the unit its body names (BusinessUnitOf): the label its eviction is
	// counted under when its record cannot be read back.
	BusinessUnitID string `json:"businessUnitId,omitempty"`
	Blob           string `json:"blob"`
	// Requeued: requeued, its message not settled yet (listed again after a restart).
	Requeued bool `json:"requeued,omitempty"`
}

func idNumber(id string) uint64 {
	n, _ := strconv.ParseUint(id, 10, 64)
	return n
}

// Record keeps d, just listed by the bus (bus.MemoryOptions.OnDeadLetter's ID and
// DeadLetteredOn, or what bus.Memory.RecordDeadLetter returned): its record blob, then the
// index. It returns the record's name. A failed write is logged and returned; the dead
// letter stays listed until the process stops.
func (k *Kept) Record(ctx context.Context, d bus.DeadLetter) (string, error) {
	name := RecordBlobName(d.Message.Destination, d.Message.ID)
	m := d.Message
	rec := record{Destination: m.Destination, MessageID: m.ID, DeliveryCount: m.DeliveryCount, Reason: d.Reason, RecordedOn: k.now(),
		Body: string(m.Body), ID: d.ID, DeadLetteredOn: d.DeadLetteredOn.UTC(), SessionID: m.SessionID, TraceParent: m.TraceParent,
		TraceState: m.TraceState, BodyBytes: m.Body}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = k.Blobs.PutBlob(ctx, name, b)
	}
	if err != nil {
		k.log().Error("dead-letter record not written: the dead letter is listed until the process stops, not after a restart",
			"id", d.ID, "destination", m.Destination, "messageId", m.ID, "blob", name, "error", err)
		return name, err
	}
	// A new dead letter of a requeued message settles that requeue: it leaves the index in
	// the same write, so no index names the message twice (OnDeadLetter runs before
	// OnSettled, and a crash between them would list it twice).
	k.mu.Lock()
	if r, ok := k.requeued[m.Destination+"\x00"+m.ID]; ok && r.ID != d.ID {
		delete(k.requeued, m.Destination+"\x00"+m.ID)
		k.nRequeued.Store(int64(len(k.requeued)))
	}
	k.mu.Unlock()
	return name, k.Save(ctx)
}

// Save writes the index of the list as it is now. A failed write is logged (Error) and
// returned; the next change writes the whole index again.
func (k *Kept) Save(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.Memory.DeadLetterState()
	labels := make(map[string]string, len(st.Items))
	ix := index{Seq: st.Seq, Items: make([]indexItem, 0, len(st.Items)+len(k.requeued)), Evicted: st.Evicted}
	all := st.Items
	if len(k.requeued) > 0 {
		all = slices.Clone(st.Items)
		listed := make(map[string]bool, len(st.Items))
		for _, d := range st.Items {
			listed[d.ID] = true
		}
		for _, d := range k.requeued {
			if !listed[d.ID] { // marked by a requeue whose bus call has not taken it off yet
				all = append(all, d)
			}
		}
		slices.SortFunc(all, func(a, b bus.DeadLetter) int { return cmp.Compare(idNumber(a.ID), idNumber(b.ID)) })
	}
	for _, d := range all {
		if k.discarding[d.ID] {
			continue // being discarded (DeadLetterDiscard)
		}
		bu, ok := k.labels[d.ID]
		if !ok {
			bu = BusinessUnitOf(d.Message.Body)
		}
		labels[d.ID] = bu
		m := d.Message
		r, requeued := k.requeued[m.Destination+"\x00"+m.ID]
		requeued = requeued && r.ID == d.ID
		ix.Items = append(ix.Items, indexItem{ID: d.ID, Destination: m.Destination, MessageID: m.ID, SessionID: m.SessionID,
			DeliveryCount: m.DeliveryCount, Reason: automation.Clip(d.Reason, MaxIndexReasonBytes), DeadLetteredOn: d.DeadLetteredOn.UTC(), TraceParent: m.TraceParent,
			TraceState: m.TraceState, BusinessUnitID: bu, Blob: RecordBlobName(m.Destination, m.ID), Requeued: requeued})
	}
	k.labels = labels
	b, err := json.Marshal(ix)
	if err == nil {
		err = k.Blobs.PutBlob(ctx, ListBlobName, b)
	}
	if err != nil {
		k.log().Error("dead-letter list index not written: a restart lists the dead letters of the last index written",
			"blob", ListBlobName, "listed", len(ix.Items), "error", err)
	}
	return err
}

// Restore puts the list of the index (ListBlobName) back on the bus, at start-up before
// anything is dead-lettered, and returns how many dead letters it lists again. Each one's
// body is read from its record; one whose record is gone, unreadable or not of that message
// (another route or message id) is not listed: it is logged and counted as evicted on its
// route and unit, so the counts never lose it. No index (a first start) restores nothing.
// Errors (nothing restored): an index that cannot be read or parsed (move the blob aside
// to start with an empty list), bus.Memory.RestoreDeadLetters's.
func (k *Kept) Restore(ctx context.Context) (int, error) {
	raw, err := k.Blobs.GetBlob(ctx, ListBlobName)
	if errors.Is(err, trace.ErrBlobNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("deadletter: reading the dead-letter list index %s: %w", ListBlobName, err)
	}
	var ix index
	if err := json.Unmarshal(raw, &ix); err != nil {
		return 0, fmt.Errorf("deadletter: the dead-letter list index %s is not readable (move it aside to start with an empty list): %w", ListBlobName, err)
	}
	st := bus.DeadLetterState{Seq: ix.Seq, Evicted: ix.Evicted}
	labels := map[string]string{}
	// The index holds at most the bound of the list that wrote it; a smaller bound now reads
	// only the newest it keeps and counts the older ones as evicted, unread.
	items := ix.Items
	if over := len(items) - k.Memory.MaxDeadLetters(); over > 0 {
		for _, it := range items[:over] {
			st.Evicted = append(st.Evicted, bus.EvictedCount{Destination: it.Destination, Label: it.BusinessUnitID, Count: 1})
		}
		items = items[over:]
	}
	for _, it := range items {
		body, err := k.body(ctx, it)
		if err != nil {
			k.log().Error("dead letter not listed again after the restart: its record cannot be read; counted as evicted",
				"id", it.ID, "destination", it.Destination, "messageId", it.MessageID, "blob", it.Blob, "error", err)
			st.Evicted = append(st.Evicted, bus.EvictedCount{Destination: it.Destination, Label: it.BusinessUnitID, Count: 1})
			continue
		}
		labels[it.ID] = it.BusinessUnitID
		st.Items = append(st.Items, bus.DeadLetter{ID: it.ID, Reason: it.Reason, DeadLetteredOn: it.DeadLetteredOn.UTC(),
			Message: bus.Message{ID: it.MessageID, Destination: it.Destination, SessionID: it.SessionID, Body: body,
				DeliveryCount: it.DeliveryCount, TraceParent: it.TraceParent, TraceState: it.TraceState}})
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.Memory.RestoreDeadLetters(st); err != nil {
		return 0, fmt.Errorf("deadletter: %s: %w", ListBlobName, err)
	}
	k.labels = labels
	return len(st.Items), nil
}

// body reads the exact bytes of it's message from its record.
func (k *Kept) body(ctx context.Context, it indexItem) ([]byte, error) {
	name := RecordBlobName(it.Destination, it.MessageID)
	raw, err := k.Blobs.GetBlob(ctx, name)
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("record %s: %w", name, err)
	}
	if rec.Destination != it.Destination || rec.MessageID != it.MessageID {
		return nil, fmt.Errorf("record %s is of message %s on %s", name, rec.MessageID, rec.Destination)
	}
	return rec.BodyBytes, nil
}

func (k *Kept) now() time.Time {
	if k.Clock == nil {
		return automation.SystemClock{}.Now().UTC()
	}
	return k.Clock.Now().UTC()
}

func (k *Kept) log() *slog.Logger {
	if k.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return k.Log
}
