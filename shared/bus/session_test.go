package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
)

// TestDrainDestinationKeepsSessionOrder: several goroutines drain one destination at once
// (the embedded runtime's per-destination concurrency); each session's messages are
// handled one at a time and in publish order, while different sessions run concurrently.
func TestDrainDestinationKeepsSessionOrder(t *testing.T) {
	t.Parallel()
	b := bus.NewMemory(nil)
	const sessions, per, workers = 20, 50, 4
	var mu sync.Mutex
	got := map[string][]int{}
	running := map[string]bool{}
	overlap, concurrent, most := false, 0, 0
	b.Subscribe("q", func(_ context.Context, m bus.Message) error {
		mu.Lock()
		if running[m.SessionID] {
			overlap = true
		}
		running[m.SessionID] = true
		concurrent++
		most = max(most, concurrent)
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		var s string
		var i int
		fmt.Sscanf(m.ID, "%s %d", &s, &i)
		mu.Lock()
		got[m.SessionID] = append(got[m.SessionID], i)
		running[m.SessionID] = false
		concurrent--
		mu.Unlock()
		return nil
	})
	ctx := context.Background()
	for i := 0; i < per; i++ {
		for s := 0; s < sessions; s++ {
			sid := fmt.Sprintf("s%02d", s)
			if err := b.Publish(ctx, bus.Message{ID: fmt.Sprintf("%s %d", sid, i), Destination: "q", SessionID: sid, Body: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			if _, err := b.DrainDestination(ctx, "q", 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if overlap {
		t.Fatal("two messages of one session were handled at once")
	}
	for s, seq := range got {
		if len(seq) != per {
			t.Fatalf("session %s: %d messages, want %d", s, len(seq), per)
		}
		for i, v := range seq {
			if v != i {
				t.Fatalf("session %s out of order: %v", s, seq)
			}
		}
	}
	if most < 2 {
		t.Logf("at most %d handler ran at once (the scheduler did not overlap them this time)", most)
	}
	if b.Len("q") != 0 {
		t.Fatalf("%d messages left", b.Len("q"))
	}
}
