package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite"
)

func openStore(t channeltest.TB) store.Store {
	t.Helper()
	dir, err := os.MkdirTemp("", "inbox-test-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "inbox.db"), nil)
	if err != nil {
		t.Fatalf("sqlite: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// provider is the channel's database as the conformance suite sees it: the real SQLite
// store, recording every insert it gets (repeats included). Recipient "refused" is refused
// as the store refuses a delivery key of another recipient (store.ErrConflict); recipient
// "slow" is committed, and the answer is then withheld until the caller gives up (a commit
// whose answer is lost).
type provider struct {
	store.InboxStore
	mu  sync.Mutex
	got []channeltest.Received
}

func (p *provider) InboxInsert(ctx context.Context, in store.InboxInsertParams) (store.InboxInsertResult, error) {
	p.mu.Lock()
	p.got = append(p.got, channeltest.Received{DeliveryKey: in.DeliveryKey, IdempotencyKey: in.DeliveryKey, Subject: in.Subject, Text: in.Text})
	p.mu.Unlock()
	switch in.RecipientID {
	case "refused":
		return store.InboxInsertResult{}, fmt.Errorf("test provider: %w", store.ErrConflict)
	case "slow":
		if _, err := p.InboxStore.InboxInsert(context.WithoutCancel(ctx), in); err != nil {
			return store.InboxInsertResult{}, err
		}
		<-ctx.Done()
		return store.InboxInsertResult{}, ctx.Err()
	}
	return p.InboxStore.InboxInsert(ctx, in)
}

type harness struct {
	channeltest.Fixed
	p *provider
}

func newHarness(t channeltest.TB) channeltest.Harness {
	p := &provider{InboxStore: openStore(t)}
	return &harness{p: p, Fixed: channeltest.Fixed{Ch: &inbox.Channel{Store: p, Broker: inbox.NewBroker(4, 4), Timeout: 300 * time.Millisecond},
		Caps:  channeltest.Capabilities{IdempotencyKey: "InboxMessage.DeliveryKey (a UNIQUE column: a repeat stores nothing)"},
		Addrs: channeltest.Recipients{Accept: "user-3b2d6f0e", Refuse: "refused", ApplyWithoutAnswer: "slow", Invalid: "two words"}}}
}

func (h *harness) Received() []channeltest.Received {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	return append([]channeltest.Received(nil), h.p.got...)
}

func TestInboxConformance(t *testing.T) {
	t.Parallel()
	channeltest.Run(t, newHarness)
}

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

func message(key, recipient string) delivery.Message {
	payload := `{"staffName":"Amelia"}`
	return delivery.Message{DeliveryKey: key, SchedulerKey: "reminder:x:" + key, BusinessUnitID: "bu-1", Channel: inbox.ChannelName,
		Recipient: recipient, Template: "tpl", PayloadJSON: payload, Payload: json.RawMessage(payload),
		Content: &delivery.Content{Subject: "Hello " + key, Text: "Text " + key, HTML: "<p>" + key + "</p>"}, SentOn: t0}
}

// TestDuplicateDeliveryStoresOneMessage: the same delivery sent twice (a resend after an
// UNKNOWN outcome), also concurrently, stores one message; the provider reference is the same.
func TestDuplicateDeliveryStoresOneMessage(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ch := &inbox.Channel{Store: st}
	var wg sync.WaitGroup
	refs := make([]string, 8)
	errs := make([]error, 8)
	for i := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refs[i], errs[i] = ch.Send(context.Background(), message("dlv_dup", "user-1"))
		}()
	}
	wg.Wait()
	for i := range refs {
		if errs[i] != nil || refs[i] != refs[0] {
			t.Fatalf("send %d: %q, %v (first %q)", i, refs[i], errs[i], refs[0])
		}
	}
	ms, err := st.InboxList(context.Background(), store.InboxListParams{BusinessUnitID: "bu-1", RecipientID: "user-1", Limit: 10})
	if err != nil || len(ms) != 1 {
		t.Fatalf("stored %d messages (%v), want 1", len(ms), err)
	}
	if ms[0].Subject != "Hello dlv_dup" || ms[0].PayloadJSON != `{"staffName":"Amelia"}` || !ms[0].CreatedOn.Equal(t0) {
		t.Fatalf("stored %+v", ms[0])
	}
	// The timeout case of the suite, checked further: the answer lost, the row is there once,
	// and the resend (what the dispatcher does for an idempotent channel) adds nothing.
	p := &provider{InboxStore: st}
	slow := &inbox.Channel{Store: p, Timeout: 100 * time.Millisecond}
	m := message("dlv_lost", "slow")
	if _, err := slow.Send(context.Background(), m); automation.IntentOf(err) != automation.IntentUnknown {
		t.Fatalf("lost answer: %v (%s), want Unknown", err, automation.IntentOf(err))
	}
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatalf("resend: %v", err)
	}
	if ms, _ := st.InboxList(context.Background(), store.InboxListParams{BusinessUnitID: "bu-1", RecipientID: "slow", Limit: 10}); len(ms) != 1 {
		t.Fatalf("after a lost answer and a resend the recipient holds %d messages, want 1", len(ms))
	}
	// The real store's refusal: a delivery key of another recipient is permanent.
	other := message("dlv_dup", "user-2")
	if _, err := ch.Send(context.Background(), other); automation.IntentOf(err) != automation.IntentPermanent || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a key of another recipient: %v (%s), want permanent ErrConflict", err, automation.IntentOf(err))
	}
}

// TestSlowSubscriberIsDroppedWithoutBlockingSends: a subscriber that never reads is dropped
// when its queue is full; every send returns at once meanwhile, and other subscribers get
// every message.
func TestSlowSubscriberIsDroppedWithoutBlockingSends(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	b := inbox.NewBroker(10, 2)
	slow, err := b.Subscribe("bu-1", "user-1")
	if err != nil {
		t.Fatal(err)
	}
	fast, _ := b.Subscribe("bu-1", "user-1")
	ch := &inbox.Channel{Store: st, Broker: b}
	// The reading subscriber takes each message before the next is sent, so only the
	// stalled one can fill its queue (of 2) and be dropped, however loaded the machine is.
	var got []int64
	for i := range 10 {
		if _, err := ch.Send(context.Background(), message(fmt.Sprintf("dlv_%d", i), "user-1")); err != nil {
			t.Fatal(err)
		}
		select {
		case m, ok := <-fast.C():
			if !ok {
				t.Fatalf("the reading subscriber was dropped after %v", got)
			}
			got = append(got, m.Seq)
		case <-time.After(10 * time.Second):
			t.Fatalf("send %d did not reach the reading subscriber; got %v", i+1, got)
		}
	}
	select {
	case <-slow.Dropped():
	default:
		t.Fatal("the stalled subscriber was not dropped")
	}
	if fmt.Sprint(got) != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("the reading subscriber got %v", got)
	}
	if n := b.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers left, want 1 (the dropped one removed)", n)
	}
}

func TestBrokerCap(t *testing.T) {
	t.Parallel()
	b := inbox.NewBroker(2, 1)
	s1, _ := b.Subscribe("bu-1", "a")
	if _, err := b.Subscribe("bu-1", "b"); err != nil {
		t.Fatal(err)
	}
	_, err := b.Subscribe("bu-1", "c")
	if !errors.Is(err, inbox.ErrTooManyStreams) || automation.IntentOf(err) != automation.IntentRetryAfter {
		t.Fatalf("third subscriber: %v, want ErrTooManyStreams as retry-after", err)
	}
	s1.Close()
	s1.Close()
	if _, err := b.Subscribe("bu-1", "c"); err != nil {
		t.Fatalf("after a close: %v", err)
	}
}

// collector gathers a stream's events.
type collector struct {
	mu     sync.Mutex
	seqs   []int64
	beats  int
	signal chan struct{}
}

func newCollector() *collector { return &collector{signal: make(chan struct{}, 100)} }

func (c *collector) emit(e inbox.Event) error {
	c.mu.Lock()
	if e.Message != nil {
		c.seqs = append(c.seqs, e.Message.Seq)
	} else {
		c.beats++
	}
	c.mu.Unlock()
	c.signal <- struct{}{}
	return nil
}

func (c *collector) waitFor(t *testing.T, n int) []int64 {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		c.mu.Lock()
		got := append([]int64(nil), c.seqs...)
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-c.signal:
		case <-deadline:
			t.Fatalf("stream emitted %v, want %d messages", got, n)
		}
	}
}

// TestStreamReplaysThenFollows: a stream resumed after Seq 2 replays 3 and 4 from SQL, then
// gets messages sent later live, each once; a message stored without the broker (another
// instance) arrives through the heartbeat's SQL read.
func TestStreamReplaysThenFollows(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	b := inbox.NewBroker(10, 16)
	ch := &inbox.Channel{Store: st, Broker: b}
	for i := 1; i <= 4; i++ {
		if _, err := ch.Send(context.Background(), message(fmt.Sprintf("dlv_%d", i), "user-1")); err != nil {
			t.Fatal(err)
		}
	}
	svc := &inbox.Service{Store: st, Broker: b, Clock: automation.NewManualClock(t0)}
	s, err := svc.OpenStream("bu-1", "user-1", inbox.StreamOptions{Heartbeat: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := newCollector()
	ended := make(chan error, 1)
	go func() { ended <- s.Run(ctx, 2, c.emit) }()
	c.waitFor(t, 2)
	for i := 5; i <= 6; i++ {
		if _, err := ch.Send(context.Background(), message(fmt.Sprintf("dlv_%d", i), "user-1")); err != nil {
			t.Fatal(err)
		}
	}
	// A resend of dlv_5 republishes Seq 5: not emitted twice.
	if _, err := ch.Send(context.Background(), message("dlv_5", "user-1")); err != nil {
		t.Fatal(err)
	}
	// Another instance's send: stored, never published here.
	other := &inbox.Channel{Store: st}
	if _, err := other.Send(context.Background(), message("dlv_7", "user-1")); err != nil {
		t.Fatal(err)
	}
	got := c.waitFor(t, 5)
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-ended; err != nil {
		t.Fatalf("Run: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if fmt.Sprint(c.seqs) != "[3 4 5 6 7]" {
		t.Fatalf("stream emitted %v (first wait %v), want [3 4 5 6 7]", c.seqs, got)
	}
	if c.beats == 0 {
		t.Fatal("no heartbeat")
	}
	if b.Subscribers() != 0 {
		t.Fatalf("%d subscribers after the stream ended", b.Subscribers())
	}
}

// TestStreamEndsWhenDropped: a stream whose emit stalls (a client that stops reading) is
// dropped by the broker while sends go on; Run then returns ErrDropped.
func TestStreamEndsWhenDropped(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	b := inbox.NewBroker(10, 1)
	ch := &inbox.Channel{Store: st, Broker: b}
	svc := &inbox.Service{Store: st, Broker: b, Clock: automation.NewManualClock(t0)}
	s, err := svc.OpenStream("bu-1", "user-1", inbox.StreamOptions{Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	first := make(chan struct{}, 1)
	ended := make(chan error, 1)
	go func() {
		ended <- s.Run(context.Background(), 0, func(inbox.Event) error {
			select {
			case first <- struct{}{}:
			default:
			}
			<-release
			return nil
		})
	}()
	for i := range 5 {
		if _, err := ch.Send(context.Background(), message(fmt.Sprintf("dlv_%d", i), "user-1")); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-first // the stream is stuck in its first emit
		}
	}
	close(release)
	select {
	case err := <-ended:
		if !errors.Is(err, inbox.ErrDropped) {
			t.Fatalf("Run = %v, want ErrDropped", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the dropped stream did not end")
	}
}
