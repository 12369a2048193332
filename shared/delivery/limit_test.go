package delivery_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store/storetest"
)

// gateChannel counts calls in flight and blocks each until released.
type gateChannel struct {
	inFlight, maxInFlight, calls atomic.Int64
	gate                         chan struct{}
	deadline                     chan time.Duration // the time left on each call's context, when it has a deadline
}

func (g *gateChannel) Traits() delivery.Traits          { return delivery.Traits{Idempotent: true} }
func (g *gateChannel) ValidateRecipient(a string) error { return nil }
func (g *gateChannel) Send(ctx context.Context, m delivery.Message) (string, error) {
	g.calls.Add(1)
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for {
		old := g.maxInFlight.Load()
		if n <= old || g.maxInFlight.CompareAndSwap(old, n) {
			break
		}
	}
	if dl, ok := ctx.Deadline(); ok && g.deadline != nil {
		g.deadline <- time.Until(dl)
	}
	if g.gate != nil {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return "", automation.Unknown(ctx.Err())
		}
	}
	return "ref-" + m.DeliveryKey, nil
}

type lookingGate struct{ gateChannel }

func (l *lookingGate) Lookup(ctx context.Context, m delivery.Message) (delivery.LookupStatus, string, error) {
	return delivery.LookupDelivered, "found", nil
}

// TestLimitBoundsConcurrency: 20 sends at once through a channel limited to 3 never have
// more than 3 in flight, and all 20 are sent.
func TestLimitBoundsConcurrency(t *testing.T) {
	t.Parallel()
	g := &gateChannel{gate: make(chan struct{})}
	ch := delivery.Limit(g, delivery.Limits{Concurrency: 3, AdmitWait: time.Minute}, automation.NewManualClock(storetest.T0))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ch.Send(context.Background(), delivery.Message{DeliveryKey: "k"})
			errs <- err
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for g.inFlight.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // room for a fourth to slip in, were the limit broken
	for sent := 0; sent < 20; sent++ {
		g.gate <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := g.maxInFlight.Load(); m != 3 {
		t.Fatalf("at most %d in flight, want 3 (the limit, reached)", m)
	}
	if st := ch.LimitStats(); st.Calls != 20 || st.Refused != 0 || st.InFlight != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLimitRefusesWhenBusyAndNothingIsSent: a full channel refuses after AdmitWait with a
// retryable ErrProviderBusy, and the provider never saw the call.
func TestLimitRefusesWhenBusyAndNothingIsSent(t *testing.T) {
	t.Parallel()
	g := &gateChannel{gate: make(chan struct{})}
	ch := delivery.Limit(g, delivery.Limits{Concurrency: 1, AdmitWait: 20 * time.Millisecond}, automation.NewManualClock(storetest.T0))
	done := make(chan error, 1)
	go func() { _, err := ch.Send(context.Background(), delivery.Message{DeliveryKey: "first"}); done <- err }()
	for g.inFlight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // a broken limit fails, not hangs
	defer cancel()
	_, err := ch.Send(ctx, delivery.Message{DeliveryKey: "second"})
	if !errors.Is(err, delivery.ErrProviderBusy) || automation.IntentOf(err) == automation.IntentPermanent || automation.IntentOf(err) == automation.IntentUnknown {
		t.Fatalf("busy: %v, want a retryable ErrProviderBusy", err)
	}
	if _, ok := automation.RetryAfterOf(err); !ok {
		t.Fatalf("busy: %v carries no retry-after", err)
	}
	g.gate <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if g.calls.Load() != 1 {
		t.Fatalf("the provider saw %d calls, want 1 (the refused one never left)", g.calls.Load())
	}
}

// TestLimitRate: at 2 a second (burst 2) a third call in the same instant waits for a token
// or, past AdmitWait, is refused; after the clock moves on a second, calls pass again.
func TestLimitRate(t *testing.T) {
	t.Parallel()
	g := &gateChannel{}
	clock := automation.NewManualClock(storetest.T0)
	ch := delivery.Limit(g, delivery.Limits{Concurrency: 8, RatePerSecond: 2, AdmitWait: 100 * time.Millisecond}, clock)
	send := func() error { _, err := ch.Send(context.Background(), delivery.Message{DeliveryKey: "k"}); return err }
	for i := 0; i < 2; i++ {
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	err := send()
	if !errors.Is(err, delivery.ErrProviderBusy) {
		t.Fatalf("third call in the same second: %v, want ErrProviderBusy", err)
	}
	if d, _ := automation.RetryAfterOf(err); d < 400*time.Millisecond || d > time.Second {
		t.Fatalf("retry after %v, want about half a second (the next token at 2/s)", d)
	}
	if g.calls.Load() != 2 {
		t.Fatalf("provider calls %d, want 2", g.calls.Load())
	}
	clock.Advance(time.Second)
	if err := send(); err != nil {
		t.Fatalf("a second later: %v", err)
	}
}

// TestLimitTimeoutBoundsEachCallAndKeepsLookup: each call's context ends within Timeout, and
// a channel that looks up stays one (its lookups are limited too).
func TestLimitTimeoutBoundsEachCallAndKeepsLookup(t *testing.T) {
	t.Parallel()
	g := &lookingGate{gateChannel{deadline: make(chan time.Duration, 1)}}
	ch := delivery.Limit(g, delivery.Limits{Timeout: 3 * time.Second}, automation.NewManualClock(storetest.T0))
	if _, err := ch.Send(context.Background(), delivery.Message{DeliveryKey: "k"}); err != nil {
		t.Fatal(err)
	}
	if left := <-g.deadline; left <= 0 || left > 3*time.Second {
		t.Fatalf("the call's deadline is %v away, want at most 3s", left)
	}
	lk, ok := ch.(delivery.Looker)
	if !ok {
		t.Fatal("a limited Looker is no longer a Looker")
	}
	if st, ref, err := lk.Lookup(context.Background(), delivery.Message{DeliveryKey: "k"}); err != nil || st != delivery.LookupDelivered || ref != "found" {
		t.Fatalf("lookup: %v %q %v", st, ref, err)
	}
	if _, ok := delivery.Limit(&gateChannel{}, delivery.Limits{}, automation.NewManualClock(storetest.T0)).(delivery.Looker); ok {
		t.Fatal("a channel that cannot look up became a Looker")
	}
	if c := ch.Unwrap(); c != delivery.Channel(g) || ch.Traits().Idempotent != g.Traits().Idempotent {
		t.Fatal("Unwrap or Traits do not pass through")
	}
	if l := ch.Limits(); l.Concurrency != delivery.DefaultChannelConcurrency {
		t.Fatalf("default concurrency %d", l.Concurrency)
	}
}
