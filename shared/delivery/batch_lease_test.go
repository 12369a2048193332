package delivery_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// TestFinishedSendsAreRecordedWhileASlowSendOverrunsTheLease: a batch's finished sends are
// recorded as they finish, not when its slowest send returns. When that send overruns the
// lease and a sweep runs, the sends that finished before it (keys[0], keys[1]) are already
// Sent; before the fix they were still unrecorded Sending claims, the sweep took them over
// in doubt and, on a channel that can neither deduplicate nor look up, put delivered
// messages on the manual UNKNOWN queue.
func TestFinishedSendsAreRecordedWhileASlowSendOverrunsTheLease(t *testing.T) {
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	e.disp.ChannelConcurrency = 1
	keys := queueN(t, e, "log", 3)
	e.disp.Hooks = &delivery.DispatchHooks{AfterSend: func(ctx context.Context, job store.NotificationJob, _ error) error {
		if job.DeliveryKey == keys[2] {
			e.clock.Advance(2 * time.Minute) // the third provider call overran the lease
			e.disp.Hooks = nil
			if _, err := e.disp.Sweep(ctx); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}
		return nil
	}}
	errs := e.disp.HandleBatch(context.Background(), []bus.Message{dispatchMsg(keys[0]), dispatchMsg(keys[1]), dispatchMsg(keys[2])})
	t.Logf("errs %v", errs)
	for _, k := range keys[:2] {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Errorf("job %s sent in %v (provider got %d messages) is %s, want Sent", k, "the batch's first sends", p.deliveries(), j.Status)
		}
	}
}

// TestConcurrentBatchesOnTheSameKeysSendEachOnce: consumers handed overlapping batches
// (with repeats) at once send every delivery exactly once, and a batch over store.MaxBatch
// is refused for every message.
func TestConcurrentBatchesOnTheSameKeysSendEachOnce(t *testing.T) {
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	keys := queueN(t, e, "log", 20)
	var a, b []bus.Message
	for i, k := range keys {
		a = append(a, dispatchMsg(k), dispatchMsg(k))
		b = append(b, dispatchMsg(keys[len(keys)-1-i]))
	}
	var wg sync.WaitGroup
	for _, batch := range [][]bus.Message{a, b, a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); e.disp.HandleBatch(context.Background(), batch) }()
	}
	wg.Wait()
	if p.deliveries() != len(keys) || p.calls != len(keys) {
		t.Fatalf("%d deliveries, %d calls for %d keys", p.deliveries(), p.calls, len(keys))
	}
	for _, k := range keys {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Fatalf("%s: %s", k, j.Status)
		}
	}
	over := make([]bus.Message, store.MaxBatch+1)
	for i := range over {
		over[i] = dispatchMsg(keys[0])
	}
	for i, err := range e.disp.HandleBatch(context.Background(), over) {
		if err == nil {
			t.Fatalf("oversized batch: message %d accepted", i)
		}
	}
}
