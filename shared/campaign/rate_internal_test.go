package campaign

import (
	"context"
	"testing"
	"time"
)

// The provider rate is golang.org/x/time/rate's token bucket read at the injected clock's
// instants: a burst of one second's calls, then one call each 1/rate, and a refused
// admission says how long to wait and takes no token.
func TestProviderRateAdmitsOneSecondsBurstThenPaces(t *testing.T) {
	t.Parallel()
	r := NewProviders(nil)
	r.Add("p", nil, ProviderConfig{RatePerSecond: 2, Concurrency: 8})
	e := r.entries["p"]
	t0 := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for i := range 2 {
		release, _, ok := e.admit(ctx, t0)
		if !ok {
			t.Fatalf("call %d of the burst refused", i+1)
		}
		release()
	}
	_, wait, ok := e.admit(ctx, t0)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("third call at once: ok %v, wait %v; want refused, 500ms", ok, wait)
	}
	// The refusal took no token: after the wait one call goes, the next waits again.
	if _, _, ok := e.admit(ctx, t0.Add(500*time.Millisecond)); !ok {
		t.Fatal("refused after the wait")
	}
	if _, wait, ok := e.admit(ctx, t0.Add(500*time.Millisecond)); ok || wait != 500*time.Millisecond {
		t.Fatalf("second call after the wait: ok %v, wait %v", ok, wait)
	}
	if s := r.Stats()[0]; s.Rejected != 2 {
		t.Fatalf("rejected %d, want 2", s.Rejected)
	}
}
