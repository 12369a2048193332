package bus_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
)

// The in-process bus's dead letters are a DeadLetterBox: listed oldest first in pages, with
// the reason and the original message; filtered by destination and Keep; counted; and a
// requeue delivers the message again as a first delivery (duplicate detection bypassed),
// after which it is gone from the list.
func TestMemoryDeadLetterBox(t *testing.T) {
	ctx := context.Background()
	b := bus.NewMemory(nil)
	fixed := false
	var delivered []bus.Message
	b.Subscribe("q", func(ctx context.Context, m bus.Message) error {
		if !fixed {
			return automation.Permanent(fmt.Errorf("cannot apply %s", m.ID))
		}
		delivered = append(delivered, m)
		return nil
	})
	b.Subscribe("r", func(ctx context.Context, m bus.Message) error { return automation.Permanent(errors.New("no")) })
	for i := 1; i <= 3; i++ {
		if err := b.Publish(ctx, bus.Message{ID: fmt.Sprintf("m%d", i), Destination: "q", Body: []byte(fmt.Sprintf(`{"n":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	_ = b.Publish(ctx, bus.Message{ID: "other", Destination: "r", Body: []byte(`{}`)})
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	page, next, err := b.DeadLetterList(ctx, bus.DeadLetterListParams{Destination: "q", Limit: 2})
	if err != nil || len(page) != 2 || next == "" || page[0].Message.ID != "m1" || page[1].Message.ID != "m2" || page[0].Reason != "cannot apply m1" {
		t.Fatalf("first page: %+v %q %v", page, next, err)
	}
	rest, next2, err := b.DeadLetterList(ctx, bus.DeadLetterListParams{Destination: "q", Limit: 2, After: next})
	if err != nil || len(rest) != 1 || rest[0].Message.ID != "m3" || next2 != "" || string(rest[0].Message.Body) != `{"n":3}` {
		t.Fatalf("second page: %+v %q %v", rest, next2, err)
	}
	kept, _, _ := b.DeadLetterList(ctx, bus.DeadLetterListParams{Limit: 10, Keep: func(d bus.DeadLetter) bool { return d.Message.Destination == "r" }})
	if len(kept) != 1 || kept[0].Message.ID != "other" {
		t.Fatalf("kept: %+v", kept)
	}
	counts, _ := b.DeadLetterCount(ctx, nil)
	if counts["q"] != 3 || counts["r"] != 1 {
		t.Fatalf("counts: %v", counts)
	}
	fixed = true
	if _, err := b.DeadLetterRequeue(ctx, page[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if len(delivered) != 1 || delivered[0].ID != "m2" || delivered[0].DeliveryCount != 1 {
		t.Fatalf("after the requeue: %+v", delivered)
	}
	if _, err := b.DeadLetterRequeue(ctx, page[1].ID); !errors.Is(err, bus.ErrDeadLetterNotFound) {
		t.Fatalf("a second requeue: %v", err)
	}
	if counts, _ := b.DeadLetterCount(ctx, nil); counts["q"] != 2 {
		t.Fatalf("counts after the requeue: %v", counts)
	}
}

// DeadLetterState and RestoreDeadLetters carry the list across a restart: a new bus lists
// the same dead letters with their IDs and DeadLetteredOn, numbers its new ones after every
// earlier ID (s.Seq: those requeued before too), keeps its bound (the oldest past it are
// evicted and counted, on top of the evictions restored), and refuses to restore over a list
// that has had entries.
func TestMemoryDeadLetterStateRestores(t *testing.T) {
	ctx := context.Background()
	on := time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC)
	b := bus.NewMemory(&bus.MemoryOptions{Now: func() time.Time { return on }, MaxDeadLetters: 3})
	for i := 1; i <= 5; i++ {
		b.RecordDeadLetter(bus.Message{ID: fmt.Sprintf("m%d", i), Destination: "q", SessionID: "s", Body: []byte{byte(i)}}, "no")
	}
	items, _, _ := b.DeadLetterList(ctx, bus.DeadLetterListParams{Limit: 10})
	if _, err := b.DeadLetterRequeue(ctx, items[2].ID); err != nil { // m5, the last
		t.Fatal(err)
	}
	st := b.DeadLetterState()
	if st.Seq != 5 || len(st.Items) != 2 || len(st.Evicted) != 1 || st.Evicted[0] != (bus.EvictedCount{Destination: "q", Count: 2}) {
		t.Fatalf("state: %+v", st)
	}

	nb := bus.NewMemory(&bus.MemoryOptions{Now: func() time.Time { return on.Add(time.Hour) }, MaxDeadLetters: 2})
	if err := nb.RestoreDeadLetters(st); err != nil {
		t.Fatal(err)
	}
	got, _, _ := nb.DeadLetterList(ctx, bus.DeadLetterListParams{Limit: 10})
	if len(got) != 2 || got[0].ID != items[0].ID || got[1].ID != items[1].ID || !got[0].DeadLetteredOn.Equal(on) ||
		got[1].Message.SessionID != "s" || got[1].Message.Body[0] != 4 {
		t.Fatalf("restored: %+v, want %+v", got, items[:2])
	}
	d := nb.RecordDeadLetter(bus.Message{ID: "m6", Destination: "q"}, "no")
	if d.ID != "6" {
		t.Fatalf("a new dead letter after the restore has id %q, want 6 (after m5's, requeued)", d.ID)
	}
	if ev, _ := nb.DeadLetterEvicted(ctx, nil); ev["q"] != 3 {
		t.Fatalf("evicted: %v, want 3 (2 restored, m3 past the bound)", ev)
	}
	if err := nb.RestoreDeadLetters(st); err == nil {
		t.Fatal("a restore over a list that has had entries was accepted")
	}
	if err := bus.NewMemory(nil).RestoreDeadLetters(bus.DeadLetterState{Items: []bus.DeadLetter{{ID: "x"}}}); err == nil {
		t.Fatal("a restore of a non-numeric id was accepted")
	}
}
