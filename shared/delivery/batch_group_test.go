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

// TestSendsFinishingTogetherAreOneGroupCommit: the committer of a batch waits for the
// batch's other outcomes (GroupLinger, here long enough that the wait never runs out), so
// 12 instant sends on 4 slots are recorded in one NotificationFinishMany. Without the wait
// the first finished send commits alone and the rest follow in further groups.
func TestSendsFinishingTogetherAreOneGroupCommit(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	cs := &countingStore{DispatchStore: e.st}
	e.disp.Store, e.disp.GroupLinger = cs, time.Minute
	keys := queueN(t, e, "log", 12)
	var msgs []bus.Message
	for _, k := range keys {
		msgs = append(msgs, dispatchMsg(k))
	}
	for i, err := range e.disp.HandleBatch(context.Background(), msgs) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if cs.finishMany != 1 || cs.finished != 12 {
		t.Fatalf("%d record groups of %d outcomes in all, want 1 of 12", cs.finishMany, cs.finished)
	}
	for _, k := range keys {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Fatalf("job %s is %s, want Sent", k, j.Status)
		}
	}
}

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

// TestGroupLingerIsBounded: a send that does not return does not hold back the record of
// the batch's sends that finished: after GroupLinger they are Sent while it still runs.
func TestGroupLingerIsBounded(t *testing.T) {
	t.Parallel()
	p := &provider{}
	ch := &blockingChannel{testChannel: testChannel{p: p}, started: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, map[string]delivery.Channel{"log": ch})
	e.disp.GroupLinger = 20 * time.Millisecond
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

// startsChannel is blockingChannel that also notes when each delivery key's send starts.
type startsChannel struct {
	blockingChannel
	mu     sync.Mutex
	starts map[string]time.Time
}

func (c *startsChannel) Send(ctx context.Context, m delivery.Message) (string, error) {
	c.mu.Lock()
	c.starts[m.DeliveryKey] = time.Now()
	c.mu.Unlock()
	return c.blockingChannel.Send(ctx, m)
}

// TestGroupLingerOnlyWithOutcomesWaiting: the committer lingers only while it has outcomes
// to record. With two slots, a slow send in one and three instant ones queued for the
// other, the first instant send's committer lingers once (GroupLinger), records it and lets
// its slot go: the next send starts one GroupLinger after the first, not two (a second
// linger with nothing to record would hold the slot for nothing).
func TestGroupLingerOnlyWithOutcomesWaiting(t *testing.T) {
	t.Parallel()
	const linger = 400 * time.Millisecond
	p := &provider{}
	ch := &startsChannel{blockingChannel: blockingChannel{testChannel: testChannel{p: p}, started: make(chan struct{}), release: make(chan struct{})},
		starts: map[string]time.Time{}}
	e := newEnv(t, map[string]delivery.Channel{"log": ch})
	e.disp.ChannelConcurrency, e.disp.GroupLinger = 2, linger
	keys := queueN(t, e, "log", 3)
	ch.slow = keys[0]
	var msgs []bus.Message
	for _, k := range keys {
		msgs = append(msgs, dispatchMsg(k))
	}
	done := make(chan []error, 1)
	go func() { done <- e.disp.HandleBatch(context.Background(), msgs) }()
	<-ch.started
	deadline := time.Now().Add(10 * time.Second)
	for e.job(t, keys[2]).Status != store.NotificationSent && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(ch.release)
	for i, err := range <-done {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	ch.mu.Lock()
	gap := ch.starts[keys[2]].Sub(ch.starts[keys[1]])
	ch.mu.Unlock()
	if gap > linger*3/2 {
		t.Errorf("the third send started %v after the second, want about one GroupLinger (%v)", gap, linger)
	}
}

// gatedStore holds the first NotificationFinishMany back: it closes entered, then waits
// for release (or a second), so a test can finish other sends while a commit runs.
type gatedStore struct {
	delivery.DispatchStore
	once             sync.Once
	entered, release chan struct{}
}

func (g *gatedStore) NotificationFinishMany(ctx context.Context, ps []store.NotificationFinishParams) ([]error, error) {
	g.once.Do(func() {
		close(g.entered)
		select {
		case <-g.release:
		case <-time.After(time.Second):
		}
	})
	return g.DispatchStore.NotificationFinishMany(ctx, ps)
}

// orderChannel is channel b of TestOneSendAtATimeAcrossChannels: the send of first waits
// until a commit of the batch runs; every later send notes the status first had when it
// started.
type orderChannel struct {
	testChannel
	e           *env
	t           *testing.T
	first       string
	commitRuns  chan struct{}
	mu          sync.Mutex
	firstStatus []store.NotificationStatus
}

func (c *orderChannel) Send(ctx context.Context, m delivery.Message) (string, error) {
	if m.DeliveryKey == c.first {
		<-c.commitRuns
	} else {
		st := c.e.job(c.t, c.first).Status
		c.mu.Lock()
		c.firstStatus = append(c.firstStatus, st)
		c.mu.Unlock()
	}
	return c.testChannel.Send(ctx, m)
}

// TestOneSendAtATimeAcrossChannels: with one send at a time per channel
// (ChannelConcurrency 1), a finished send is recorded before its channel's next send
// starts, also when another channel's send is committing at the moment it finishes. Here
// channel a's send commits (held back by the store) when channel b's first send finishes:
// before the fix b's first outcome was left to a's committer and b's slot let go at once,
// so b's second send started while b's first was still an unrecorded Sending claim.
func TestOneSendAtATimeAcrossChannels(t *testing.T) {
	t.Parallel()
	p := &provider{}
	b := &orderChannel{testChannel: testChannel{p: p}, commitRuns: make(chan struct{})}
	e := newEnv(t, map[string]delivery.Channel{"a": &testChannel{p: p}, "b": b})
	gs := &gatedStore{DispatchStore: e.st, entered: b.commitRuns, release: make(chan struct{})}
	e.disp.Store, e.disp.ChannelConcurrency = gs, 1
	b.e, b.t = e, t
	ka := queueN(t, e, "a", 1)
	kb := queueN(t, e, "b", 2)
	b.first = kb[0]
	msgs := []bus.Message{dispatchMsg(ka[0]), dispatchMsg(kb[0]), dispatchMsg(kb[1])}
	for i, err := range e.disp.HandleBatch(context.Background(), msgs) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if len(b.firstStatus) != 1 || b.firstStatus[0] != store.NotificationSent {
		t.Errorf("channel b's first delivery was %v when its next send started, want Sent", b.firstStatus)
	}
	for _, k := range append(ka, kb...) {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Errorf("job %s is %s, want Sent", k, j.Status)
		}
	}
}
