package delivery_test

import (
	"context"
	"errors"
	"sync"
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

// gatedStore holds the first NotificationFinishGroup back: it closes entered, then waits
// for release (or a second), so a test can finish other sends while a commit runs.
type gatedStore struct {
	delivery.DispatchStore
	once             sync.Once
	entered, release chan struct{}
}

func (g *gatedStore) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	g.once.Do(func() {
		close(g.entered)
		select {
		case <-g.release:
		case <-time.After(time.Second):
		}
	})
	return g.DispatchStore.NotificationFinishGroup(ctx, take)
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

// slowWriterStore makes the first group commit wait, as it would for a busy writer, until
// every send of the batch returned and a while after, before the store takes its items.
type slowWriterStore struct {
	countingStore
	p     *provider
	sends int
	once  sync.Once
}

func (s *slowWriterStore) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	s.once.Do(func() {
		deadline := time.Now().Add(10 * time.Second)
		for s.p.deliveries() < s.sends && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // the other senders hand their outcomes over
	})
	return s.countingStore.NotificationFinishGroup(ctx, take)
}

// TestGroupCommitTakesWhatArrivedWhileItWaited: a group commit takes its outcomes when the
// store's transaction begins, so the outcomes handed over while the first one waited for
// the writer are recorded with it: one group for the batch, not the first outcome alone
// and the rest after it.
func TestGroupCommitTakesWhatArrivedWhileItWaited(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	keys := queueN(t, e, "log", 5)
	st := &slowWriterStore{countingStore: countingStore{DispatchStore: e.st}, p: p, sends: len(keys)}
	e.disp.Store = st
	var msgs []bus.Message
	for _, k := range keys {
		msgs = append(msgs, dispatchMsg(k))
	}
	for i, err := range e.disp.HandleBatch(context.Background(), msgs) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if st.finishMany != 1 || st.finished != 5 {
		t.Fatalf("%d group commits of %d outcomes in all, want one of 5", st.finishMany, st.finished)
	}
	for _, k := range keys {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Errorf("%s is %s, want Sent", k, j.Status)
		}
	}
}

// TestConcurrentBatchesShareGroupCommits: the outcomes of batches that run at once (four
// HandleBatch calls of 25, as a consumer hands them over) are recorded in the dispatcher's
// group commits, not each batch's own: with the first commit held back, as by a busy
// writer, until every send returned, the 100 outcomes go in one group. A group commit per
// batch made at least one group per batch (4 here); in the 09:00 herd that was about four
// outcomes a group (docs/performance.md, "The 09:00 herd behind serve").
func TestConcurrentBatchesShareGroupCommits(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	const batches, each = 4, 25
	keys := queueN(t, e, "log", batches*each)
	st := &slowWriterStore{countingStore: countingStore{DispatchStore: e.st}, p: p, sends: len(keys)}
	e.disp.Store = st
	var wg sync.WaitGroup
	errs := make([][]error, batches)
	for b := range batches {
		var msgs []bus.Message
		for _, k := range keys[b*each : (b+1)*each] {
			msgs = append(msgs, dispatchMsg(k))
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[b] = e.disp.HandleBatch(context.Background(), msgs) }()
	}
	wg.Wait()
	for b := range errs {
		for i, err := range errs[b] {
			if err != nil {
				t.Fatalf("batch %d, message %d: %v", b, i, err)
			}
		}
	}
	if st.finishMany != 1 || st.finished != len(keys) {
		t.Fatalf("%d group commits of %d outcomes in all, want one of %d", st.finishMany, st.finished, len(keys))
	}
	if p.calls != len(keys) || len(e.outcomes) != len(keys) {
		t.Fatalf("%d sends, %d outcomes reported; want %d each", p.calls, len(e.outcomes), len(keys))
	}
	for _, k := range keys {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Errorf("%s is %s, want Sent", k, j.Status)
		}
	}
}

// heldStore holds every NotificationFinishGroup back, before its transaction begins (so
// before it takes its group), until release is closed (or 10 s pass).
type heldStore struct {
	delivery.DispatchStore
	release chan struct{}
}

func (h *heldStore) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	select {
	case <-h.release:
	case <-time.After(10 * time.Second):
	}
	return h.DispatchStore.NotificationFinishGroup(ctx, take)
}

// TestCrashOfOneBatchInASharedGroup: two batches run at once and their outcomes wait for
// the same group commit (held back, as by a busy writer); batch A crashes between a send
// and its record (the AfterSend fault point) while its other outcomes wait. Nothing of A
// is recorded after its crash (its waiting outcomes are dropped, as a killed process loses
// them, and A answers with the crash at once), B's outcomes are recorded by the shared
// group, and after the restart's sweeps every delivery is sent exactly once: a channel that
// cannot deduplicate is never called again (UNKNOWN), an idempotent one is called again
// with the same delivery key and the provider keeps one delivery each.
func TestCrashOfOneBatchInASharedGroup(t *testing.T) {
	t.Parallel()
	for _, idempotent := range []bool{false, true} {
		p := &provider{dedupe: idempotent}
		e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p, traits: delivery.Traits{Idempotent: idempotent}}})
		a, b := queueN(t, e, "log", 4), queueN(t, e, "log", 4)
		hs := &heldStore{DispatchStore: e.st, release: make(chan struct{})}
		e.disp.Store = hs
		errCrash := errors.New("crash")
		e.disp.Hooks = &delivery.DispatchHooks{AfterSend: func(_ context.Context, j store.NotificationJob, _ error) error {
			if j.DeliveryKey != a[3] {
				return nil
			}
			// Every other send returned and handed its outcome over before A crashes.
			deadline := time.Now().Add(10 * time.Second)
			for p.deliveries() < len(a)+len(b) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			return errCrash
		}}
		batch := func(keys []string) []bus.Message {
			var msgs []bus.Message
			for _, k := range keys {
				msgs = append(msgs, dispatchMsg(k))
			}
			return msgs
		}
		doneB := make(chan []error, 1)
		go func() { doneB <- e.disp.HandleBatch(context.Background(), batch(b)) }()
		for i, err := range e.disp.HandleBatch(context.Background(), batch(a)) {
			if !errors.Is(err, errCrash) {
				t.Fatalf("batch A, message %d: %v, want the crash", i, err)
			}
		}
		close(hs.release)
		for i, err := range <-doneB {
			if err != nil {
				t.Fatalf("batch B, message %d: %v", i, err)
			}
		}
		for _, k := range a {
			if j := e.job(t, k); j.Status != store.NotificationSending {
				t.Fatalf("A's job %s after the crash: %s, want Sending (nothing recorded after the crash)", k, j.Status)
			}
		}
		for _, k := range b {
			if j := e.job(t, k); j.Status != store.NotificationSent {
				t.Fatalf("B's job %s: %s, want Sent", k, j.Status)
			}
		}
		// The restarted process: the hook no longer crashes; sweeps take A's expired claims over.
		e.disp.Hooks, e.disp.Store = nil, e.st
		for range 3 {
			e.sweep(t, time.Hour)
		}
		want := store.NotificationUnknown
		if idempotent {
			want = store.NotificationSent
		}
		for _, k := range a {
			if j := e.job(t, k); j.Status != want {
				t.Fatalf("idempotent %v: A's job %s is %s, want %s", idempotent, k, j.Status, want)
			}
		}
		if p.deliveries() != len(a)+len(b) {
			t.Fatalf("idempotent %v: %d deliveries, want %d (each key once)", idempotent, p.deliveries(), len(a)+len(b))
		}
		if !idempotent && p.calls != len(a)+len(b) {
			t.Fatalf("a channel without deduplication was called again: %d calls", p.calls)
		}
	}
}
