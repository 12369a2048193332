package automation_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
)

func TestSupportRetryKey(t *testing.T) {
	t.Parallel()
	orig := "reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:PoliceVetting:3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b:expiresOn:2026-10-31:7"
	k := automation.SupportRetryKey(orig, 5)
	if k != orig+":support-retry:v5" {
		t.Fatalf("key = %q", k)
	}
	if v, ok := automation.SupportRetryVersion(k); !ok || v != 5 {
		t.Fatalf("version = %d %v", v, ok)
	}
	if !automation.IsSupportRetryOf(k, orig) || automation.IsSupportRetryOf(k, orig+"x") || automation.IsSupportRetryOf(orig, orig) {
		t.Fatal("IsSupportRetryOf must match exactly its original")
	}
	if automation.SupportRetryKey(orig, 6) == k {
		t.Fatal("another version must give another key")
	}
	// A retry of a retry is a retry of the retry row and of the first original.
	kk := automation.SupportRetryKey(k, 7)
	if !automation.IsSupportRetryOf(kk, k) || !automation.IsSupportRetryOf(kk, orig) || automation.IsSupportRetryOf(kk, orig+"x") {
		t.Fatalf("retry of retry %q", kk)
	}
	for _, bad := range []string{orig, orig + ":support-retry:v", orig + ":support-retry:vx1", orig + ":support-retry:v99999999999999999999"} {
		if _, ok := automation.SupportRetryVersion(bad); ok {
			t.Errorf("%q is not a support-retry key", bad)
		}
	}
}

func TestSupportRetryKeyOfALongKeyKeepsItsSuffix(t *testing.T) {
	t.Parallel()
	long := "reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:T:" + strings.Repeat("s", 330) + ":expiresOn:2026-10-31:7"
	long = automation.ShortenKey(long) // as stored: exactly the column width
	if len(long) != automation.MaxSchedulerKeyLength {
		t.Fatalf("setup: %d", len(long))
	}
	k := automation.SupportRetryKey(long, 12)
	if len(k) != automation.MaxSchedulerKeyLength || !strings.HasSuffix(k, ":support-retry:v12") || !strings.Contains(k, "#sha256=") {
		t.Fatalf("key %q (%d)", k, len(k))
	}
	if !automation.IsSupportRetryOf(k, long) || automation.IsSupportRetryOf(k, long[:len(long)-1]+"x") {
		t.Fatal("a shortened retry key must still name its original, and only it")
	}
}
