package azure

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/telemetry"
)

// Service Bus limits on message properties the publisher checks before sending, so a bad
// message fails with a clear error instead of a broker rejection.
const (
	maxServiceBusMessageID = 128
	maxServiceBusSessionID = 128
)

// ServiceBusOptions configure NewServiceBusPublisher: either ConnectionString (a namespace
// connection string with a SharedAccessKey or SharedAccessSignature), or Namespace (the
// fully qualified "{name}.servicebus.windows.net") with Credential (managed identity, see
// NewCredential), not both.
type ServiceBusOptions struct {
	ConnectionString string
	Namespace        string
	Credential       azcore.TokenCredential
}

// ServiceBusPublisher implements bus.Publisher on Azure Service Bus. Each message is sent
// with MessageId = Message.ID (so the entity's duplicate detection drops a republished
// outbox row), SessionId = Message.SessionID when set, and the body bytes, to the queue or
// topic named by Message.Destination. Publish returns after the broker accepted the message.
//
// One Sender per destination is created on first use and cached; Close closes them and the
// connection. Safe for concurrent use.
type ServiceBusPublisher struct {
	client *azservicebus.Client

	mu      sync.Mutex
	senders map[string]*azservicebus.Sender
	closed  bool
}

var _ bus.Publisher = (*ServiceBusPublisher)(nil)

// NewServiceBusPublisher validates opts and creates the client. It does not connect:
// the first Publish does.
func NewServiceBusPublisher(opts ServiceBusOptions) (*ServiceBusPublisher, error) {
	client, err := newServiceBusClient(opts)
	if err != nil {
		return nil, err
	}
	return &ServiceBusPublisher{client: client, senders: map[string]*azservicebus.Sender{}}, nil
}

func newServiceBusClient(opts ServiceBusOptions) (*azservicebus.Client, error) {
	byCredential := opts.Namespace != "" || opts.Credential != nil
	switch {
	case opts.ConnectionString != "" && byCredential:
		return nil, errors.New("azure service bus: set either ConnectionString or Namespace and Credential, not both")
	case opts.ConnectionString != "":
		c, err := azservicebus.NewClientFromConnectionString(opts.ConnectionString, nil)
		if err != nil {
			return nil, fmt.Errorf("azure service bus: connection string: %w", err)
		}
		return c, nil
	case byCredential:
		if opts.Namespace == "" || opts.Credential == nil {
			return nil, errors.New("azure service bus: Namespace and Credential are both required without a ConnectionString")
		}
		c, err := azservicebus.NewClient(opts.Namespace, opts.Credential, nil)
		if err != nil {
			return nil, fmt.Errorf("azure service bus: namespace %s: %w", opts.Namespace, err)
		}
		return c, nil
	}
	return nil, errors.New("azure service bus: no namespace: set ConnectionString, or Namespace and Credential")
}

// toServiceBusMessage maps a bus.Message to what is sent. DeliveryCount is the broker's
// business and is not sent; the body is copied so the caller may reuse its slice at once.
func toServiceBusMessage(m bus.Message) (*azservicebus.Message, error) {
	switch {
	case m.ID == "" || m.Destination == "":
		return nil, fmt.Errorf("azure service bus: message needs an ID and a Destination (ID %q, Destination %q)", m.ID, m.Destination)
	case len(m.ID) > maxServiceBusMessageID:
		return nil, fmt.Errorf("azure service bus: message ID %q is longer than %d characters", m.ID, maxServiceBusMessageID)
	case len(m.SessionID) > maxServiceBusSessionID:
		return nil, fmt.Errorf("azure service bus: message %s: SessionID longer than %d characters", m.ID, maxServiceBusSessionID)
	}
	id := m.ID
	out := &azservicebus.Message{MessageID: &id, Body: append([]byte{}, m.Body...)}
	if m.SessionID != "" {
		session := m.SessionID
		out.SessionID = &session
	}
	// Trace context as the application properties traceparent, Diagnostic-Id (the name the
	// Azure SDKs and Application Insights read) and tracestate: the handler's invocation
	// reads them back from the trigger's ApplicationProperties (funchost).
	out.ApplicationProperties = telemetry.Properties(m.TraceParent, m.TraceState)
	return out, nil
}

// sender returns the cached Sender of destination, creating it on first use.
func (p *ServiceBusPublisher) sender(destination string) (*azservicebus.Sender, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("azure service bus: publisher is closed")
	}
	if s, ok := p.senders[destination]; ok {
		return s, nil
	}
	s, err := p.client.NewSender(destination, nil)
	if err != nil {
		return nil, fmt.Errorf("azure service bus: sender for %s: %w", destination, err)
	}
	p.senders[destination] = s
	return s, nil
}

// Publish implements bus.Publisher.
func (p *ServiceBusPublisher) Publish(ctx context.Context, m bus.Message) error {
	if m.TraceParent == "" && telemetry.Enabled() {
		m.TraceParent, m.TraceState = telemetry.Inject(ctx)
	}
	msg, err := toServiceBusMessage(m)
	if err != nil {
		return err
	}
	s, err := p.sender(m.Destination)
	if err != nil {
		return err
	}
	if err := s.SendMessage(ctx, msg, nil); err != nil {
		return fmt.Errorf("azure service bus: publish %s to %s: %w", m.ID, m.Destination, err)
	}
	return nil
}

// Close closes every cached Sender and the connection. Publish fails after Close.
func (p *ServiceBusPublisher) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	senders := p.senders
	p.senders = nil
	p.mu.Unlock()

	var errs []error
	for dest, s := range senders {
		if err := s.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("azure service bus: close sender %s: %w", dest, err))
		}
	}
	if err := p.client.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("azure service bus: close: %w", err))
	}
	return errors.Join(errs...)
}
