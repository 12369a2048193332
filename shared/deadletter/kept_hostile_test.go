package deadletter_test

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/store"
)

// crashBlobs is a diagnostics store that keeps a copy of everything it holds after each
// write: each copy is what a restart would read had the process died right after it.
type crashBlobs struct {
	blobs
	points []map[string][]byte
}

func (b *crashBlobs) PutBlob(ctx context.Context, name string, data []byte) error {
	if err := b.blobs.PutBlob(ctx, name, data); err != nil {
		return err
	}
	b.mu.Lock()
	b.points = append(b.points, maps.Clone(b.m))
	b.mu.Unlock()
	return nil
}

// Hostile: a requeued dead letter whose delivery fails for good again. The bus calls
// OnDeadLetter (Record: record blob, then the index) before OnSettled (Settled: the
// requeued entry leaves the index), so an index is written that holds the message twice:
// its old id, marked requeued, and its new id. A crash right after that write lists the
// same message twice after the restart, and two requeues then deliver it twice. Every
// crash point must list each message at most once.
func TestHostileNoCrashPointListsAMessageTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl := &crashBlobs{blobs: blobs{m: map[string][]byte{}}}
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	p1 := &process{}
	p1.mem = bus.NewMemory(&bus.MemoryOptions{Now: clock.Now,
		OnSettled: func(ctx context.Context, m bus.Message) { p1.kept.Settled(ctx, m) },
		OnDeadLetter: func(d bus.DeadLettered) {
			_, _ = p1.kept.Record(context.Background(), bus.DeadLetter{ID: d.ID, Message: d.Message, Reason: d.Reason, DeadLetteredOn: d.DeadLetteredOn})
		}})
	p1.kept = &deadletter.Kept{Memory: p1.mem, Blobs: bl, Clock: clock}
	p1.mem.Subscribe("q", func(ctx context.Context, m bus.Message) error {
		return automation.Permanent(context.DeadlineExceeded)
	})
	p1.deadLetter(t, "a")
	d := listAll(t, p1.kept)["a"]
	if _, err := p1.kept.DeadLetterRequeue(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p1.mem.Drain(ctx, 0); err != nil { // fails again: dead-lettered anew
		t.Fatal(err)
	}
	for i, point := range bl.points {
		raw, ok := point[deadletter.ListBlobName]
		if !ok {
			continue
		}
		var ix struct {
			Items []struct {
				ID        string `json:"id"`
				MessageID string `json:"messageId"`
				Requeued  bool   `json:"requeued"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &ix); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, it := range ix.Items {
			seen[it.MessageID]++
		}
		if seen["a"] > 1 {
			// What a restart at this point lists.
			k := &deadletter.Kept{Memory: bus.NewMemory(nil), Blobs: &blobs{m: point}}
			n, err := k.Restore(ctx)
			t.Errorf("crash after write %d: the index lists message a %d times (%+v); a restart lists %d dead letters (%v)", i, seen["a"], ix.Items, n, err)
		}
	}
}

// dupBlobs checks every index written: no dead-letter id twice (Restore refuses such an
// index, and app.Open with it: the runtime does not start).
type dupBlobs struct {
	blobs
	dups []string
}

func (b *dupBlobs) PutBlob(ctx context.Context, name string, data []byte) error {
	if name == deadletter.ListBlobName {
		var ix struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &ix); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, it := range ix.Items {
			if seen[it.ID] {
				b.mu.Lock()
				b.dups = append(b.dups, string(data))
				b.mu.Unlock()
			}
			seen[it.ID] = true
		}
	}
	return b.blobs.PutBlob(ctx, name, data)
}

// Hostile: a requeue marks its dead letter requeued (for the index) before the bus takes it
// off the list; an index written by another change in between (a dead letter listed, a
// discard, a settlement: each Save) holds the dead letter twice, listed and requeued, under
// one id. A crash before the requeue's own write leaves that index, and the next start fails
// (bus.RestoreDeadLetters: "names a dead letter twice"; app.Open returns the error).
func TestHostileIndexNeverNamesAnIDTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl := &dupBlobs{blobs: blobs{m: map[string][]byte{}}}
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	mem := bus.NewMemory(&bus.MemoryOptions{Now: clock.Now, MaxDeadLetters: 1000})
	k := &deadletter.Kept{Memory: mem, Blobs: bl, Clock: clock}
	var ids []string
	for i := range 300 {
		d := mem.RecordDeadLetter(bus.Message{ID: "m" + strconv.Itoa(i), Destination: "q", Body: []byte(`{}`)}, "poison")
		if _, err := k.Record(ctx, d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, id := range ids {
			if _, err := k.DeadLetterRequeue(ctx, id); err != nil {
				t.Error(err)
			}
		}
	}()
	for saving := true; saving; {
		select {
		case <-done:
			saving = false
		default:
			_ = k.Save(ctx) // another change of the list writing the index
		}
	}
	bl.mu.Lock()
	defer bl.mu.Unlock()
	if len(bl.dups) > 0 {
		m := maps.Clone(bl.m) // the records
		m[deadletter.ListBlobName] = []byte(bl.dups[0])
		k2 := &deadletter.Kept{Memory: bus.NewMemory(&bus.MemoryOptions{MaxDeadLetters: 1000}), Blobs: &blobs{m: m}}
		_, err := k2.Restore(ctx)
		t.Fatalf("%d index writes named a dead-letter id twice; a restart after one: %v", len(bl.dups), err)
	}
}

// stateBlobs keeps, at each write, a copy of the store and whether the bus still listed the
// dead letter watched: the copy last taken while it was listed is what a restart reads
// after a crash right after the bus dropped it.
type stateBlobs struct {
	blobs
	listed func() bool
	atDrop map[string][]byte
}

func (b *stateBlobs) PutBlob(ctx context.Context, name string, data []byte) error {
	if err := b.blobs.PutBlob(ctx, name, data); err != nil {
		return err
	}
	if b.listed != nil && b.listed() {
		b.mu.Lock()
		b.atDrop = maps.Clone(b.m)
		b.mu.Unlock()
	}
	return nil
}

// Hostile: the reverse crash: a discard the bus did (and the audit recorded) before the
// index was written without it. After the restart the dead letter is listed again with its
// etag; Kept's doc says the other action on it is 412. It was 409 at first and, after
// AbandonedAfter, a requeue took the discard's audit row over (DeadLetterAuditTakeOver
// replaces any action recorded before the cutoff): the discarded message was delivered and
// the audit no longer said it was ever discarded.
func TestHostileDiscardLostByACrashIsNotRequeuedLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bl := &stateBlobs{blobs: blobs{m: map[string][]byte{}}}
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	p1 := &process{}
	p1.mem = bus.NewMemory(&bus.MemoryOptions{Now: clock.Now,
		OnDeadLetter: func(d bus.DeadLettered) {
			_, _ = p1.kept.Record(context.Background(), bus.DeadLetter{ID: d.ID, Message: d.Message, Reason: d.Reason, DeadLetteredOn: d.DeadLetteredOn})
		}})
	p1.kept = &deadletter.Kept{Memory: p1.mem, Blobs: bl, Clock: clock}
	p1.mem.Subscribe("q", func(ctx context.Context, m bus.Message) error { return automation.Permanent(context.Canceled) })
	p1.deadLetter(t, "x")
	d := listAll(t, p1.kept)["x"]
	bl.atDrop = maps.Clone(bl.m)
	bl.listed = func() bool { _, err := p1.mem.DeadLetterGet(ctx, d.ID); return err == nil }
	au := newAudit()
	svc1 := &deadletter.Service{Box: p1.kept, Audit: au, Clock: clock}
	if _, err := svc1.Discard(ctx, automation.BusinessUnits("bu-1"), deadletter.ActRequest{ID: d.ID, ETag: deadletter.ETagOf(d), Operator: "ann", Reason: "bad data"}); err != nil {
		t.Fatal(err)
	}
	bl.listed = nil
	bl.m = bl.atDrop // the process died right after the bus dropped it

	clock.Advance(deadletter.AbandonedAfter + time.Second)
	p2 := start(t, &bl.blobs, clock, 0)
	p2.fixed = true
	svc2 := &deadletter.Service{Box: p2.kept, Audit: au, Clock: clock}
	res, err := svc2.Requeue(ctx, automation.BusinessUnits("bu-1"), deadletter.ActRequest{ID: d.ID, ETag: deadletter.ETagOf(d), Operator: "bob", Reason: "retry"})
	if _, derr := p2.mem.Drain(ctx, 0); derr != nil {
		t.Fatal(derr)
	}
	a, _ := au.DeadLetterAuditGet(ctx, deadletter.ETagOf(d))
	code := automation.CodeOf(err)
	if (code != automation.CodePreconditionFailed && code != automation.CodeNotFound) || len(p2.got) != 0 || a.Action != store.DeadLetterDiscard {
		t.Fatalf("requeue of a dead letter discarded before the crash: %+v, %v (want 412 or 404); delivered %d; audit now %s by %s", res, err, len(p2.got), a.Action, a.Operator)
	}
}
