package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// envelopeOf returns one envelope of n messages to "facts", ids "{prefix}-{i}", each with
// its own session.
func envelopeOf(t *testing.T, prefix string, n int) store.OutboxMessage {
	t.Helper()
	var msgs []store.OutboxMessage
	for i := range n {
		msgs = append(msgs, store.OutboxMessage{MessageID: fmt.Sprintf("%s-%d", prefix, i), Destination: "facts",
			SessionID: fmt.Sprintf("s-%d", i), Body: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	env, err := store.NewEnvelope(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// listPublisher records every publish in order and fails the publishes whose id is in
// fail (each once).
type listPublisher struct {
	mu   sync.Mutex
	got  []bus.Message
	fail map[string]bool
}

func (p *listPublisher) Publish(_ context.Context, m bus.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail[m.ID] {
		delete(p.fail, m.ID)
		return errors.New("broker unavailable")
	}
	p.got = append(p.got, m)
	return nil
}

func (p *listPublisher) ids() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, m := range p.got {
		ids = append(ids, m.ID)
	}
	return strings.Join(ids, ",")
}

// An envelope row is published as its messages, in order, each with its own MessageId,
// session and body and the row's destination, between the rows before and after it; the
// relay counts the messages and marks the row once.
func TestRelayPublishesAnEnvelopesMessagesInOrder(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{
		{MessageID: "before", Destination: "q", Body: []byte("{}")},
		envelopeOf(t, "f", 3),
		{MessageID: "after", Destination: "q", Body: []byte("{}")},
	})
	pub := &listPublisher{}
	r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock}
	n, err := r.RunOnce(ctx)
	if err != nil || n != 5 {
		t.Fatalf("published %d, %v; want 5 messages", n, err)
	}
	if got := pub.ids(); got != "before,f-0,f-1,f-2,after" {
		t.Fatalf("published %s", got)
	}
	for i, m := range pub.got[1:4] {
		if m.Destination != "facts" || m.SessionID != fmt.Sprintf("s-%d", i) || string(m.Body) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Fatalf("item %d published as %+v", i, m)
		}
	}
	wantOutboxEmpty(t, st)
}

// A publish that fails inside an envelope stops the run there: the row is not marked, it
// waits for its RetryAt, the rows after it for the next run; then the whole envelope is
// published again (the messages before the failure a second time, with the same
// MessageIds, which the consumers absorb) and marked. Nothing is lost.
func TestRelayRetriesAWholeEnvelopeAfterAFailedPublish(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{envelopeOf(t, "f", 3), {MessageID: "after", Destination: "q", Body: []byte("{}")}})
	pub := &listPublisher{fail: map[string]bool{"f-1": true}}
	r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock, RetryDelay: time.Second}
	if n, err := r.RunOnce(ctx); err == nil || n != 0 || !strings.Contains(err.Error(), "f-1") {
		t.Fatalf("failed run: %d, %v", n, err)
	}
	// The row after the envelope is released, not held for the envelope's retry.
	if n, err := r.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("run before the retry: %d, %v", n, err)
	}
	clock.Advance(2 * time.Second)
	if n, err := r.RunOnce(ctx); err != nil || n != 3 {
		t.Fatalf("retry: %d, %v", n, err)
	}
	if got := pub.ids(); got != "f-0,after,f-0,f-1,f-2" {
		t.Fatalf("published %s", got)
	}
	wantOutboxEmpty(t, st)
}

// An envelope whose body cannot be read (damaged by hand) is not dropped: the run fails on
// it, the row waits for its retry and stays unpublished.
func TestRelayKeepsAnUnreadableEnvelope(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{{MessageID: "envelope:x", Destination: "facts", Body: []byte(`{"not":"an array"}`), Envelope: true}})
	pub := &listPublisher{}
	r := &delivery.Relay{Store: st, Publisher: pub, Clock: clock}
	if n, err := r.RunOnce(ctx); err == nil || n != 0 {
		t.Fatalf("run: %d, %v", n, err)
	}
	left, _ := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if len(left) != 1 || left[0].Attempts != 1 || len(pub.got) != 0 {
		t.Fatalf("left %+v, published %s", left, pub.ids())
	}
}

// On the in-process bus (MarkOnSettle) an envelope's row is marked only once every one of
// its messages settled: a drain that settled some leaves it unpublished, so a crash then
// republishes the envelope and loses none of its messages.
func TestRelayMarksAnEnvelopeWhenAllItsMessagesSettled(t *testing.T) {
	t.Parallel()
	st, clock := relayStore(t)
	ctx := context.Background()
	startWithOutbox(t, st, clock, "cx-1", []store.OutboxMessage{envelopeOf(t, "f", 3)})
	r := &delivery.Relay{Store: st, Clock: clock, MarkOnSettle: true}
	b := settlingBus(t, r, bus.MemoryOptions{})
	handled := map[string]int{}
	b.Subscribe("facts", func(_ context.Context, m bus.Message) error { handled[m.ID]++; return nil })
	if n, err := r.RunOnce(ctx); err != nil || n != 3 {
		t.Fatalf("run: %d, %v", n, err)
	}
	if _, err := b.Drain(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := r.FlushSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if len(handled) != 2 || unpublished(t, st) != 1 {
		t.Fatalf("after 2 of 3 settled: handled %v, %d rows unpublished (want 1)", handled, unpublished(t, st))
	}
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.FlushSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if len(handled) != 3 || unpublished(t, st) != 0 {
		t.Fatalf("after all settled: handled %v, %d rows unpublished (want 0)", handled, unpublished(t, st))
	}
}
