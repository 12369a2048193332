package deadletter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// blobs is an in-memory diagnostics store (deadletter.Blobs) that counts its reads.
type blobs struct {
	mu    sync.Mutex
	m     map[string][]byte
	reads int
}

func (b *blobs) PutBlob(ctx context.Context, name string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[name] = append([]byte(nil), data...)
	return nil
}

func (b *blobs) GetBlob(ctx context.Context, name string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reads++
	d, ok := b.m[name]
	if !ok {
		return nil, trace.ErrBlobNotFound
	}
	return append([]byte(nil), d...), nil
}

// newBlobs is an empty diagnostics store and the clock of a test's runs over it.
func newBlobs() (*blobs, *automation.ManualClock) {
	return &blobs{m: map[string][]byte{}}, automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
}

// process is one run of the embedded runtime's dead-letter list: an in-process bus whose
// consumer of "q" fails every message for good until fixed, kept in bl (as app.Open wires it).
type process struct {
	mem   *bus.Memory
	kept  *deadletter.Kept
	fixed bool
	got   []bus.Message
}

func start(t *testing.T, bl *blobs, clock automation.Clock, maxDead int) *process {
	t.Helper()
	p := &process{}
	p.mem = bus.NewMemory(&bus.MemoryOptions{Now: clock.Now, MaxDeadLetters: maxDead,
		OnSettled:       func(ctx context.Context, m bus.Message) { p.kept.Settled(ctx, m) },
		DeadLetterLabel: func(m bus.Message) string { return deadletter.BusinessUnitOf(m.Body) },
		OnDeadLetter: func(d bus.DeadLettered) {
			if _, err := p.kept.Record(context.Background(), bus.DeadLetter{ID: d.ID, Message: d.Message, Reason: d.Reason, DeadLetteredOn: d.DeadLetteredOn}); err != nil {
				t.Error(err)
			}
		}})
	p.kept = &deadletter.Kept{Memory: p.mem, Blobs: bl, Clock: clock}
	if _, err := p.kept.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mem.Subscribe("q", func(ctx context.Context, m bus.Message) error {
		if !p.fixed {
			return automation.Permanent(fmt.Errorf("unit of %s unknown", m.ID))
		}
		p.got = append(p.got, m)
		return nil
	})
	return p
}

func (p *process) deadLetter(t *testing.T, ids ...string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		// A body that is not valid UTF-8: a requeue after the restart must send these bytes.
		body := []byte(`{"businessUnitId":"bu-1","id":"` + id + `","raw":"` + "\xff\xfe" + `"}`)
		if err := p.mem.Publish(ctx, bus.Message{ID: id, Destination: "q", SessionID: "s-" + id, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.mem.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
}

func listAll(t *testing.T, box bus.DeadLetterBox) map[string]bus.DeadLetter {
	t.Helper()
	items, _, err := box.DeadLetterList(context.Background(), bus.DeadLetterListParams{Limit: bus.MaxDeadLetterPage})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bus.DeadLetter{}
	for _, d := range items {
		out[d.Message.ID] = d
	}
	return out
}

// After a restart (a new bus over the same diagnostics store) the list shows the dead
// letters it showed, with the same ids, DeadLetteredOn, reasons and exact bodies (so the same
// ETags), except those requeued (and delivered) or discarded before; a requeue after the restart delivers
// the original bytes; new dead letters get ids no earlier one had; and a requeue or discard
// after the restart does not come back after the next one.
func TestKeptListSurvivesARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl, clock := newBlobs()
	p1 := start(t, bl, clock, 0)
	p1.deadLetter(t, "a", "b", "c", "d")
	before := listAll(t, p1.kept)
	if len(before) != 4 {
		t.Fatalf("before the restart: %+v", before)
	}
	p1.fixed = true
	if _, err := p1.kept.DeadLetterRequeue(ctx, before["b"].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p1.mem.Drain(ctx, 0); err != nil || len(p1.got) != 1 {
		t.Fatalf("the requeue of b delivered %+v, %v", p1.got, err)
	}
	if _, err := p1.kept.DeadLetterDiscard(ctx, before["d"].ID); err != nil {
		t.Fatal(err)
	}

	clock.Advance(time.Hour)
	p2 := start(t, bl, clock, 0)
	after := listAll(t, p2.kept)
	if len(after) != 2 || after["b"].ID != "" || after["d"].ID != "" {
		t.Fatalf("after the restart: %+v, want a and c only (b requeued, d, the newest, discarded)", after)
	}
	for _, id := range []string{"a", "c"} {
		b, a := before[id], after[id]
		if a.ID != b.ID || !a.DeadLetteredOn.Equal(b.DeadLetteredOn) || a.Reason != b.Reason || a.Message.SessionID != "s-"+id ||
			string(a.Message.Body) != string(b.Message.Body) || deadletter.ETagOf(a) != deadletter.ETagOf(b) {
			t.Fatalf("%s after the restart: %+v, before: %+v", id, a, b)
		}
	}
	// New dead letters take ids after every earlier one (b and d's too).
	p2.deadLetter(t, "e")
	top, _ := strconv.Atoi(before["d"].ID)
	if e := listAll(t, p2.kept)["e"]; e.ID == "" || mustAtoi(t, e.ID) <= top {
		t.Fatalf("a new dead letter after the restart: %+v, want an id above %d", e, top)
	}
	// The requeue after the restart delivers the exact bytes as a first delivery.
	p2.fixed = true
	if _, err := p2.kept.DeadLetterRequeue(ctx, after["a"].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.mem.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if len(p2.got) != 1 || p2.got[0].ID != "a" || string(p2.got[0].Body) != string(before["a"].Message.Body) || p2.got[0].DeliveryCount != 1 {
		t.Fatalf("delivered after the requeue: %+v", p2.got)
	}
	if _, err := p2.kept.DeadLetterDiscard(ctx, after["c"].ID); err != nil {
		t.Fatal(err)
	}
	p3 := start(t, bl, clock, 0)
	if got := listAll(t, p3.kept); len(got) != 1 || got["e"].ID == "" {
		t.Fatalf("after the second restart: %+v, want e only", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The list's bound and its eviction counts hold across a restart: evictions counted before
// are counted after; a restart with a smaller bound reads only the newest it keeps (never
// more records than the bound) and counts the others as evicted; a dead letter whose
// record is gone is not listed but counted as evicted, on its route and unit.
func TestKeptListIsBoundedAndCountsEvictions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl, clock := newBlobs()
	p1 := start(t, bl, clock, 5)
	p1.deadLetter(t, "m1", "m2", "m3", "m4", "m5", "m6", "m7")
	if ev, _ := p1.kept.DeadLetterEvicted(ctx, nil); ev["q"] != 2 {
		t.Fatalf("evicted before the restart: %v", ev)
	}

	bl.reads = 0
	p2 := start(t, bl, clock, 3)
	if bl.reads > 1+3 {
		t.Fatalf("the restart read %d blobs, want at most the index and 3 records", bl.reads)
	}
	got := listAll(t, p2.kept)
	if len(got) != 3 || got["m5"].ID == "" || got["m6"].ID == "" || got["m7"].ID == "" {
		t.Fatalf("after the restart with a bound of 3: %+v", got)
	}
	ev, _ := p2.kept.DeadLetterEvicted(ctx, func(bu string) bool { return bu == "bu-1" })
	if ev["q"] != 4 {
		t.Fatalf("evicted after the restart, in bu-1: %v, want 4 (2 before, 2 past the smaller bound)", ev)
	}

	// m6's record is lost: the next restart lists m5 and m7, and counts m6 as evicted.
	delete(bl.m, deadletter.RecordBlobName("q", "m6"))
	p3 := start(t, bl, clock, 3)
	if got := listAll(t, p3.kept); len(got) != 2 || got["m6"].ID != "" {
		t.Fatalf("after the record of m6 was lost: %+v", got)
	}
	if ev, _ := p3.kept.DeadLetterEvicted(ctx, func(bu string) bool { return bu == "bu-1" }); ev["q"] != 5 {
		t.Fatalf("evicted after the record of m6 was lost: %v, want 5", ev)
	}
}

// An action recorded in the audit whose process died before it reached the bus is taken
// over after the restart, AbandonedAfter later, as it would have been without one: the dead
// letter is listed again with the ETag the audit row is keyed by.
func TestDiedActionIsTakenOverAfterARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl, clock := newBlobs()
	p1 := start(t, bl, clock, 0)
	p1.deadLetter(t, "x")
	d := listAll(t, p1.kept)["x"]
	au := newAudit()
	// The process recorded the requeue, then died before calling the bus.
	if err := au.DeadLetterAuditInsert(ctx, store.DeadLetterAudit{ETag: deadletter.ETagOf(d), Action: store.DeadLetterRequeue, DeadLetterID: d.ID,
		Destination: "q", MessageID: "x", BusinessUnitID: "bu-1", Operator: "ann", Reason: "fixed", ActedOn: clock.Now()}); err != nil {
		t.Fatal(err)
	}

	clock.Advance(deadletter.AbandonedAfter + time.Second)
	p2 := start(t, bl, clock, 0)
	p2.fixed = true
	svc := &deadletter.Service{Box: p2.kept, Audit: au, Clock: clock}
	res, err := svc.Requeue(ctx, automation.BusinessUnits("bu-1"), deadletter.ActRequest{ID: d.ID, ETag: deadletter.ETagOf(d), Operator: "bob", Reason: "again"})
	if err != nil || res.Replayed || res.Operator != "bob" {
		t.Fatalf("the requeue after the restart: %+v %v, want bob's, taken over", res, err)
	}
	if _, err := p2.mem.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if len(p2.got) != 1 || p2.got[0].ID != "x" {
		t.Fatalf("delivered: %+v", p2.got)
	}
	if a, _ := au.DeadLetterAuditGet(ctx, deadletter.ETagOf(d)); a.Operator != "bob" {
		t.Fatalf("audit: %+v", a)
	}
}

// A malformed index fails the restore with an error naming its blob; nothing is listed.
func TestKeptRestoreRefusesAMalformedIndex(t *testing.T) {
	t.Parallel()
	bl := &blobs{m: map[string][]byte{deadletter.ListBlobName: []byte("{not json")}}
	k := &deadletter.Kept{Memory: bus.NewMemory(nil), Blobs: bl}
	if _, err := k.Restore(context.Background()); err == nil || !strings.Contains(err.Error(), deadletter.ListBlobName) {
		t.Fatalf("restore: %v", err)
	}
	if n, _ := k.DeadLetterCount(context.Background(), nil); len(n) != 0 {
		t.Fatalf("listed: %v", n)
	}
}

// A requeued dead letter whose message the bus has not delivered when the process stops
// (the in-process bus loses its queue) is listed again after the restart, with its id and
// ETag; once delivered, it is not.
func TestKeptRequeuedUndeliveredComesBackAfterARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl, clock := newBlobs()
	p1 := start(t, bl, clock, 0)
	p1.deadLetter(t, "a", "b")
	before := listAll(t, p1.kept)
	p1.fixed = true
	for _, id := range []string{"a", "b"} {
		if _, err := p1.kept.DeadLetterRequeue(ctx, before[id].ID); err != nil {
			t.Fatal(err)
		}
	}
	// b is delivered; a is still queued when the process stops.
	if _, err := p1.mem.DrainDestination(ctx, "q", 1); err != nil {
		t.Fatal(err)
	}
	if len(p1.got) != 1 {
		t.Fatalf("delivered: %+v", p1.got)
	}
	delivered := p1.got[0].ID
	p2 := start(t, bl, clock, 0)
	got := listAll(t, p2.kept)
	lost := map[string]string{"a": "b", "b": "a"}[delivered]
	if len(got) != 1 || got[lost].ID != before[lost].ID || deadletter.ETagOf(got[lost]) != deadletter.ETagOf(before[lost]) {
		t.Fatalf("after the restart: %+v, want %s (requeued, not delivered) with its id and ETag", got, lost)
	}
}

// Requeues from many goroutines while the bus delivers: the index written last is the list
// as it is then, so after a restart nothing requeued and delivered comes back and the one
// left listed is.
func TestKeptConcurrentRequeuesLeaveTheLastList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl, clock := newBlobs()
	p1 := start(t, bl, clock, 0)
	var ids []string
	for i := range 40 {
		ids = append(ids, fmt.Sprintf("m%02d", i))
	}
	p1.deadLetter(t, ids...)
	listed := listAll(t, p1.kept)
	p1.mem.Subscribe("q", func(ctx context.Context, m bus.Message) error { return nil })
	var wg sync.WaitGroup
	for _, id := range ids[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p1.kept.DeadLetterRequeue(ctx, listed[id].ID); err != nil {
				t.Error(err)
			}
			if _, err := p1.mem.Drain(ctx, 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := p1.mem.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	p2 := start(t, bl, clock, 0)
	if got := listAll(t, p2.kept); len(got) != 1 || got["m00"].ID != listed["m00"].ID {
		t.Fatalf("after the restart: %d listed, want m00 only: %+v", len(got), got)
	}
}

// A dead letter's reason is kept whole in its record and cut to MaxIndexReasonBytes (at a
// rune boundary) in the list's index, so the index stays bounded however long an error's
// text; a restart lists the reason as the index kept it.
func TestKeptIndexBoundsTheReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl, clock := newBlobs()
	mem := bus.NewMemory(&bus.MemoryOptions{Now: clock.Now})
	k := &deadletter.Kept{Memory: mem, Blobs: bl, Clock: clock}
	long := strings.Repeat("é", deadletter.MaxIndexReasonBytes) // 2 bytes a rune: twice the bound
	d := mem.RecordDeadLetter(bus.Message{ID: "m-1", Destination: "q", Body: []byte(`{}`)}, long)
	name, err := k.Record(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if rec := string(bl.m[name]); !strings.Contains(rec, long) {
		t.Fatalf("the record does not keep the whole reason")
	}
	var ix struct {
		Items []struct {
			Reason string `json:"reason"`
		} `json:"items"`
	}
	if err := json.Unmarshal(bl.m[deadletter.ListBlobName], &ix); err != nil || len(ix.Items) != 1 {
		t.Fatalf("index %s: %v", bl.m[deadletter.ListBlobName], err)
	}
	want := strings.Repeat("é", deadletter.MaxIndexReasonBytes/2)
	if got := ix.Items[0].Reason; got != want {
		t.Fatalf("index reason of %d bytes (valid UTF-8 %v), want the first %d bytes", len(got), utf8.ValidString(got), len(want))
	}
	after := &deadletter.Kept{Memory: bus.NewMemory(&bus.MemoryOptions{Now: clock.Now}), Blobs: bl, Clock: clock}
	if n, err := after.Restore(ctx); err != nil || n != 1 {
		t.Fatalf("restore: %d %v", n, err)
	}
	if got, err := after.DeadLetterGet(ctx, d.ID); err != nil || got.Reason != want {
		t.Fatalf("after the restart: %q %v", got.Reason, err)
	}
}
