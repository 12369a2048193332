package events_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/events"
)

// Identity separates sources, cannot be fooled by a separator in source or id, is stable
// and fits a Service Bus MessageId with its route.
func TestIdentityIsPerSourceWithoutSeparatorAmbiguity(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{{"/a", "1"}, {"/b", "1"}, {"/a:1", ""}, {"/a", ":1"}, {"/a\x00", "1"}, {"/a", "\x001"}, {"", "/a1"}, {"/a1", ""}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := events.Identity(p[0], p[1])
		if prev, dup := seen[k]; dup {
			t.Errorf("Identity(%q, %q) = Identity(%q, %q) = %s", p[0], p[1], prev[0], prev[1], k)
		}
		seen[k] = p
		if len(k) != 43 || k[:3] != "ev-" {
			t.Errorf("Identity(%q, %q) = %q, want ev- + 40 hex digits", p[0], p[1], k)
		}
		if k != events.Identity(p[0], p[1]) {
			t.Errorf("Identity(%q, %q) is not stable", p[0], p[1])
		}
	}
	// Pinned: a stored key must never change across releases.
	if got := events.Identity("/mobile-app", "login-1"); got != "ev-aed0bc7d09c02dccad66b520b916567974d273a1" {
		t.Fatalf("Identity changed: %s", got)
	}
}
