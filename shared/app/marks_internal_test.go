package app

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestSettledMarksGatherDrains: while on, the marks of many drains are one flush within
// settledMarkDelay, not one per drain; stop writes what waits and leaves no timer behind;
// off, every drain flushes at once (the simulator's and Tick's order).
func TestSettledMarksGatherDrains(t *testing.T) {
	t.Parallel()
	var flushes atomic.Int32
	m := &settledMarks{flush: func(context.Context) { flushes.Add(1) }}
	if m.deferFlush() {
		t.Fatal("gathering before start")
	}
	m.start()
	for range 100 {
		if !m.deferFlush() {
			t.Fatal("a drain's mark not gathered while on")
		}
	}
	deadline := time.Now().Add(10 * settledMarkDelay)
	for flushes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(settledMarkDelay / 10)
	}
	if n := flushes.Load(); n != 1 {
		t.Fatalf("100 drains gave %d flushes, want 1", n)
	}
	m.deferFlush()
	m.stop()
	if n := flushes.Load(); n != 2 {
		t.Fatalf("stop: %d flushes in all, want 2 (the pending timer stopped, one flush by stop)", n)
	}
	time.Sleep(2 * settledMarkDelay)
	if n := flushes.Load(); n != 2 {
		t.Fatalf("a timer outlived stop: %d flushes", n)
	}
	if m.deferFlush() {
		t.Fatal("gathering after stop")
	}
}
