package azure

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/bus/bustest"
)

// fakeCredential satisfies azcore.TokenCredential for constructors that must not connect.
type fakeCredential struct{}

func (fakeCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, errors.New("fake credential: no tokens offline")
}

// offlineConnectionString is well formed but names no reachable namespace; the SDK parses
// it without connecting.
const offlineConnectionString = "Endpoint=sb://automation-offline.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=b2ZmbGluZS10ZXN0LWtleQ=="

func TestNewServiceBusPublisherRejectsOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts ServiceBusOptions
		want string
	}{
		{"nothing", ServiceBusOptions{}, "no namespace"},
		{"both", ServiceBusOptions{ConnectionString: offlineConnectionString, Namespace: "x.servicebus.windows.net"}, "not both"},
		{"both with credential", ServiceBusOptions{ConnectionString: offlineConnectionString, Credential: fakeCredential{}}, "not both"},
		{"namespace without credential", ServiceBusOptions{Namespace: "x.servicebus.windows.net"}, "both required"},
		{"credential without namespace", ServiceBusOptions{Credential: fakeCredential{}}, "both required"},
		{"malformed connection string", ServiceBusOptions{ConnectionString: "not a connection string"}, "connection string"},
		{"storage connection string", ServiceBusOptions{ConnectionString: DevelopmentConnectionString(10000, 10001, 10002)}, "connection string"},
	}
	for _, tt := range tests {
		p, err := NewServiceBusPublisher(tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewServiceBusPublisher = %v, %v; want an error mentioning %q", tt.name, p, err, tt.want)
		}
	}
}

func TestServiceBusPublisherOffline(t *testing.T) {
	t.Parallel()
	for _, opts := range []ServiceBusOptions{
		{ConnectionString: offlineConnectionString},
		{Namespace: "automation-offline.servicebus.windows.net", Credential: fakeCredential{}},
	} {
		p, err := NewServiceBusPublisher(opts)
		if err != nil {
			t.Fatalf("NewServiceBusPublisher(%+v): %v", opts, err)
		}
		// Invalid messages fail before any connection is attempted.
		for _, m := range []bus.Message{
			{Destination: "q", Body: []byte("x")},
			{ID: "m", Body: []byte("x")},
			{ID: strings.Repeat("i", 129), Destination: "q"},
			{ID: "m", Destination: "q", SessionID: strings.Repeat("s", 129)},
		} {
			if err := p.Publish(t.Context(), m); err == nil {
				t.Errorf("Publish(%+v) = nil, want a validation error", m)
			}
		}
		if err := p.Close(t.Context()); err != nil {
			t.Errorf("Close before any connection: %v", err)
		}
		if err := p.Close(t.Context()); err != nil {
			t.Errorf("second Close: %v", err)
		}
		err = p.Publish(t.Context(), bus.Message{ID: "m", Destination: "q"})
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("Publish after Close = %v, want a closed error", err)
		}
	}
}

func TestToServiceBusMessage(t *testing.T) {
	t.Parallel()
	body := []byte{0, 1, 0xff, '{'}
	tests := []struct {
		name    string
		in      bus.Message
		session *string
		wantErr bool
	}{
		{"all fields", bus.Message{ID: "outbox-42", Destination: "notification-dispatch", SessionID: "entity-7", Body: body, DeliveryCount: 7}, ptr("entity-7"), false},
		{"no session", bus.Message{ID: "outbox-43", Destination: "due-work", Body: body}, nil, false},
		{"empty body", bus.Message{ID: "outbox-44", Destination: "due-work"}, nil, false},
		{"128-character id", bus.Message{ID: strings.Repeat("i", 128), Destination: "q"}, nil, false},
		{"no id", bus.Message{Destination: "q"}, nil, true},
		{"no destination", bus.Message{ID: "m"}, nil, true},
		{"id too long", bus.Message{ID: strings.Repeat("i", 129), Destination: "q"}, nil, true},
		{"session too long", bus.Message{ID: "m", Destination: "q", SessionID: strings.Repeat("s", 129)}, nil, true},
	}
	for _, tt := range tests {
		got, err := toServiceBusMessage(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: toServiceBusMessage(%+v) = %+v, want an error", tt.name, tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.MessageID == nil || *got.MessageID != tt.in.ID {
			t.Errorf("%s: MessageID = %v, want %q", tt.name, got.MessageID, tt.in.ID)
		}
		if (got.SessionID == nil) != (tt.session == nil) || got.SessionID != nil && *got.SessionID != *tt.session {
			t.Errorf("%s: SessionID = %v, want %v", tt.name, got.SessionID, tt.session)
		}
		if !bytes.Equal(got.Body, tt.in.Body) {
			t.Errorf("%s: Body = %v, want %v", tt.name, got.Body, tt.in.Body)
		}
		if len(tt.in.Body) > 0 && &got.Body[0] == &tt.in.Body[0] {
			t.Errorf("%s: body shares the caller's slice", tt.name)
		}
		if got.ScheduledEnqueueTime != nil || got.ApplicationProperties != nil || got.TimeToLive != nil {
			t.Errorf("%s: unexpected extra fields %+v", tt.name, got)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// --- conformance against a real Service Bus namespace ---

// Harness tuning. The harness dead-letters after harnessMaxDeliveryCount failed deliveries
// itself (as a Receiver-based consumer does), which keeps the suite fast; the queues'
// own MaxDeliveryCount must be higher (the default is 10).
const (
	harnessMaxDeliveryCount = 3
	harnessIdleWait         = 2 * time.Second // Receive ends after this long without a message
	harnessPurgeWait        = time.Second     // emptying a queue ends after this long without one
	deliveryCountProperty   = "automation-delivery-count"
	maxDeadLetterText       = 1024
)

// serviceBusSuite serialises the suite's subtests: they share two real queues, and every
// harness must start with both empty.
var serviceBusSuite sync.Mutex

// serviceBusHarness is bustest.Harness on Service Bus. Published message ids get a prefix
// unique to the harness, so duplicate detection (whose window outlives a test run) never
// drops a message of this run as a duplicate of an earlier one; the prefix is removed on
// delivery, and messages without it (left over from other runs) are dropped unseen.
type serviceBusHarness struct {
	pub    *ServiceBusPublisher
	queues map[string]string // bustest destination → real queue
	prefix string
}

var _ bustest.Harness = (*serviceBusHarness)(nil)

func newServiceBusHarness(t *testing.T, conn string, queueA, queueB string) *serviceBusHarness {
	t.Helper()
	serviceBusSuite.Lock()
	t.Cleanup(serviceBusSuite.Unlock) // registered first, so it runs last
	pub, err := NewServiceBusPublisher(ServiceBusOptions{ConnectionString: conn})
	if err != nil {
		t.Fatalf("NewServiceBusPublisher: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := pub.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	h := &serviceBusHarness{
		pub:    pub,
		queues: map[string]string{bustest.DestinationA: queueA, bustest.DestinationB: queueB},
		prefix: "bustest-" + hex.EncodeToString(b) + ":",
	}
	for _, q := range []string{queueA, queueB} {
		for _, sub := range []azservicebus.SubQueue{0, azservicebus.SubQueueDeadLetter} {
			if err := h.purge(t.Context(), q, sub); err != nil {
				t.Fatalf("empty queue %s (subqueue %d): %v", q, sub, err)
			}
		}
	}
	return h
}

// purge deletes whatever a queue (or its dead-letter queue) holds.
func (h *serviceBusHarness) purge(ctx context.Context, queue string, sub azservicebus.SubQueue) error {
	r, err := h.pub.client.NewReceiverForQueue(queue, &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete, SubQueue: sub})
	if err != nil {
		return err
	}
	defer r.Close(context.Background())
	for {
		msgs, err := receiveWithin(ctx, r, 100, harnessPurgeWait)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
	}
}

// receiveWithin receives up to most messages from r, waiting at most wait for them: a wait
// that ends with nothing (ctx still live) is no messages and no error.
func receiveWithin(ctx context.Context, r *azservicebus.Receiver, most int, wait time.Duration) ([]*azservicebus.ReceivedMessage, error) {
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	msgs, err := r.ReceiveMessages(rctx, most, nil)
	if err != nil && !(rctx.Err() != nil && ctx.Err() == nil) {
		return nil, err
	}
	return msgs, nil
}

func (h *serviceBusHarness) Publish(ctx context.Context, m bus.Message) error {
	if q, ok := h.queues[m.Destination]; ok {
		m.Destination = q
	}
	if m.ID != "" {
		m.ID = h.prefix + m.ID
	}
	return h.pub.Publish(ctx, m)
}

func (h *serviceBusHarness) MaxDeliveryCount() int { return harnessMaxDeliveryCount }

// toBusMessage maps a received message back to what the suite published; ok is false for
// messages of other runs.
func (h *serviceBusHarness) toBusMessage(destination string, rm *azservicebus.ReceivedMessage) (bus.Message, bool) {
	id, ok := strings.CutPrefix(rm.MessageID, h.prefix)
	if !ok {
		return bus.Message{}, false
	}
	m := bus.Message{ID: id, Destination: destination, Body: append([]byte{}, rm.Body...), DeliveryCount: int(rm.DeliveryCount)}
	if rm.SessionID != nil {
		m.SessionID = *rm.SessionID
	}
	return m, true
}

func truncate(s string) string {
	if len(s) > maxDeadLetterText {
		return s[:maxDeadLetterText]
	}
	return s
}

// Receive delivers what is available on destination, settling as the bus contract says,
// until the queue stays empty for harnessIdleWait. A receiver per call: between calls no
// link holds credit, so no message is fetched and released behind the suite's back.
func (h *serviceBusHarness) Receive(ctx context.Context, destination string, hd bus.Handler) (int, error) {
	queue, ok := h.queues[destination]
	if !ok {
		return 0, fmt.Errorf("unknown destination %q", destination)
	}
	r, err := h.pub.client.NewReceiverForQueue(queue, nil) // PeekLock
	if err != nil {
		return 0, err
	}
	defer r.Close(context.Background())
	n := 0
	for {
		msgs, err := receiveWithin(ctx, r, 16, harnessIdleWait)
		if err != nil {
			return n, err
		}
		if len(msgs) == 0 {
			return n, nil
		}
		for _, rm := range msgs {
			m, ours := h.toBusMessage(destination, rm)
			if !ours {
				if err := r.CompleteMessage(ctx, rm, nil); err != nil {
					return n, fmt.Errorf("drop a message of another run: %w", err)
				}
				continue
			}
			n++
			herr := hd(ctx, m)
			switch bus.Settle(herr, int(rm.DeliveryCount), harnessMaxDeliveryCount).Action {
			case bus.ActionComplete:
				err = r.CompleteMessage(ctx, rm, nil)
			case bus.ActionDeadLetter:
				reason := "MaxDeliveryCountExceeded"
				if automation.IsPermanent(herr) {
					reason = "DeadLetter"
				}
				err = r.DeadLetterMessage(ctx, rm, &azservicebus.DeadLetterOptions{
					Reason:             ptr(reason),
					ErrorDescription:   ptr(truncate(herr.Error())),
					PropertiesToModify: map[string]any{deliveryCountProperty: int64(rm.DeliveryCount)},
				})
			default:
				err = r.AbandonMessage(ctx, rm, nil)
			}
			if err != nil {
				return n, fmt.Errorf("settle %s: %w", m.ID, err)
			}
		}
	}
}

// DeadLetters peeks the dead-letter subqueue of destination (peeking neither locks nor
// removes), oldest first.
func (h *serviceBusHarness) DeadLetters(ctx context.Context, destination string) ([]bus.DeadLettered, error) {
	queue, ok := h.queues[destination]
	if !ok {
		return nil, fmt.Errorf("unknown destination %q", destination)
	}
	r, err := h.pub.client.NewReceiverForQueue(queue, &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if err != nil {
		return nil, err
	}
	defer r.Close(context.Background())
	var out []bus.DeadLettered
	from := int64(0)
	for {
		msgs, err := r.PeekMessages(ctx, 100, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &from})
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			return out, nil
		}
		for _, rm := range msgs {
			if rm.SequenceNumber != nil && *rm.SequenceNumber >= from {
				from = *rm.SequenceNumber + 1
			}
			m, ours := h.toBusMessage(destination, rm)
			if !ours {
				continue
			}
			if v, ok := rm.ApplicationProperties[deliveryCountProperty]; ok {
				if n, ok := v.(int64); ok {
					m.DeliveryCount = int(n)
				}
			}
			var reason []string
			for _, p := range []*string{rm.DeadLetterReason, rm.DeadLetterErrorDescription} {
				if p != nil && *p != "" {
					reason = append(reason, *p)
				}
			}
			out = append(out, bus.DeadLettered{Message: m, Reason: strings.Join(reason, ": ")})
		}
	}
}

// TestServiceBusConformance runs the shared bus suite against a real Service Bus
// namespace. There is no local Service Bus here, so it runs only when configured.
func TestServiceBusConformance(t *testing.T) {
	t.Parallel()
	conn := os.Getenv("AUTOMATION_SERVICEBUS_CONNECTION")
	if conn == "" {
		t.Skip("Service Bus not configured: run `ACCEPT_EULA=Y make test/azure` (the Service Bus emulator in Docker, with these queues), " +
			"or set AUTOMATION_SERVICEBUS_CONNECTION to a namespace connection string whose " +
			"queues bustest-a and bustest-b (or AUTOMATION_SERVICEBUS_TEST_QUEUES=first,second) exist with duplicate detection on, " +
			"no sessions, MaxDeliveryCount above 3, and serve nothing else (the suite empties them)")
	}
	queues := []string{bustest.DestinationA, bustest.DestinationB}
	if v := os.Getenv("AUTOMATION_SERVICEBUS_TEST_QUEUES"); v != "" {
		queues = strings.Split(v, ",")
		if len(queues) != 2 || strings.TrimSpace(queues[0]) == "" || strings.TrimSpace(queues[1]) == "" || queues[0] == queues[1] {
			t.Fatalf("AUTOMATION_SERVICEBUS_TEST_QUEUES=%q: want two different queue names separated by a comma", v)
		}
		queues[0], queues[1] = strings.TrimSpace(queues[0]), strings.TrimSpace(queues[1])
	}
	bustest.Run(t, func(t *testing.T) bustest.Harness { return newServiceBusHarness(t, conn, queues[0], queues[1]) })
}

// TestServiceBusHarnessMapping checks the harness's id and destination mapping offline, since
// the conformance run itself needs a namespace.
func TestServiceBusHarnessMapping(t *testing.T) {
	t.Parallel()
	h := &serviceBusHarness{queues: map[string]string{bustest.DestinationA: "real-a"}, prefix: "bustest-0011:"}
	body := []byte("body")
	rm := &azservicebus.ReceivedMessage{MessageID: "bustest-0011:m1", SessionID: ptr("s"), Body: body, DeliveryCount: 2}
	m, ours := h.toBusMessage(bustest.DestinationA, rm)
	want := bus.Message{ID: "m1", Destination: bustest.DestinationA, SessionID: "s", Body: body, DeliveryCount: 2}
	if !ours || m.ID != want.ID || m.Destination != want.Destination || m.SessionID != want.SessionID || !bytes.Equal(m.Body, body) || m.DeliveryCount != 2 {
		t.Errorf("toBusMessage = %+v, %v; want %+v, true", m, ours, want)
	}
	m.Body[0] = 'X'
	if string(rm.Body) != "body" {
		t.Errorf("the handler's body shares the received message's bytes")
	}
	if _, ours := h.toBusMessage(bustest.DestinationA, &azservicebus.ReceivedMessage{MessageID: "bustest-9999:m1"}); ours {
		t.Errorf("a message of another run was taken as ours")
	}
}

// The emulator's connection string, as `make test/azure` sets it (scripts/azure-stack.sh),
// is accepted by the publisher the app builds from AUTOMATION_SERVICEBUS_CONNECTION: the SDK
// reads UseDevelopmentEmulator=true (plain AMQP, no TLS) and needs the sb:// scheme for it.
// Nothing connects here; a malformed emulator string is refused at once.
func TestEmulatorConnectionStringParses(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../scripts/azure-stack.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^readonly SERVICEBUS_CONNECTION='([^']+)'$`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("scripts/azure-stack.sh: no SERVICEBUS_CONNECTION")
	}
	conn := string(m[1])
	if !strings.Contains(conn, "UseDevelopmentEmulator=true") || !strings.HasPrefix(conn, "Endpoint=sb://localhost;") {
		t.Fatalf("%q is not the emulator's local connection string", conn)
	}
	p, err := NewServiceBusPublisher(ServiceBusOptions{ConnectionString: conn})
	if err != nil {
		t.Fatalf("the emulator's connection string: %v", err)
	}
	_ = p.Close(context.Background())
	if _, err := NewServiceBusPublisher(ServiceBusOptions{ConnectionString: strings.Replace(conn, "sb://localhost", "localhost", 1)}); err == nil {
		t.Fatal("an emulator connection string without sb:// was accepted")
	}
}

// A traced message carries its context as the application properties traceparent,
// Diagnostic-Id and tracestate, which the Functions host hands back to the handler's
// invocation (funchost reads them); an untraced one carries none (the case above).
func TestToServiceBusMessageCarriesTraceContext(t *testing.T) {
	t.Parallel()
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	got, err := toServiceBusMessage(bus.Message{ID: "m", Destination: "q", TraceParent: tp, TraceState: "vendor=x"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"traceparent": tp, "Diagnostic-Id": tp, "tracestate": "vendor=x"}
	if fmt.Sprint(got.ApplicationProperties) != fmt.Sprint(want) {
		t.Fatalf("ApplicationProperties = %v, want %v", got.ApplicationProperties, want)
	}
}
