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

// TestSettle is the table of how a handler's intent settles a message (the one place).
func TestSettle(t *testing.T) {
	t.Parallel()
	cause := errors.New("boom")
	cases := []struct {
		name   string
		err    error
		count  int
		action bus.SettleAction
		delay  time.Duration
	}{
		{"nil completes", nil, 1, bus.ActionComplete, 0},
		{"nil completes even at max", nil, 10, bus.ActionComplete, 0},
		{"transient redelivers", cause, 1, bus.ActionRedeliver, 0},
		{"transient at max dead-letters", cause, 10, bus.ActionDeadLetter, 0},
		{"permanent dead-letters at once", automation.Permanent(cause), 1, bus.ActionDeadLetter, 0},
		{"wrapped permanent dead-letters at once", fmt.Errorf("dispatch: %w", automation.Permanent(cause)), 1, bus.ActionDeadLetter, 0},
		{"joined permanent dead-letters at once", errors.Join(cause, automation.PermanentReason("R", cause)), 1, bus.ActionDeadLetter, 0},
		{"retry after redelivers after d", automation.RetryAfter(30*time.Second, cause), 1, bus.ActionRedeliver, 30 * time.Second},
		{"retry after at max dead-letters", automation.RetryAfter(30*time.Second, cause), 10, bus.ActionDeadLetter, 0},
		{"unknown redelivers", automation.Unknown(cause), 1, bus.ActionRedeliver, 0},
		{"unknown at max dead-letters", automation.Unknown(cause), 10, bus.ActionDeadLetter, 0},
	}
	for _, c := range cases {
		if got := bus.Settle(c.err, c.count, 10); got.Action != c.action || got.Delay != c.delay {
			t.Errorf("%s: Settle = %v %v, want %v %v", c.name, got.Action, got.Delay, c.action, c.delay)
		}
	}
}

// A RetryAfter from the handler holds the message back for that long in Memory, even when
// the bus has no backoff of its own; the message is then delivered again.
func TestMemoryHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := bus.NewMemory(&bus.MemoryOptions{Now: func() time.Time { return now }})
	mustPublish(t, b, msg("q", "m"))
	calls := 0
	b.Subscribe("q", func(context.Context, bus.Message) error {
		calls++
		if calls == 1 {
			return automation.RetryAfter(time.Minute, errors.New("rate limited"))
		}
		return nil
	})
	if n, err := b.Drain(t.Context(), 0); n != 1 || err != nil || b.Len("q") != 1 {
		t.Fatalf("first drain: %d %v, %d waiting", n, err, b.Len("q"))
	}
	now = now.Add(59 * time.Second)
	if n, _ := b.Drain(t.Context(), 0); n != 0 {
		t.Fatalf("redelivered %d before the minute", n)
	}
	now = now.Add(time.Second)
	if n, _ := b.Drain(t.Context(), 0); n != 1 || calls != 2 || b.Len("q") != 0 || len(b.DeadLetters()) != 0 {
		t.Fatalf("after the minute: %d deliveries, %d calls, %d left", n, calls, b.Len("q"))
	}
}
