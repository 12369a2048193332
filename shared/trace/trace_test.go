package trace_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/trace"
)

func TestBlobName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		guid    string
		attempt int
		version int64
		want    string
	}{
		{"3f2a9c1e-0000-4000-8000-000000000001", 1, 1, "scheduler/3f2a9c1e-0000-4000-8000-000000000001/001-v1.json"},
		{"g", 12, 0, "scheduler/g/012-v0.json"},
		{"g", 999, 42, "scheduler/g/999-v42.json"},
		{"g", 1000, 42, "scheduler/g/1000-v42.json"},
		{"g", 3, 9223372036854775807, "scheduler/g/003-v9223372036854775807.json"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if got := trace.BlobName(tt.guid, tt.attempt, tt.version); got != tt.want {
				t.Errorf("BlobName(%q, %d, %d) = %q, want %q", tt.guid, tt.attempt, tt.version, got, tt.want)
			}
		})
	}
}

func TestBlobNameDistinct(t *testing.T) {
	t.Parallel()
	// Every (row, attempt, version) gets its own name; the same triple always the same one.
	seen := map[string][3]any{}
	for _, g := range []string{"a", "b"} {
		for attempt := 1; attempt <= 12; attempt++ {
			for v := int64(0); v <= 12; v++ {
				name := trace.BlobName(g, attempt, v)
				if prev, dup := seen[name]; dup {
					t.Fatalf("BlobName(%s,%d,%d) = %q, same as %v", g, attempt, v, name, prev)
				}
				seen[name] = [3]any{g, attempt, v}
				if again := trace.BlobName(g, attempt, v); again != name {
					t.Fatalf("BlobName not stable: %q then %q", name, again)
				}
			}
		}
	}
}

func TestDeadLetterBlobName(t *testing.T) {
	t.Parallel()
	a := trace.DeadLetterBlobName("DomainEventHandler", "a/b")
	b := trace.DeadLetterBlobName("DomainEventHandler", "a_b")
	if a == b || !strings.HasPrefix(a, "deadletter/DomainEventHandler/a_b-") || !strings.HasSuffix(a, ".json") {
		t.Fatalf("%q %q", a, b)
	}
	if got := trace.DeadLetterBlobName("bus/due-work", ".."); !strings.HasPrefix(got, "deadletter/bus/due-work/unnamed-") {
		t.Fatalf("%q", got)
	}
	if a != trace.DeadLetterBlobName("DomainEventHandler", "a/b") {
		t.Fatal("not stable")
	}
	if len(trace.SafeSegment(strings.Repeat("x", 500))) != 120 {
		t.Fatal("segment not bounded")
	}
}
