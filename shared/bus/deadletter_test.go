package bus_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

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
