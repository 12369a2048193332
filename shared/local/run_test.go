package local_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/local"
)

// TestRunWithConsumersPerDestination: with SetConcurrency, Run's extra consumers and its own
// loop deliver every message of a destination once, each session's in publish order, and a
// Wake delivers at once rather than at the next interval (an hour here).
func TestRunWithConsumersPerDestination(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string][]string{}
	r := funchost.NewRouter(nil)
	r.Register("Consume", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		m, err := inv.ServiceBus("message")
		if err != nil {
			return funchost.Result{}, err
		}
		mu.Lock()
		got[m.SessionID] = append(got[m.SessionID], m.MessageID)
		mu.Unlock()
		return funchost.Result{}, nil
	})
	defs := []funchost.FunctionDef{{Name: "Consume", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, TopicName: "t"}}}
	b := bus.NewMemory(nil)
	h, err := local.NewHost(r, b, defs, func(string) (string, bool) { return "", false }, automation.SystemClock{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.SetConcurrency(map[string]int{"t": 3, "unknown": 4})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx, time.Hour) }()
	const sessions, per = 8, 25
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			for s := 0; s < sessions; s++ {
				if err := b.Publish(ctx, bus.Message{ID: fmt.Sprintf("s%d-%03d", s, i), Destination: "t", SessionID: fmt.Sprintf("s%d", s), Body: []byte("{}")}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	wait := func(n int) {
		deadline := time.Now().Add(10 * time.Second)
		for b.Len("t") > 0 || count(&mu, got) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d delivered after a Wake", count(&mu, got), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	publish(0, per/2)
	h.Wake()
	wait(sessions * (per / 2))
	time.Sleep(20 * time.Millisecond) // every consumer is waiting now (the interval is an hour)
	publish(per/2, per)
	h.Wake()
	wait(sessions * per)
	cancel()
	<-done
	for s, ids := range got {
		for i, id := range ids {
			if want := fmt.Sprintf("%s-%03d", s, i); id != want {
				t.Fatalf("session %s: message %d is %s, want %s (%v)", s, i, id, want, ids)
			}
		}
	}
}

func count(mu *sync.Mutex, got map[string][]string) int {
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, ids := range got {
		n += len(ids)
	}
	return n
}

// TestRunDeliversWhileATimerRuns: a timer invocation that runs long (a DueWorkPoller draining
// a herd) does not hold up the consumers: the message it publishes is delivered while it
// still runs, and Run stops cleanly after it returns.
func TestRunDeliversWhileATimerRuns(t *testing.T) {
	t.Parallel()
	b := bus.NewMemory(nil)
	delivered := make(chan string, 1)
	seen := make(chan bool, 1)
	fired := 0
	r := funchost.NewRouter(nil)
	r.Register("Tick", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		if fired++; fired > 1 {
			return funchost.Result{}, nil
		}
		if err := b.Publish(ctx, bus.Message{ID: "m-1", Destination: "q", Body: []byte("{}")}); err != nil {
			return funchost.Result{}, err
		}
		select { // the timer runs on until its message was delivered (or 10 s pass)
		case id := <-delivered:
			seen <- id == "m-1"
		case <-time.After(10 * time.Second):
			seen <- false
		}
		return funchost.Result{}, nil
	})
	r.Register("Consume", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		m, err := inv.ServiceBus("message")
		if err != nil {
			return funchost.Result{}, err
		}
		delivered <- m.MessageID
		return funchost.Result{}, nil
	})
	defs := []funchost.FunctionDef{
		{Name: "Tick", Trigger: funchost.BindingDef{Name: "timer", Type: funchost.TriggerTimer, Schedule: "0 0 * * * *"}},
		{Name: "Consume", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "q"}},
	}
	clock := automation.NewManualClock(time.Date(2026, 9, 30, 22, 59, 59, 0, time.UTC))
	h, err := local.NewHost(r, b, defs, func(string) (string, bool) { return "", false }, clock, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC)) // the hourly timer is due
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx, 5*time.Millisecond) }()
	if !<-seen {
		t.Fatal("the message published by a running timer was not delivered until the timer returned")
	}
	cancel()
	<-done
}

// TestRunServesADestinationBehindABusyOne: Run's own loop, the one consumer of a destination
// without extra consumers, serves the destinations in turn. Destination "a" was published to
// first and is never empty (each delivery publishes the next message, as a busy upstream
// stage does); the message on "b" is still delivered at once. Before, the loop took "a"
// for as long as it had a message and "b" waited (issue 39: campaign-results behind events
// and campaign-commands).
func TestRunServesADestinationBehindABusyOne(t *testing.T) {
	t.Parallel()
	b := bus.NewMemory(nil)
	lateDone := make(chan struct{})
	var seq int
	r := funchost.NewRouter(nil)
	r.Register("Early", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		seq++ // one consumer of "a": Run's loop
		return funchost.Result{}, b.Publish(ctx, bus.Message{ID: fmt.Sprintf("a%d", seq), Destination: "a", Body: []byte("{}")})
	})
	r.Register("Late", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		close(lateDone)
		return funchost.Result{}, nil
	})
	defs := []funchost.FunctionDef{
		{Name: "Early", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "a"}},
		{Name: "Late", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "b"}},
	}
	h, err := local.NewHost(r, b, defs, func(string) (string, bool) { return "", false }, automation.SystemClock{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, m := range []bus.Message{{ID: "a0", Destination: "a"}, {ID: "b0", Destination: "b"}} {
		m.Body = []byte("{}")
		if err := b.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx, time.Hour) }()
	select {
	case <-lateDone:
	case <-time.After(5 * time.Second):
		t.Error("the message on b was not delivered while a stayed busy")
	}
	cancel()
	<-done
}

// TestSetBatchSize: a batch function (cardinality many) takes at most the size set for its
// destination, and a destination not named keeps topology.MaxMessageBatchSize; a one-message
// destination is left alone.
func TestSetBatchSize(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	sizes := map[string][]int{}
	r := funchost.NewRouter(nil)
	for _, name := range []string{"Small", "Default"} {
		r.Register(name, func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
			items, err := inv.ServiceBusBatch("message")
			if err != nil {
				return funchost.Result{}, err
			}
			mu.Lock()
			sizes[name] = append(sizes[name], len(items))
			mu.Unlock()
			return funchost.Result{}, nil
		})
	}
	r.Register("One", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		_, err := inv.ServiceBus("message")
		return funchost.Result{}, err
	})
	many := func(name, queue string) funchost.FunctionDef {
		return funchost.FunctionDef{Name: name, Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: queue,
			Cardinality: funchost.CardinalityMany}}
	}
	defs := []funchost.FunctionDef{many("Small", "small"), many("Default", "default"),
		{Name: "One", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "one"}}}
	b := bus.NewMemory(nil)
	h, err := local.NewHost(r, b, defs, func(string) (string, bool) { return "", false }, automation.SystemClock{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.SetBatchSize(map[string]int{"small": 3, "one": 5, "unknown": 2})
	ctx := context.Background()
	for i := 0; i < 150; i++ {
		for _, d := range []string{"small", "default", "one"} {
			if i >= 7 && d == "small" {
				continue
			}
			if err := b.Publish(ctx, bus.Message{ID: fmt.Sprintf("%s-%d", d, i), Destination: d, Body: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := h.RunDue(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(sizes["Small"]); got != "[3 3 1]" {
		t.Errorf("small batches %s, want [3 3 1]", got)
	}
	if got := fmt.Sprint(sizes["Default"]); got != "[100 50]" {
		t.Errorf("default batches %s, want [100 50]", got)
	}
	if h, _ := b.BatchHandler("one"); h != nil || b.Len("one") != 0 {
		t.Errorf("the one-message destination got a batch handler, or kept %d messages", b.Len("one"))
	}
}
