package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// envProcess is one process of the embedded runtime as app.Open wires it: the relay marks on
// settle, the in-process bus settles into it and flushes after each drain, and the handler of
// "facts" counts each message it handled.
type envProcess struct {
	r       *delivery.Relay
	b       *bus.Memory
	mu      sync.Mutex
	handled map[string]int
}

func newEnvProcess(t *testing.T, st store.DeliveryStore, clock *automation.ManualClock, opts bus.MemoryOptions) *envProcess {
	t.Helper()
	p := &envProcess{handled: map[string]int{}}
	p.r = &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true, RetryDelay: time.Second, MaxRetryDelay: time.Second}
	p.b = settlingBus(t, p.r, opts)
	p.b.Subscribe("facts", func(_ context.Context, m bus.Message) error {
		p.mu.Lock()
		p.handled[m.ID]++
		p.mu.Unlock()
		return nil
	})
	return p
}

// drain delivers everything the bus holds.
func (p *envProcess) drain(t *testing.T) {
	t.Helper()
	if _, err := p.b.Drain(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

// envRows checks the outbox against what the handlers saw: a row marked published must have
// had every item handled (rows maps a row's MessageId to its items' MessageIds). It returns
// how many rows are still unpublished.
func envRows(t *testing.T, st store.DeliveryStore, rows map[string][]string, handled ...map[string]int) int {
	t.Helper()
	left, err := st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	for _, m := range left {
		open[m.MessageID] = true
	}
	for row, items := range rows {
		if open[row] {
			continue
		}
		for _, id := range items {
			n := 0
			for _, h := range handled {
				n += h[id]
			}
			if n == 0 {
				t.Fatalf("row %s marked published but its message %s was never handled", row, id)
			}
		}
	}
	return len(left)
}

func itemIDs(prefix string, n int) []string {
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("%s-%d", prefix, i))
	}
	return ids
}

// The duplicate window: an envelope whose lease ran out while the in-process bus still held
// some of its messages is published again by the same process. The items already settled
// are settled again at once (dropped as duplicates), the ones still held are dropped and
// count when their first copy settles. The row is marked only once all were handled, and
// no message is handled twice.
func TestHostileEnvelopeRepublishedWhileTheBusHoldsPartOfIt(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	env := envelopeOf(t, "f", 4)
	rows := map[string][]string{env.MessageID: itemIDs("f", 4)}
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{env})
	p := newEnvProcess(t, st, clock, bus.MemoryOptions{})
	if n, err := p.r.RunOnce(ctx); err != nil || n != 4 {
		t.Fatalf("run: %d, %v", n, err)
	}
	if _, err := p.b.Drain(ctx, 1); err != nil { // f-0 settles (and is flushed: nothing to mark)
		t.Fatal(err)
	}
	if envRows(t, st, rows, p.handled) != 1 {
		t.Fatal("row marked after 1 of 4 messages settled")
	}
	clock.Advance(2 * time.Minute) // the lease ran out: the same relay takes the row again
	if n, err := p.r.RunOnce(ctx); err != nil || n != 4 {
		t.Fatalf("republish: %d, %v", n, err)
	}
	if err := p.r.FlushSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if envRows(t, st, rows, p.handled) != 1 {
		t.Fatal("row marked while 3 of its messages were still held by the bus")
	}
	if _, err := p.b.Drain(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if envRows(t, st, rows, p.handled) != 1 {
		t.Fatal("row marked after 3 of 4 messages settled")
	}
	p.drain(t)
	if n := envRows(t, st, rows, p.handled); n != 0 {
		t.Fatalf("%d rows unpublished after every message settled", n)
	}
	for _, id := range rows[env.MessageID] {
		if p.handled[id] != 1 {
			t.Fatalf("handled %v, want each once", p.handled)
		}
	}
}

// A publisher that settles each message before Publish returns (a bus draining on another
// goroutine, at its fastest): an envelope whose last publish meets a full queue must not be
// marked by the settlements of the messages before it; the full queue is back-pressure, not
// a failure (no error, no attempt, no RetryAt), and the next run publishes it all and marks it.
func TestHostileEnvelopeSettledBeforePublishReturns(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	env := envelopeOf(t, "f", 3)
	rows := map[string][]string{env.MessageID: itemIDs("f", 3)}
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{env})
	handled := map[string]int{}
	r := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true, RetryDelay: time.Second}
	fail := map[string]bool{"f-2": true}
	r.Publisher = publishFunc(func(ctx context.Context, m bus.Message) error {
		if fail[m.ID] {
			delete(fail, m.ID)
			return bus.ErrQueueFull
		}
		handled[m.ID]++
		if err := r.Settled(ctx, m.ID); err != nil {
			return err
		}
		return r.FlushSettled(ctx)
	})
	if n, err := r.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("run: %d, %v; want the run stopped at the full queue, no error", n, err)
	}
	if err := r.FlushSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if envRows(t, st, rows, handled) != 1 {
		t.Fatal("row marked though its last message was never published")
	}
	left, _ := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if len(left) != 1 || left[0].Attempts != 0 {
		t.Fatalf("after the full queue: %+v, want the row waiting with no attempt counted", left)
	}
	if n, err := r.RunOnce(ctx); err != nil || n != 3 {
		t.Fatalf("next run: %d, %v", n, err)
	}
	if n := envRows(t, st, rows, handled); n != 0 {
		t.Fatalf("%d rows unpublished after every message settled", n)
	}
}

type publishFunc func(ctx context.Context, m bus.Message) error

func (f publishFunc) Publish(ctx context.Context, m bus.Message) error { return f(ctx, m) }

// The in-process bus full in the middle of envelopes (MaxQueueLength smaller than one
// envelope, and many envelopes of store.MaxBatch facts against the default queue length):
// each run publishes what fits, the retries publish the rest (the messages already on the
// bus dropped as duplicates), no row is marked before all its messages were handled, and in
// the end every message was handled exactly once and every row is marked.
func TestHostileEnvelopesAgainstAFullQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		envelopes, per int
		queue          int
	}{
		{"queue smaller than an envelope", 3, 7, 3},
		{"MaxBatch envelopes against the default queue", 12, store.MaxBatch, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, clock := relayStore(t)
			ctx := context.Background()
			rows := map[string][]string{}
			for e := range tc.envelopes {
				prefix := fmt.Sprintf("e%d", e)
				env := envelopeOf(t, prefix, tc.per)
				rows[env.MessageID] = itemIDs(prefix, tc.per)
				startWithOutbox(t, st, clock, fmt.Sprintf("cx-%d", e), []store.OutboxMessage{env})
			}
			p := newEnvProcess(t, st, clock, bus.MemoryOptions{MaxQueueLength: tc.queue, DuplicateWindow: 2 * tc.envelopes * tc.per})
			full := 0
			p.r.Publisher = publishFunc(func(ctx context.Context, m bus.Message) error {
				err := p.b.Publish(ctx, m)
				if errors.Is(err, bus.ErrQueueFull) {
					full++
				}
				return err
			})
			for round := 0; ; round++ {
				if round > 200 {
					t.Fatalf("not drained after %d rounds", round)
				}
				if _, err := p.r.RunOnce(ctx); err != nil {
					t.Fatal(err) // a full queue is back-pressure, not an error
				}
				envRows(t, st, rows, p.handled)
				p.drain(t)
				if envRows(t, st, rows, p.handled) == 0 {
					break
				}
				// No clock step: a row that met the full queue has no RetryAt.
			}
			if full == 0 {
				t.Fatal("the queue was never full: the test proves nothing")
			}
			if len(p.handled) != tc.envelopes*tc.per {
				t.Fatalf("%d messages handled, want %d", len(p.handled), tc.envelopes*tc.per)
			}
			onceEach(t, p.handled, "message %s handled %d times")
		})
	}
}

// A crash between publishing an envelope and marking it (the AfterPublish fault point, the
// simulator's relay crash), with the in-process bus lost with the process: the next process
// publishes the whole envelope again once the lease ran out and handles every message.
func TestHostileEnvelopeCrashAfterPublish(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	env := envelopeOf(t, "f", 5)
	rows := map[string][]string{env.MessageID: itemIDs("f", 5)}
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{env})
	first := newEnvProcess(t, st, clock, bus.MemoryOptions{})
	first.r.Hooks = &delivery.RelayHooks{AfterPublish: func(context.Context, []int64) error { return errors.New("crash") }}
	if _, err := first.r.RunOnce(ctx); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("run: %v", err)
	}
	// The process dies: its bus (and what it held) is gone.
	second := newEnvProcess(t, st, clock, bus.MemoryOptions{})
	if n, err := second.r.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("lease not kept: %d, %v", n, err)
	}
	clock.Advance(time.Minute)
	if n, err := second.r.RunOnce(ctx); err != nil || n != 5 {
		t.Fatalf("after the lease: %d, %v", n, err)
	}
	second.drain(t)
	if n := envRows(t, st, rows, second.handled); n != 0 || len(first.handled) != 0 || len(second.handled) != 5 {
		t.Fatalf("%d rows unpublished; handled by the dead process %v, by the next %v", n, first.handled, second.handled)
	}
}

// Damaged envelope rows (bodies edited by hand): each is kept unpublished with a visible
// error naming the row, nothing of it is published, and it holds back no other row: the
// row after it is published in the same relay's next run.
func TestHostileDamagedEnvelopesAreKeptAndDoNotBlock(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"empty array":       `[]`,
		"null":              `null`,
		"object":            `{"messageId":"a","body":{}}`,
		"truncated":         `[{"messageId":"a","body":{"n":1}},{"messageId":"b","bo`,
		"item without id":   `[{"messageId":"a","body":{}},{"body":{}}]`,
		"item without body": `[{"messageId":"a","body":{"n":1}},{"messageId":"b"}]`,
		"not json":          `garbage`,
		"empty":             ``,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, clock := relayStore(t)
			ctx := context.Background()
			startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{
				{MessageID: "envelope:damaged", Destination: "facts", Body: []byte(body), Envelope: true},
				{MessageID: "after", Destination: "q", Body: []byte("{}")},
			})
			pub := &listPublisher{}
			r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock}
			_, err := r.RunOnce(ctx)
			if err == nil || !strings.Contains(err.Error(), "envelope:damaged") {
				t.Fatalf("run: %v, want an error naming the row", err)
			}
			if n, err := r.RunOnce(ctx); err != nil || n != 1 {
				t.Fatalf("the row after the damaged one: %d, %v", n, err)
			}
			left, _ := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
			if len(left) != 1 || left[0].MessageID != "envelope:damaged" || pub.ids() != "after" {
				t.Fatalf("left %+v, published %s", left, pub.ids())
			}
		})
	}
}

// slowPublisher is a broker that takes 10 ms (on the manual clock) per message, as a
// Service Bus send does, and runs another relay once, from inside a publish, when the
// current run has lasted longer than its lease.
type slowPublisher struct {
	clock    *automation.ManualClock
	runStart time.Time
	lease    time.Duration
	other    func()
	fired    bool
	count    map[string]int
}

func (p *slowPublisher) Publish(_ context.Context, m bus.Message) error {
	p.clock.Advance(10 * time.Millisecond)
	p.count[m.ID]++
	if !p.fired && p.clock.Now().Sub(p.runStart) > p.lease {
		p.fired = true
		p.other()
	}
	return nil
}

// A run leases its rows for Lease and marks them only at its end. With envelopes a run of
// Batch rows may hold Batch x MaxBatch messages: published one by one to a broker that
// takes 10 ms each, 100 envelopes of 100 facts take 100 s, and a second relay takes the
// rows whose lease ran out (published, not yet marked) and publishes them again, two relays
// at once on one row. A run hands back the rows it has not begun once half its lease is
// gone, so it stays within its lease and every message is published once.
func TestHostileEnvelopesOutlastTheLease(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	const rows, per = 100, 100
	for e := range rows {
		startWithOutbox(t, st, clock, fmt.Sprintf("cx-%d", e), []store.OutboxMessage{envelopeOf(t, fmt.Sprintf("e%d", e), per)})
	}
	pub := &slowPublisher{clock: clock, lease: time.Minute, count: map[string]int{}}
	a := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, Lease: time.Minute}
	b := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, Lease: time.Minute}
	pub.other = func() {
		if _, err := b.RunOnce(ctx); err != nil {
			t.Error(err)
		}
	}
	var most time.Duration // the longest run
	for range 2 * rows {
		pub.runStart = clock.Now()
		n, err := a.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, clock.Now().Sub(pub.runStart))
		if n == 0 {
			break
		}
	}
	for id, n := range pub.count {
		if n != 1 {
			t.Fatalf("message %s published %d times (a second relay took rows whose lease ran out mid-run; %v)", id, n, pub.fired)
		}
	}
	if len(pub.count) != rows*per || most >= time.Minute {
		t.Fatalf("%d messages published (want %d), the longest run %s (want under the lease)", len(pub.count), rows*per, most)
	}
	if left, _ := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); len(left) != 0 {
		t.Fatalf("%d rows left unpublished", len(left))
	}
}
