package bustest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
)

// Destinations the suite publishes to. A harness whose broker needs pre-created entities
// maps them to real queues, and must restore the names on delivered and dead-lettered
// messages. Every Harness returned by the constructor starts with both empty.
const (
	DestinationA = "bustest-a"
	DestinationB = "bustest-b"
)

// Harness is what the suite needs from one bus implementation. Each call of the
// constructor passed to Run returns a fresh, empty bus (or empty entities).
type Harness interface {
	// Publish sends m, as bus.Publisher does.
	Publish(ctx context.Context, m bus.Message) error
	// Receive delivers, to h, whatever is available now on destination (including
	// redeliveries of messages h abandons, if the broker makes them available at once),
	// settling each delivery as the bus contract says: nil completes, an error abandons or
	// dead-letters. It returns the number of deliveries made; 0 means nothing was available.
	Receive(ctx context.Context, destination string, h bus.Handler) (delivered int, err error)
	// DeadLetters returns the dead-lettered messages of destination, oldest first.
	DeadLetters(ctx context.Context, destination string) ([]bus.DeadLettered, error)
	// MaxDeliveryCount is the delivery count at which a failing message is dead-lettered.
	// The suite needs it to be at least 2 (3 or so keeps it fast).
	MaxDeliveryCount() int
}

// maxReceiveCalls bounds how often the suite calls Receive while waiting for a state.
// A broker whose abandoned messages reappear only on a later Receive still converges well
// within it; a bus that keeps redelivering forever fails instead of hanging.
const maxReceiveCalls = 100

// Run runs the conformance suite. newBus is called once per subtest.
func Run(t *testing.T, newBus func(t *testing.T) Harness) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"PublishRejectsIncompleteMessage", testPublishRejectsIncompleteMessage},
		{"FIFOPerDestination", testFIFOPerDestination},
		{"FieldsPreserved", testFieldsPreserved},
		{"DuplicateIDDeliveredOnce", testDuplicateIDDeliveredOnce},
		{"DuplicateIDPerDestination", testDuplicateIDPerDestination},
		{"BodyCopiedOnPublish", testBodyCopiedOnPublish},
		{"BodyCopiedOnDelivery", testBodyCopiedOnDelivery},
		{"RedeliveryAfterHandlerError", testRedeliveryAfterHandlerError},
		{"DeadLetterAfterMaxDeliveryCount", testDeadLetterAfterMaxDeliveryCount},
		{"DeadLetterAtOnce", testDeadLetterAtOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newBus(t)
			if h.MaxDeliveryCount() < 2 {
				t.Fatalf("harness MaxDeliveryCount = %d, the suite needs at least 2", h.MaxDeliveryCount())
			}
			tt.fn(t, h)
		})
	}
}

// delivery is one call of a handler, as the handler saw it.
type delivery struct {
	ID, Destination, SessionID string
	Body                       string
	DeliveryCount              int
}

func (d delivery) String() string {
	return fmt.Sprintf("%s@%s#%d(%q)", d.ID, d.Destination, d.DeliveryCount, d.Body)
}

// sink records deliveries; fail decides each delivery's result.
type sink struct {
	got  []delivery
	fail func(m bus.Message) error
}

func (s *sink) handle(_ context.Context, m bus.Message) error {
	s.got = append(s.got, delivery{ID: m.ID, Destination: m.Destination, SessionID: m.SessionID, Body: string(m.Body), DeliveryCount: m.DeliveryCount})
	if s.fail != nil {
		return s.fail(m)
	}
	return nil
}

func (s *sink) ids() []string {
	out := make([]string, len(s.got))
	for i, d := range s.got {
		out[i] = d.ID
	}
	return out
}

func publish(t *testing.T, h Harness, msgs ...bus.Message) {
	t.Helper()
	for _, m := range msgs {
		if err := h.Publish(t.Context(), m); err != nil {
			t.Fatalf("Publish(%s to %s): %v", m.ID, m.Destination, err)
		}
	}
}

// receiveAll calls Receive until it reports nothing available, and returns the total.
func receiveAll(t *testing.T, h Harness, destination string, hd bus.Handler) int {
	t.Helper()
	total := 0
	for range maxReceiveCalls {
		n, err := h.Receive(t.Context(), destination, hd)
		if err != nil {
			t.Fatalf("Receive(%s): %v", destination, err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
	t.Fatalf("Receive(%s) still delivering after %d calls (%d deliveries)", destination, maxReceiveCalls, total)
	return total
}

func deadLetters(t *testing.T, h Harness, destination string) []bus.DeadLettered {
	t.Helper()
	dl, err := h.DeadLetters(t.Context(), destination)
	if err != nil {
		t.Fatalf("DeadLetters(%s): %v", destination, err)
	}
	return dl
}

func testPublishRejectsIncompleteMessage(t *testing.T, h Harness) {
	cases := []struct {
		name string
		m    bus.Message
	}{
		{"no ID", bus.Message{Destination: DestinationA, Body: []byte("x")}},
		{"no Destination", bus.Message{ID: "m-no-dest", Body: []byte("x")}},
		{"neither", bus.Message{Body: []byte("x")}},
	}
	for _, c := range cases {
		if err := h.Publish(t.Context(), c.m); err == nil {
			t.Errorf("%s: Publish(%+v) = nil, want an error", c.name, c.m)
		}
	}
	s := &sink{}
	if n := receiveAll(t, h, DestinationA, s.handle); n != 0 {
		t.Errorf("rejected messages were delivered: %v", s.got)
	}
	// The rejected ID was not remembered for duplicate detection.
	publish(t, h, bus.Message{ID: "m-no-dest", Destination: DestinationA, Body: []byte("ok")})
	receiveAll(t, h, DestinationA, s.handle)
	if !slices.Equal(s.ids(), []string{"m-no-dest"}) {
		t.Errorf("after a rejected publish, a valid one delivered %v, want [m-no-dest]", s.got)
	}
}

func testFIFOPerDestination(t *testing.T, h Harness) {
	var wantA, wantB []string
	for i := range 20 {
		a := fmt.Sprintf("a-%02d", i)
		b := fmt.Sprintf("b-%02d", 19-i)
		publish(t, h,
			bus.Message{ID: a, Destination: DestinationA, Body: []byte(a)},
			bus.Message{ID: b, Destination: DestinationB, Body: []byte(b)})
		wantA, wantB = append(wantA, a), append(wantB, b)
	}
	sa := &sink{}
	if n := receiveAll(t, h, DestinationA, sa.handle); n != len(wantA) {
		t.Errorf("Receive(A) delivered %d, want %d", n, len(wantA))
	}
	if !slices.Equal(sa.ids(), wantA) {
		t.Errorf("destination A order = %v, want %v", sa.ids(), wantA)
	}
	for _, d := range sa.got {
		if d.Destination != DestinationA || d.Body != d.ID {
			t.Errorf("destination A received %v", d)
		}
	}
	sb := &sink{}
	receiveAll(t, h, DestinationB, sb.handle)
	if !slices.Equal(sb.ids(), wantB) {
		t.Errorf("destination B order = %v, want %v", sb.ids(), wantB)
	}
}

func testFieldsPreserved(t *testing.T, h Harness) {
	body := []byte{0, 1, 2, 0xff, '{', '}'}
	publish(t, h,
		bus.Message{ID: "with-session", Destination: DestinationA, SessionID: "entity-7", Body: body, DeliveryCount: 7},
		bus.Message{ID: "empty-body", Destination: DestinationA})
	s := &sink{}
	receiveAll(t, h, DestinationA, s.handle)
	want := []delivery{
		{ID: "with-session", Destination: DestinationA, SessionID: "entity-7", Body: string(body), DeliveryCount: 1},
		{ID: "empty-body", Destination: DestinationA, DeliveryCount: 1},
	}
	if len(s.got) != len(want) {
		t.Fatalf("delivered %v, want %v", s.got, want)
	}
	for i := range want {
		if s.got[i] != want[i] {
			t.Errorf("delivery %d = %v (session %q), want %v (session %q)", i, s.got[i], s.got[i].SessionID, want[i], want[i].SessionID)
		}
	}
}

func testDuplicateIDDeliveredOnce(t *testing.T, h Harness) {
	publish(t, h,
		bus.Message{ID: "dup", Destination: DestinationA, Body: []byte("first")},
		bus.Message{ID: "other", Destination: DestinationA, Body: []byte("other")},
		bus.Message{ID: "dup", Destination: DestinationA, Body: []byte("second")})
	s := &sink{}
	receiveAll(t, h, DestinationA, s.handle)
	if !slices.Equal(s.ids(), []string{"dup", "other"}) {
		t.Fatalf("delivered %v, want dup then other, once each", s.got)
	}
	if s.got[0].Body != "first" {
		t.Errorf("duplicate delivered body %q, want the first publish's %q", s.got[0].Body, "first")
	}
	// Still a duplicate after the first copy was completed.
	publish(t, h, bus.Message{ID: "dup", Destination: DestinationA, Body: []byte("third")})
	if n := receiveAll(t, h, DestinationA, s.handle); n != 0 {
		t.Errorf("re-publishing a completed message id delivered it again: %v", s.got[2:])
	}
}

func testDuplicateIDPerDestination(t *testing.T, h Harness) {
	// Duplicate detection is per entity (as in Service Bus): the same id on two
	// destinations is two messages.
	publish(t, h,
		bus.Message{ID: "same", Destination: DestinationA, Body: []byte("a")},
		bus.Message{ID: "same", Destination: DestinationB, Body: []byte("b")})
	sa, sb := &sink{}, &sink{}
	receiveAll(t, h, DestinationA, sa.handle)
	receiveAll(t, h, DestinationB, sb.handle)
	if len(sa.got) != 1 || sa.got[0].Body != "a" {
		t.Errorf("destination A delivered %v, want one message with body a", sa.got)
	}
	if len(sb.got) != 1 || sb.got[0].Body != "b" {
		t.Errorf("destination B delivered %v, want one message with body b", sb.got)
	}
}

func testBodyCopiedOnPublish(t *testing.T, h Harness) {
	buf := []byte("original")
	publish(t, h, bus.Message{ID: "copy", Destination: DestinationA, Body: buf})
	copy(buf, "MUTATED!")
	buf = append(buf[:0], "reused for the next message"...)
	publish(t, h, bus.Message{ID: "next", Destination: DestinationA, Body: buf})
	s := &sink{}
	receiveAll(t, h, DestinationA, s.handle)
	if len(s.got) != 2 || s.got[0].Body != "original" || s.got[1].Body != "reused for the next message" {
		t.Errorf("delivered %v, want bodies [original, reused for the next message]", s.got)
	}
}

func testBodyCopiedOnDelivery(t *testing.T, h Harness) {
	publish(t, h, bus.Message{ID: "mutate", Destination: DestinationA, Body: []byte("pristine")})
	// The handler scribbles over the body it was given and fails; the redelivery and the
	// dead-lettered copy must still carry the published bytes.
	s := &sink{fail: func(m bus.Message) error {
		for i := range m.Body {
			m.Body[i] = 'X'
		}
		return errors.New("scribbled")
	}}
	receiveAll(t, h, DestinationA, s.handle)
	if len(s.got) != h.MaxDeliveryCount() {
		t.Fatalf("delivered %d times, want MaxDeliveryCount=%d", len(s.got), h.MaxDeliveryCount())
	}
	for _, d := range s.got {
		if d.Body != "pristine" {
			t.Errorf("delivery %d saw body %q, want %q", d.DeliveryCount, d.Body, "pristine")
		}
	}
	dl := deadLetters(t, h, DestinationA)
	if len(dl) != 1 || string(dl[0].Message.Body) != "pristine" {
		t.Errorf("dead letters = %+v, want one with body %q", dl, "pristine")
	}
}

func testRedeliveryAfterHandlerError(t *testing.T, h Harness) {
	max := h.MaxDeliveryCount()
	tests := []struct {
		name     string
		failures int // deliveries that fail before one succeeds
	}{
		{"succeeds first time", 0},
		{"fails once", 1},
		{"fails until the last allowed delivery", max - 1},
	}
	for i, tt := range tests {
		id := fmt.Sprintf("retry-%d", i)
		publish(t, h, bus.Message{ID: id, Destination: DestinationA, SessionID: "s", Body: []byte(tt.name)})
		s := &sink{fail: func(m bus.Message) error {
			if m.DeliveryCount <= tt.failures {
				return fmt.Errorf("transient failure %d", m.DeliveryCount)
			}
			return nil
		}}
		receiveAll(t, h, DestinationA, s.handle)
		if len(s.got) != tt.failures+1 {
			t.Errorf("%s: delivered %v, want %d deliveries", tt.name, s.got, tt.failures+1)
			continue
		}
		for n, d := range s.got {
			if d.DeliveryCount != n+1 || d.ID != id || d.Body != tt.name || d.SessionID != "s" {
				t.Errorf("%s: delivery %d = %v, want %s#%d with the published body", tt.name, n, d, id, n+1)
			}
		}
	}
	if dl := deadLetters(t, h, DestinationA); len(dl) != 0 {
		t.Errorf("messages that eventually succeeded were dead-lettered: %+v", dl)
	}
}

func testDeadLetterAfterMaxDeliveryCount(t *testing.T, h Harness) {
	max := h.MaxDeliveryCount()
	publish(t, h,
		bus.Message{ID: "poison", Destination: DestinationA, Body: []byte("poison")},
		bus.Message{ID: "fine", Destination: DestinationA, Body: []byte("fine")})
	s := &sink{fail: func(m bus.Message) error {
		if m.ID == "poison" {
			return fmt.Errorf("cannot process poison (delivery %d)", m.DeliveryCount)
		}
		return nil
	}}
	receiveAll(t, h, DestinationA, s.handle)
	var counts []int
	fine := 0
	for _, d := range s.got {
		switch d.ID {
		case "poison":
			counts = append(counts, d.DeliveryCount)
		case "fine":
			fine++
		}
	}
	if fine != 1 {
		t.Errorf("the healthy message was delivered %d times, want 1 (a poison message must not block it)", fine)
	}
	if len(counts) != max {
		t.Fatalf("poison delivered with counts %v, want 1..%d", counts, max)
	}
	for i, c := range counts {
		if c != i+1 {
			t.Errorf("poison delivery counts = %v, want 1..%d", counts, max)
			break
		}
	}
	dl := deadLetters(t, h, DestinationA)
	if len(dl) != 1 {
		t.Fatalf("dead letters = %+v, want exactly the poison message", dl)
	}
	d := dl[0]
	if d.Message.ID != "poison" || d.Message.Destination != DestinationA || string(d.Message.Body) != "poison" {
		t.Errorf("dead-lettered message = %+v, want poison on %s", d.Message, DestinationA)
	}
	if d.Message.DeliveryCount != max {
		t.Errorf("dead-lettered DeliveryCount = %d, want %d", d.Message.DeliveryCount, max)
	}
	if strings.TrimSpace(d.Reason) == "" {
		t.Errorf("dead-lettered without a reason")
	}
	if n := receiveAll(t, h, DestinationA, s.handle); n != 0 {
		t.Errorf("a dead-lettered message was delivered again")
	}
	if dl := deadLetters(t, h, DestinationB); len(dl) != 0 {
		t.Errorf("destination B has dead letters %+v, want none", dl)
	}
}

func testDeadLetterAtOnce(t *testing.T, h Harness) {
	cause := errors.New("malformed body: missing deliveryKey")
	tests := []struct {
		name string
		err  error
	}{
		{"Permanent(err)", automation.Permanent(cause)},
		{"wrapped Permanent(err)", fmt.Errorf("dispatch m1: %w", automation.Permanent(cause))},
	}
	for i, tt := range tests {
		id := fmt.Sprintf("permanent-%d", i)
		publish(t, h, bus.Message{ID: id, Destination: DestinationA, Body: []byte("{}")})
		s := &sink{fail: func(bus.Message) error { return tt.err }}
		receiveAll(t, h, DestinationA, s.handle)
		if len(s.got) != 1 || s.got[0].DeliveryCount != 1 {
			t.Errorf("%s: delivered %v, want exactly one delivery", tt.name, s.got)
		}
		dl := deadLetters(t, h, DestinationA)
		if len(dl) != i+1 {
			t.Fatalf("%s: dead letters = %+v, want %d", tt.name, dl, i+1)
		}
		d := dl[i]
		if d.Message.ID != id || !bytes.Equal(d.Message.Body, []byte("{}")) || d.Message.DeliveryCount != 1 {
			t.Errorf("%s: dead-lettered %+v, want %s after one delivery", tt.name, d.Message, id)
		}
		if !strings.Contains(d.Reason, cause.Error()) {
			t.Errorf("%s: reason %q does not carry the handler's %q", tt.name, d.Reason, cause.Error())
		}
	}
}
