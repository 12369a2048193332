package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// blockingChannel blocks the send of one delivery key until release is closed; every other
// send is instant.
type blockingChannel struct {
	testChannel
	slow    string
	started chan struct{}
	release chan struct{}
}

func (c *blockingChannel) Send(ctx context.Context, m delivery.Message) (string, error) {
	if m.DeliveryKey == c.slow {
		close(c.started)
		<-c.release
	}
	return c.testChannel.Send(ctx, m)
}

// TestFinishedSendsAreRecordedWhileAnotherSendRuns: with sends overlapping (4 slots), a send
// that does not return does not hold back the record of the batch's sends that finished:
// they are Sent while it still runs (a group commit that waited for the whole batch would
// leave them Sending, and a crash then would leave them in doubt).
func TestFinishedSendsAreRecordedWhileAnotherSendRuns(t *testing.T) {
	t.Parallel()
	p := &provider{}
	ch := &blockingChannel{testChannel: testChannel{p: p}, started: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, map[string]delivery.Channel{"log": ch})
	keys := queueN(t, e, "log", 6)
	ch.slow = keys[0]
	var msgs []bus.Message
	for _, k := range keys {
		msgs = append(msgs, dispatchMsg(k))
	}
	done := make(chan []error, 1)
	go func() { done <- e.disp.HandleBatch(context.Background(), msgs) }()
	<-ch.started
	deadline := time.Now().Add(10 * time.Second)
	for _, k := range keys[1:] {
		for e.job(t, k).Status != store.NotificationSent {
			if time.Now().After(deadline) {
				close(ch.release)
				t.Fatalf("job %s not recorded while the slow send runs (status %s)", k, e.job(t, k).Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if j := e.job(t, keys[0]); j.Status != store.NotificationSending {
		t.Errorf("the slow job is %s before its send returned, want Sending", j.Status)
	}
	close(ch.release)
	for i, err := range <-done {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if j := e.job(t, keys[0]); j.Status != store.NotificationSent {
		t.Errorf("the slow job is %s after its send returned, want Sent", j.Status)
	}
}
