package bus_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
)

func publishN(t *testing.T, b *bus.Memory, dest string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := b.Publish(context.Background(), bus.Message{ID: id, Destination: dest, Body: []byte(id)}); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(ms []bus.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s#%d", m.ID, m.DeliveryCount))
	}
	return out
}

// A batch handler gets the waiting messages, up to its max at once and within Drain's
// limit; every message of a successful batch is settled once, and Drain counts messages.
func TestMemoryBatchDelivery(t *testing.T) {
	t.Parallel()
	var settled []string
	b := bus.NewMemory(&bus.MemoryOptions{OnSettled: func(_ context.Context, m bus.Message) { settled = append(settled, m.ID) }})
	var got [][]string
	b.SubscribeBatch("q", 3, func(_ context.Context, ms []bus.Message) error {
		got = append(got, ids(ms))
		ms[0].Body[0] = 'X' // the handler's copy only
		return nil
	})
	publishN(t, b, "q", "a", "b", "c", "d", "e", "f")
	n, err := b.Drain(context.Background(), 5)
	if err != nil || n != 5 {
		t.Fatalf("Drain(5) = %d, %v", n, err)
	}
	if want := [][]string{{"a#1", "b#1", "c#1"}, {"d#1", "e#1"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	if n, err := b.Drain(context.Background(), 0); err != nil || n != 1 || b.Len("q") != 0 {
		t.Fatalf("second Drain = %d, %v; %d left", n, err, b.Len("q"))
	}
	if !slices.Equal(settled, []string{"a", "b", "c", "d", "e", "f"}) {
		t.Fatalf("settled %v", settled)
	}
	if b.Handler("q") != nil {
		t.Fatal("Handler returns a one-message handler for a batch destination")
	}
	if h, most := b.BatchHandler("q"); h == nil || most != 3 {
		t.Fatalf("BatchHandler = %v, %d", h != nil, most)
	}
	// Subscribe replaces the batch handler.
	one := 0
	b.Subscribe("q", func(context.Context, bus.Message) error { one++; return nil })
	publishN(t, b, "q", "g", "h")
	if n, _ := b.Drain(context.Background(), 0); n != 2 || one != 2 {
		t.Fatalf("one by one after Subscribe: %d deliveries, %d calls", n, one)
	}
}

// A failed batch settles each of its messages by its own DeliveryCount: one that reached
// MaxDeliveryCount is dead-lettered while its batch-mates are redelivered; a permanent
// error dead-letters the whole batch at once.
func TestMemoryBatchFailureSettlesEachMessage(t *testing.T) {
	t.Parallel()
	var dead []string
	b := bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: 2, OnDeadLetter: func(d bus.DeadLettered) { dead = append(dead, d.Message.ID) }})
	var got [][]string
	fail := errors.New("store unavailable")
	b.SubscribeBatch("q", 10, func(_ context.Context, ms []bus.Message) error {
		got = append(got, ids(ms))
		return fail
	})
	publishN(t, b, "q", "a")
	if n, _ := b.Drain(context.Background(), 1); n != 1 {
		t.Fatalf("first delivery: %d", n)
	}
	publishN(t, b, "q", "b")
	if n, _ := b.Drain(context.Background(), 2); n != 2 {
		t.Fatalf("second delivery: %d", n)
	}
	if want := [][]string{{"a#1"}, {"a#2", "b#1"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	if !slices.Equal(dead, []string{"a"}) || b.Len("q") != 1 {
		t.Fatalf("dead-lettered %v, %d left; want a dead-lettered and b waiting", dead, b.Len("q"))
	}
	ok := 0
	b.SubscribeBatch("q", 10, func(_ context.Context, ms []bus.Message) error { ok += len(ms); return nil })
	if n, _ := b.Drain(context.Background(), 0); n != 1 || ok != 1 || b.Len("q") != 0 {
		t.Fatalf("b redelivered: %d deliveries, %d handled, %d left", n, ok, b.Len("q"))
	}
	b.SubscribeBatch("q", 10, func(context.Context, []bus.Message) error { return automation.Permanent(errors.New("never")) })
	publishN(t, b, "q", "c", "d")
	if n, _ := b.Drain(context.Background(), 0); n != 2 || !slices.Equal(dead, []string{"a", "c", "d"}) {
		t.Fatalf("permanent: %d deliveries, dead-lettered %v", n, dead)
	}
}

// AfterDrain runs once when a Drain that delivered something returns, after every message
// of it was settled (so a consumer can write the drain's settlements at once), and not for
// a Drain that found nothing to deliver.
func TestMemoryAfterDrain(t *testing.T) {
	t.Parallel()
	var settled []string
	var flushes [][]string
	b := bus.NewMemory(&bus.MemoryOptions{
		OnSettled:  func(_ context.Context, m bus.Message) { settled = append(settled, m.ID) },
		AfterDrain: func(context.Context) { flushes = append(flushes, append([]string(nil), settled...)) },
	})
	b.SubscribeBatch("q", 2, func(context.Context, []bus.Message) error { return nil })
	if n, err := b.Drain(context.Background(), 0); err != nil || n != 0 || len(flushes) != 0 {
		t.Fatalf("an empty Drain: %d, %v, %d AfterDrain calls", n, err, len(flushes))
	}
	publishN(t, b, "q", "a", "b", "c")
	if n, err := b.Drain(context.Background(), 0); err != nil || n != 3 {
		t.Fatalf("Drain = %d, %v", n, err)
	}
	if len(flushes) != 1 || len(flushes[0]) != 3 {
		t.Fatalf("AfterDrain calls %v, want one after all 3 settled", flushes)
	}
}
