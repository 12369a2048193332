package bus_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/bus/bustest"
)

// memoryHarness runs the conformance suite on bus.Memory.
type memoryHarness struct {
	b   *bus.Memory
	max int
}

func newMemoryHarness(opts *bus.MemoryOptions) *memoryHarness {
	max := 10
	if opts != nil && opts.MaxDeliveryCount > 0 {
		max = opts.MaxDeliveryCount
	}
	return &memoryHarness{b: bus.NewMemory(opts), max: max}
}

var _ bustest.Harness = (*memoryHarness)(nil)

func (h *memoryHarness) Publish(ctx context.Context, m bus.Message) error {
	return h.b.Publish(ctx, m)
}

// Receive subscribes h to destination only for the duration of one Drain, so messages of
// other destinations stay queued.
func (h *memoryHarness) Receive(ctx context.Context, destination string, hd bus.Handler) (int, error) {
	h.b.Subscribe(destination, hd)
	defer h.b.Subscribe(destination, nil)
	return h.b.Drain(ctx, 0)
}

func (h *memoryHarness) DeadLetters(_ context.Context, destination string) ([]bus.DeadLettered, error) {
	var out []bus.DeadLettered
	for _, d := range h.b.DeadLetters() {
		if d.Message.Destination == destination {
			out = append(out, d)
		}
	}
	return out, nil
}

func (h *memoryHarness) MaxDeliveryCount() int { return h.max }

func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts *bus.MemoryOptions
	}{
		{"MaxDeliveryCount3", &bus.MemoryOptions{MaxDeliveryCount: 3}},
		{"Defaults", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bustest.Run(t, func(*testing.T) bustest.Harness { return newMemoryHarness(tc.opts) })
		})
	}
}

func msg(dest, id string) bus.Message {
	return bus.Message{ID: id, Destination: dest, Body: []byte("body of " + id)}
}

func mustPublish(t *testing.T, b *bus.Memory, msgs ...bus.Message) {
	t.Helper()
	for _, m := range msgs {
		if err := b.Publish(t.Context(), m); err != nil {
			t.Fatalf("Publish(%s): %v", m.ID, err)
		}
	}
}

// collect subscribes a recording handler to dest and returns the recorded ids.
func collect(b *bus.Memory, dest string, fail func(bus.Message) error) *[]string {
	var got []string
	b.Subscribe(dest, func(_ context.Context, m bus.Message) error {
		got = append(got, fmt.Sprintf("%s#%d", m.ID, m.DeliveryCount))
		if fail != nil {
			return fail(m)
		}
		return nil
	})
	return &got
}

func TestMemoryQueueFull(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		maxLen    int
		published int // before the one that must be refused
	}{
		{"one slot", 1, 1},
		{"three slots", 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := bus.NewMemory(&bus.MemoryOptions{MaxQueueLength: tt.maxLen})
			for i := range tt.published {
				mustPublish(t, b, msg("q", fmt.Sprint("m", i)))
			}
			err := b.Publish(t.Context(), msg("q", "overflow"))
			if !errors.Is(err, bus.ErrQueueFull) {
				t.Fatalf("Publish into a full queue = %v, want ErrQueueFull", err)
			}
			if !strings.Contains(err.Error(), "q") {
				t.Errorf("error %q does not name the destination", err)
			}
			if got := b.Len("q"); got != tt.maxLen {
				t.Errorf("Len = %d after a refused publish, want %d", got, tt.maxLen)
			}
			// The limit is per destination.
			mustPublish(t, b, msg("other", "elsewhere"))
			// A refused id is not remembered as published: once there is room, the
			// caller's retry with the same id is accepted and delivered.
			got := collect(b, "q", nil)
			if n, err := b.Drain(t.Context(), 1); n != 1 || err != nil {
				t.Fatalf("Drain(1) = %d, %v", n, err)
			}
			mustPublish(t, b, msg("q", "overflow"))
			if _, err := b.Drain(t.Context(), 0); err != nil {
				t.Fatalf("Drain: %v", err)
			}
			if last := (*got)[len(*got)-1]; last != "overflow#1" {
				t.Errorf("deliveries %v, want the retried overflow message last", *got)
			}
			if len(*got) != tt.maxLen+1 {
				t.Errorf("deliveries %v, want %d", *got, tt.maxLen+1)
			}
		})
	}
}

func TestMemoryQueueFullDoesNotCountRedeliveries(t *testing.T) {
	t.Parallel()
	// A message being redelivered is requeued even when publishers filled the queue
	// meanwhile: the bus never loses an accepted message.
	b := bus.NewMemory(&bus.MemoryOptions{MaxQueueLength: 1, MaxDeliveryCount: 2})
	mustPublish(t, b, msg("q", "a"))
	var got []string
	b.Subscribe("q", func(ctx context.Context, m bus.Message) error {
		got = append(got, fmt.Sprintf("%s#%d", m.ID, m.DeliveryCount))
		if m.ID == "a" && m.DeliveryCount == 1 {
			if err := b.Publish(ctx, msg("q", "b")); err != nil {
				t.Errorf("Publish during handling: %v", err)
			}
			return errors.New("retry me")
		}
		return nil
	})
	if _, err := b.Drain(t.Context(), 0); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if want := []string{"a#1", "b#1", "a#2"}; !slices.Equal(got, want) {
		t.Errorf("deliveries %v, want %v", got, want)
	}
}

func TestMemoryDuplicateWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		window    int
		publish   []string // ids, in order, all to one destination
		delivered []string
	}{
		{"within window dropped", 3, []string{"a", "b", "a", "c", "b"}, []string{"a", "b", "c"}},
		{"evicted id accepted again", 2, []string{"a", "b", "c", "a"}, []string{"a", "b", "c", "a"}},
		{"most recent still remembered after eviction", 2, []string{"a", "b", "c", "c", "b"}, []string{"a", "b", "c"}},
		{"window of one", 1, []string{"a", "a", "b", "a", "a"}, []string{"a", "b", "a"}},
		{"drops do not refresh the window", 2, []string{"a", "b", "a", "a", "c", "a"}, []string{"a", "b", "c", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := bus.NewMemory(&bus.MemoryOptions{DuplicateWindow: tt.window})
			for _, id := range tt.publish {
				mustPublish(t, b, msg("q", id))
			}
			var got []string
			b.Subscribe("q", func(_ context.Context, m bus.Message) error {
				got = append(got, m.ID)
				return nil
			})
			if _, err := b.Drain(t.Context(), 0); err != nil {
				t.Fatalf("Drain: %v", err)
			}
			if !slices.Equal(got, tt.delivered) {
				t.Errorf("delivered %v, want %v", got, tt.delivered)
			}
		})
	}
}

func TestMemoryDrainLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		limit    int
		failA    bool // a fails on its first delivery
		want     []string
		wantLeft int
	}{
		{"no limit", 0, false, []string{"a#1", "b#1", "c#1", "d#1"}, 0},
		{"negative means no limit", -1, false, []string{"a#1", "b#1", "c#1", "d#1"}, 0},
		{"one", 1, false, []string{"a#1"}, 3},
		{"three", 3, false, []string{"a#1", "b#1", "c#1"}, 1},
		{"more than queued", 10, false, []string{"a#1", "b#1", "c#1", "d#1"}, 0},
		{"redeliveries count", 5, true, []string{"a#1", "b#1", "c#1", "d#1", "a#2"}, 0},
		{"redelivery goes to the tail", 4, true, []string{"a#1", "b#1", "c#1", "d#1"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := bus.NewMemory(nil)
			mustPublish(t, b, msg("q", "a"), msg("q", "b"), msg("q", "c"), msg("q", "d"))
			got := collect(b, "q", func(m bus.Message) error {
				if tt.failA && m.ID == "a" && m.DeliveryCount == 1 {
					return errors.New("once")
				}
				return nil
			})
			n, err := b.Drain(t.Context(), tt.limit)
			if err != nil {
				t.Fatalf("Drain: %v", err)
			}
			if n != len(tt.want) {
				t.Errorf("Drain returned %d, want %d", n, len(tt.want))
			}
			if !slices.Equal(*got, tt.want) {
				t.Errorf("deliveries %v, want %v", *got, tt.want)
			}
			if left := b.Len("q"); left != tt.wantLeft {
				t.Errorf("Len after Drain = %d, want %d", left, tt.wantLeft)
			}
		})
	}
}

func TestMemoryDrainOrderAcrossDestinations(t *testing.T) {
	t.Parallel()
	b := bus.NewMemory(nil)
	mustPublish(t, b, msg("second", "s1"), msg("first", "f1"), msg("unsubscribed", "u1"), msg("second", "s2"), msg("first", "f2"))
	var got []string
	h := func(_ context.Context, m bus.Message) error {
		got = append(got, m.Destination+"/"+m.ID)
		return nil
	}
	b.Subscribe("first", h)
	b.Subscribe("second", h)
	n, err := b.Drain(t.Context(), 0)
	if err != nil || n != 4 {
		t.Fatalf("Drain = %d, %v; want 4, nil", n, err)
	}
	// Destinations drain in first-publish order (deterministic for the replay simulator).
	want := []string{"second/s1", "second/s2", "first/f1", "first/f2"}
	if !slices.Equal(got, want) {
		t.Errorf("deliveries %v, want %v", got, want)
	}
	if b.Len("unsubscribed") != 1 {
		t.Errorf("a destination without a handler was drained")
	}
	// Unsubscribing (nil handler) stops delivery; the messages wait.
	b.Subscribe("first", nil)
	mustPublish(t, b, msg("first", "f3"))
	if n, _ := b.Drain(t.Context(), 0); n != 0 || b.Len("first") != 1 {
		t.Errorf("Drain with a nil handler delivered %d, Len = %d", n, b.Len("first"))
	}
}

func TestMemoryContextCancellation(t *testing.T) {
	t.Parallel()
	t.Run("Drain with a cancelled context delivers nothing", func(t *testing.T) {
		t.Parallel()
		b := bus.NewMemory(nil)
		mustPublish(t, b, msg("q", "a"), msg("q", "b"))
		got := collect(b, "q", nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		n, err := b.Drain(ctx, 0)
		if n != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("Drain = %d, %v; want 0, context.Canceled", n, err)
		}
		if len(*got) != 0 || b.Len("q") != 2 {
			t.Errorf("deliveries %v, Len %d; want none and 2", *got, b.Len("q"))
		}
	})
	t.Run("Drain stops after the delivery during which the context ended", func(t *testing.T) {
		t.Parallel()
		b := bus.NewMemory(nil)
		mustPublish(t, b, msg("q", "a"), msg("q", "b"), msg("q", "c"))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var got []string
		b.Subscribe("q", func(_ context.Context, m bus.Message) error {
			got = append(got, m.ID)
			if m.ID == "b" {
				cancel()
			}
			return nil
		})
		n, err := b.Drain(ctx, 0)
		if n != 2 || !errors.Is(err, context.Canceled) {
			t.Errorf("Drain = %d, %v; want 2, context.Canceled", n, err)
		}
		if !slices.Equal(got, []string{"a", "b"}) || b.Len("q") != 1 {
			t.Errorf("deliveries %v, Len %d; want [a b] and 1", got, b.Len("q"))
		}
		// The rest is delivered by the next Drain.
		if n, err := b.Drain(t.Context(), 0); n != 1 || err != nil {
			t.Errorf("second Drain = %d, %v; want 1, nil", n, err)
		}
	})
	t.Run("Drain passes its context to the handler", func(t *testing.T) {
		t.Parallel()
		type key struct{}
		b := bus.NewMemory(nil)
		mustPublish(t, b, msg("q", "a"))
		var seen any
		b.Subscribe("q", func(ctx context.Context, _ bus.Message) error {
			seen = ctx.Value(key{})
			return nil
		})
		if _, err := b.Drain(context.WithValue(t.Context(), key{}, "v"), 0); err != nil {
			t.Fatal(err)
		}
		if seen != "v" {
			t.Errorf("handler context value = %v, want v", seen)
		}
	})
	t.Run("Publish with a cancelled context is refused", func(t *testing.T) {
		t.Parallel()
		b := bus.NewMemory(nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.Publish(ctx, msg("q", "a")); !errors.Is(err, context.Canceled) {
			t.Fatalf("Publish = %v, want context.Canceled", err)
		}
		if b.Len("q") != 0 {
			t.Errorf("a refused message was queued")
		}
		// Not remembered as published either.
		mustPublish(t, b, msg("q", "a"))
		if b.Len("q") != 1 {
			t.Errorf("retry of a refused publish was dropped as a duplicate")
		}
	})
}

func TestMemoryDeadLetterReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		max        int
		err        func(n int) error
		wantCount  int
		wantReason string
	}{
		{"last error after max deliveries", 3, func(n int) error { return fmt.Errorf("attempt %d failed", n) }, 3, "attempt 3 failed"},
		{"dead-letter on second delivery", 5, func(n int) error {
			if n == 2 {
				return automation.Permanent(errors.New("unknown job"))
			}
			return errors.New("transient")
		}, 2, "unknown job"},
		{"default max is 10", 0, func(int) error { return errors.New("always") }, 10, "always"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: tt.max})
			mustPublish(t, b, msg("q", "m"))
			b.Subscribe("q", func(_ context.Context, m bus.Message) error { return tt.err(m.DeliveryCount) })
			if n, err := b.Drain(t.Context(), 0); n != tt.wantCount || err != nil {
				t.Fatalf("Drain = %d, %v; want %d deliveries", n, err, tt.wantCount)
			}
			dl := b.DeadLetters()
			if len(dl) != 1 || dl[0].Message.DeliveryCount != tt.wantCount || !strings.Contains(dl[0].Reason, tt.wantReason) {
				t.Fatalf("dead letters %+v, want one after %d deliveries with reason %q", dl, tt.wantCount, tt.wantReason)
			}
			// DeadLetters returns a copy of the list.
			dl[0] = bus.DeadLettered{}
			if again := b.DeadLetters(); again[0].Message.ID != "m" {
				t.Errorf("mutating the returned list changed the bus: %+v", again)
			}
		})
	}
}

func TestMemoryRetryDelayAndDeadLetterCallback(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	var dead []bus.DeadLettered
	b := bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: 3, RetryDelay: time.Second, MaxRetryDelay: 3 * time.Second,
		Now: func() time.Time { return now }, OnDeadLetter: func(d bus.DeadLettered) { dead = append(dead, d) }})
	calls := 0
	b.Subscribe("q", func(context.Context, bus.Message) error { calls++; return errors.New("busy") })
	if err := b.Publish(context.Background(), bus.Message{ID: "m", Destination: "q", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	drain := func() { _, _ = b.Drain(context.Background(), 0) }
	drain()
	if calls != 1 || b.Len("q") != 1 {
		t.Fatalf("first delivery: calls %d len %d", calls, b.Len("q"))
	}
	now = now.Add(999 * time.Millisecond)
	drain()
	if calls != 1 {
		t.Fatal("redelivered before RetryDelay")
	}
	now = now.Add(time.Millisecond)
	drain()
	if calls != 2 {
		t.Fatalf("not redelivered after RetryDelay: %d", calls)
	}
	now = now.Add(2 * time.Second) // doubled delay
	drain()
	if calls != 3 || len(dead) != 1 || dead[0].Message.ID != "m" || dead[0].Reason != "busy" || b.Len("q") != 0 {
		t.Fatalf("calls %d dead %+v len %d", calls, dead, b.Len("q"))
	}
}

// TestMemoryOnSettled: a message is settled once its handler completes it or it is
// dead-lettered, never while it waits for a redelivery; a duplicate of a settled message is
// settled as it is dropped (its first copy already left the bus), a duplicate of a message
// still queued is not.
func TestMemoryOnSettled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var settled []string
	b := bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: 2, OnSettled: func(_ context.Context, m bus.Message) { settled = append(settled, m.ID) }})
	fail := true
	b.Subscribe("q", func(_ context.Context, m bus.Message) error {
		switch {
		case m.ID == "poison":
			return errors.New("no")
		case m.ID == "flaky" && fail:
			fail = false
			return errors.New("not yet")
		}
		return nil
	})
	for _, id := range []string{"ok", "flaky", "poison"} {
		if err := b.Publish(ctx, bus.Message{ID: id, Destination: "q", Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Drain(ctx, 2); err != nil { // "ok" completes, "flaky" fails once
		t.Fatal(err)
	}
	if fmt.Sprint(settled) != "[ok]" {
		t.Fatalf("settled %v after the first deliveries, want [ok]", settled)
	}
	// "flaky" is queued again: a duplicate of it is dropped unsettled.
	if err := b.Publish(ctx, bus.Message{ID: "flaky", Destination: "q", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(settled) != "[ok]" {
		t.Fatalf("a duplicate of a queued message was settled: %v", settled)
	}
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(settled); got != "[ok flaky poison]" {
		t.Fatalf("settled %v, want [ok flaky poison] (completed, completed on redelivery, dead-lettered)", got)
	}
	if err := b.Publish(ctx, bus.Message{ID: "ok", Destination: "q", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(settled); got != "[ok flaky poison ok]" || b.Len("q") != 0 {
		t.Fatalf("a duplicate of a settled message: settled %v, len %d", got, b.Len("q"))
	}
}

// Lengths counts per destination what Waiting counts in all: queued messages and failed
// ones waiting for their redelivery; a destination with none is left out.
func TestMemoryLengths(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	b := bus.NewMemory(&bus.MemoryOptions{RetryDelay: time.Minute, Now: func() time.Time { return now }})
	b.Subscribe("a", func(context.Context, bus.Message) error { return errors.New("not yet") })
	for i, d := range []string{"a", "b", "b"} {
		if err := b.Publish(ctx, bus.Message{ID: fmt.Sprint(i), Destination: d}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Drain(ctx, 0); err != nil { // a's message fails: it waits for its redelivery
		t.Fatal(err)
	}
	got := b.Lengths()
	if len(got) != 2 || got["a"] != 1 || got["b"] != 2 || b.Waiting() != 3 {
		t.Fatalf("lengths %v, waiting %d", got, b.Waiting())
	}
	b.Subscribe("b", func(context.Context, bus.Message) error { return nil })
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := b.Lengths(); len(got) != 1 || got["a"] != 1 {
		t.Fatalf("after b drained: %v", got)
	}
}
