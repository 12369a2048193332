package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// ctxBlockingStore's NotificationFinishGroup blocks until its context ends (a store whose
// connection hangs: a SQL Server behind a dropped TCP path answers nothing), or until
// giveUp passes; then it fails without recording.
// With takeFirst it takes the group first (the transaction began, then the statement hangs).
type ctxBlockingStore struct {
	delivery.DispatchStore
	giveUp    time.Duration
	takeFirst bool
}

func (s *ctxBlockingStore) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	if s.takeFirst {
		take()
	}
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-time.After(s.giveUp):
		return nil, nil, errors.New("hung store gave up")
	}
}

// TestGroupCommitHonoursCancellation: a batch whose context ends (the invocation's
// deadline, the host's shutdown) while its group commit hangs in the store answers in about
// the time it had, every outcome in doubt (an error), as with the per-batch group commit
// that took the send's context. The shared recorder's committer runs without one batch's
// cancellation, so the batch is abandoned (its waiting outcomes dropped) and a group's
// transaction is cancelled when any of its batches ends; before that a hung store held the
// batch until the store itself gave up (8 s here; red on 7a42dc9).
func TestGroupCommitHonoursCancellation(t *testing.T) {
	t.Parallel()
	for _, takeFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken=%v", takeFirst), func(t *testing.T) {
			t.Parallel()
			p := &provider{}
			e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
			keys := queueN(t, e, "log", 3)
			e.disp.Store = &ctxBlockingStore{DispatchStore: e.st, giveUp: 8 * time.Second, takeFirst: takeFirst}
			var msgs []bus.Message
			for _, k := range keys {
				msgs = append(msgs, dispatchMsg(k))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			began := time.Now()
			errs := e.disp.HandleBatch(ctx, msgs)
			took := time.Since(began)
			for i, err := range errs {
				if err == nil {
					t.Errorf("message %d: nil error, but its outcome was never recorded", i)
				}
			}
			if took > 3*time.Second {
				t.Fatalf("HandleBatch answered %v after its context ended at 300ms (the group commit ignores cancellation)", took.Round(time.Millisecond))
			}
		})
	}
}

// failingGroupStore fails the first group commit after taking its group (the transaction
// began, then the store failed: a lost connection, a full disk), with every sender of both
// batches waiting in it.
type failingGroupStore struct {
	delivery.DispatchStore
	p     *provider
	sends int
	once  sync.Once
	fail  bool
}

func (s *failingGroupStore) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	first := false
	s.once.Do(func() {
		first = true
		deadline := time.Now().Add(10 * time.Second)
		for s.p.deliveries() < s.sends && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
	})
	if first {
		ps := take()
		return ps, nil, errors.New("disk full")
	}
	return s.DispatchStore.NotificationFinishGroup(ctx, take)
}

// TestStoreFailureInSharedGroup: the one group that holds two batches' outcomes
// fails after taking them. Every message of both batches answers an error (none answers
// done while its outcome is unrecorded), no outcome is reported, every job stays Sending
// (in doubt), and after the restart's sweeps each delivery was made exactly once.
func TestStoreFailureInSharedGroup(t *testing.T) {
	t.Parallel()
	p := &provider{dedupe: true}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p, traits: delivery.Traits{Idempotent: true}}})
	a, b := queueN(t, e, "log", 5), queueN(t, e, "log", 5)
	e.disp.Store = &failingGroupStore{DispatchStore: e.st, p: p, sends: len(a) + len(b)}
	batch := func(keys []string) []bus.Message {
		var msgs []bus.Message
		for _, k := range keys {
			msgs = append(msgs, dispatchMsg(k))
		}
		return msgs
	}
	var wg sync.WaitGroup
	errs := make([][]error, 2)
	for i, keys := range [][]string{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = e.disp.HandleBatch(context.Background(), batch(keys)) }()
	}
	wg.Wait()
	for bi := range errs {
		for i, err := range errs[bi] {
			if err == nil {
				t.Errorf("batch %d message %d: nil, but the group that held its outcome failed", bi, i)
			}
		}
	}
	if len(e.outcomes) != 0 {
		t.Errorf("%d outcomes reported for a failed group", len(e.outcomes))
	}
	for _, k := range append(append([]string{}, a...), b...) {
		if j := e.job(t, k); j.Status != store.NotificationSending {
			t.Errorf("%s is %s after the failed group, want Sending", k, j.Status)
		}
	}
	e.disp.Store = e.st
	for range 3 {
		e.sweep(t, time.Hour)
	}
	for _, k := range append(append([]string{}, a...), b...) {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Errorf("%s is %s after the sweeps, want Sent", k, j.Status)
		}
	}
	if p.deliveries() != len(a)+len(b) {
		t.Fatalf("%d deliveries, want %d", p.deliveries(), len(a)+len(b))
	}
}
