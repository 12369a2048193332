package logsink_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/logsink"
)

// Concurrent writers and a concurrent reader (run with -race): every line arrives whole.
func TestBufferIsSafeForConcurrentWritersAndReaders(t *testing.T) {
	t.Parallel()
	var b logsink.Buffer
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				fmt.Fprintf(&b, "writer %d line %d\n", w, i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	lines := b.Lines()
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, l := range lines {
		var w, i int
		if n, err := fmt.Sscanf(l, "writer %d line %d", &w, &i); n != 2 || err != nil {
			t.Fatalf("torn line %q", l)
		}
	}
}
