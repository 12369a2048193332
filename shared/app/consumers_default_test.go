package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/local"
)

// TestDefaultConsumersServeCampaignFactsOnTheirOwn: with the embedded runtime's default
// AUTOMATION_CONSUMER_CONCURRENCY, campaign-facts (the reporting projection) has a consumer
// of its own, so its messages are taken while the host's loop and tracking's own consumer
// are both busy with tracking batches (docs/performance.md, "campaign-facts: a consumer of
// its own"). Before, the facts were served only by the loop, one turn in its round, sat at
// their share of the bus for most of W6, and their rows counted in ingest's backpressure
// while no consumer was free to take them.
func TestDefaultConsumersServeCampaignFactsOnTheirOwn(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 8)
	release := make(chan struct{})
	facts := make(chan string, 1)
	r := funchost.NewRouter(nil)
	r.Register("Tracking", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		m, err := inv.ServiceBus("message")
		if err != nil {
			return funchost.Result{}, err
		}
		started <- m.MessageID
		<-release // a long tracking batch
		return funchost.Result{}, nil
	})
	r.Register("Facts", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		m, err := inv.ServiceBus("message")
		if err != nil {
			return funchost.Result{}, err
		}
		facts <- m.MessageID
		return funchost.Result{}, nil
	})
	defs := []funchost.FunctionDef{
		{Name: "Tracking", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, TopicName: "tracking"}},
		{Name: "Facts", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "campaign-facts"}},
	}
	b := bus.NewMemory(nil)
	h, err := local.NewHost(r, b, defs, func(string) (string, bool) { return "", false }, automation.SystemClock{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.SetConcurrency(cfg.ConsumerConcurrency)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx, time.Hour) }()
	defer func() { cancel(); <-done }()
	defer close(release)
	// tracking's consumers (the loop and tracking's own, tracking=2) each take a delivery of
	// a session of its own and hold it.
	n := cfg.ConsumerConcurrency["tracking"]
	if n < 1 {
		n = 1
	}
	for i := range n {
		if err := b.Publish(ctx, bus.Message{ID: fmt.Sprintf("t-%d", i), Destination: "tracking", SessionID: fmt.Sprintf("c-%d", i), Body: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	h.Wake()
	for range n {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the tracking deliveries did not start")
		}
	}
	if err := b.Publish(ctx, bus.Message{ID: "f-1", Destination: "campaign-facts", Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	h.Wake()
	select {
	case id := <-facts:
		if id != "f-1" {
			t.Fatalf("campaign-facts delivered %q, want f-1", id)
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("campaign-facts waited while tracking's consumers were busy: default concurrency %v gives it no consumer of its own", cfg.ConsumerConcurrency)
	}
}
