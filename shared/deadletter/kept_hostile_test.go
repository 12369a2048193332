package deadletter_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
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
