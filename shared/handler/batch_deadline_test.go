package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/topology"
)

// hostBatch builds a batch invocation of n messages in the host's shape (bodies and
// MessageIdArray each a JSON string holding a JSON array), message i with body "k{i}".
func hostBatch(t *testing.T, n int) *funchost.Invocation {
	t.Helper()
	bodies, ids, counts := make([]string, n), make([]string, n), make([]int, n)
	for i := range n {
		bodies[i], ids[i], counts[i] = fmt.Sprintf("k%d", i), fmt.Sprintf("m%d", i), 1
	}
	str := func(v any) json.RawMessage {
		inner, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outer, _ := json.Marshal(string(inner))
		return outer
	}
	return &funchost.Invocation{FunctionName: topology.NotificationDispatch, InvocationID: "inv-1", Request: &funchost.InvocationRequest{
		Data:     map[string]json.RawMessage{"message": str(bodies)},
		Metadata: map[string]json.RawMessage{funchost.MetaMessageIDArray: str(ids), funchost.MetaDeliveryCountArray: str(counts)},
	}}
}

// slowService is an idempotent service whose every chunk takes perChunk of the clock: a
// message whose key is already applied is a no-op (as a delivery's send claim finds its job
// Sent), and applied counts how often each key was really applied.
type slowService struct {
	clock    *automation.ManualClock
	perChunk time.Duration
	applied  map[string]int
	handled  int // messages handed over, no-ops included
}

func (s *slowService) handle(_ context.Context, msgs []bus.Message) []error {
	s.clock.Advance(s.perChunk)
	for _, m := range msgs {
		s.handled++
		if s.applied[string(m.Body)] == 0 {
			s.applied[string(m.Body)]++
		}
	}
	return make([]error, len(msgs))
}

// A batch slower than its deadline answers in time with what it finished: no chunk starts
// after Deps.BatchDeadline, the invocation fails so the host abandons (does not complete)
// the batch while its locks hold, and the redelivered batch applies the rest. Every
// message is applied exactly once across the two invocations; none is lost.
func TestBatchInvocationDeadline(t *testing.T) {
	t.Parallel()
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	svc := &slowService{clock: clock, perChunk: 50 * time.Second, applied: map[string]int{}}
	d := Deps{Clock: clock, Log: slog.New(slog.DiscardHandler), BatchDeadline: 90 * time.Second}
	n := topology.MaxMessageBatchSize // four chunks of BatchChunk

	start := clock.Now()
	_, err := d.batchInvocation(context.Background(), hostBatch(t, n), topology.NotificationDispatchQueue, "dispatch", svc.handle)
	if err == nil || !errors.Is(err, ErrBatchDeadline) {
		t.Fatalf("first invocation: %v, want a failure naming ErrBatchDeadline (the batch is abandoned, not completed)", err)
	}
	if automation.IntentOf(err) != automation.IntentRetryAfter {
		t.Errorf("a deadline is a RetryAfter (logged at INFO), got intent %v", automation.IntentOf(err))
	}
	// Chunks start at 0 s and 50 s; at 100 s the 90 s deadline has passed.
	if got, want := len(svc.applied), 2*BatchChunk; got != want {
		t.Fatalf("first invocation applied %d messages, want %d (two chunks before the deadline)", got, want)
	}
	if took := clock.Now().Sub(start); took >= topology.LockDuration {
		t.Fatalf("the invocation took %v, not under the lock duration %v", took, topology.LockDuration)
	}
	for i := 2 * BatchChunk; i < n; i++ {
		if svc.applied[fmt.Sprintf("k%d", i)] != 0 {
			t.Fatalf("message %d was started past the deadline", i)
		}
	}

	// The host redelivers the whole batch; a faster service finishes it.
	svc.perChunk = time.Second
	res, err := d.batchInvocation(context.Background(), hostBatch(t, n), topology.NotificationDispatchQueue, "dispatch", svc.handle)
	if err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if got := res.ReturnValue.(map[string]any)["messages"]; got != n {
		t.Errorf("redelivery answered for %v messages, want %d", got, n)
	}
	for i := range n {
		if c := svc.applied[fmt.Sprintf("k%d", i)]; c != 1 {
			t.Errorf("message %d applied %d times, want exactly once", i, c)
		}
	}
	if svc.handled != 2*BatchChunk+n {
		t.Errorf("%d messages handed over, want %d (the finished chunks again as no-ops, then all)", svc.handled, 2*BatchChunk+n)
	}
}

// The first chunk always runs, whatever the deadline, so an invocation makes progress; a
// zero BatchDeadline means topology.BatchDeadline.
func TestBatchInvocationDeadlineDefaults(t *testing.T) {
	t.Parallel()
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	svc := &slowService{clock: clock, perChunk: topology.BatchDeadline, applied: map[string]int{}}
	d := Deps{Clock: clock, Log: slog.New(slog.DiscardHandler)}
	_, err := d.batchInvocation(context.Background(), hostBatch(t, 2*BatchChunk), topology.NotificationDispatchQueue, "dispatch", svc.handle)
	if !errors.Is(err, ErrBatchDeadline) || len(svc.applied) != BatchChunk {
		t.Fatalf("%v, %d applied: want the first chunk applied and the default deadline (%v) to stop the second", err, len(svc.applied), topology.BatchDeadline)
	}
	svc = &slowService{clock: clock, perChunk: topology.BatchDeadline - time.Second, applied: map[string]int{}}
	if _, err := d.batchInvocation(context.Background(), hostBatch(t, 2*BatchChunk), topology.NotificationDispatchQueue, "dispatch", svc.handle); err != nil || len(svc.applied) != 2*BatchChunk {
		t.Fatalf("%v, %d applied: a batch within the deadline is handled whole", err, len(svc.applied))
	}
}

// The configured default is topology.BatchDeadline, half the entities' lock duration.
func TestBatchDeadlineConfigDefault(t *testing.T) {
	t.Parallel()
	for _, s := range config.Settings {
		if s.Name == "AUTOMATION_BATCH_DEADLINE_SECONDS" {
			if s.Default != strconv.Itoa(int(topology.BatchDeadline/time.Second)) {
				t.Fatalf("AUTOMATION_BATCH_DEADLINE_SECONDS defaults to %s, topology.BatchDeadline is %v", s.Default, topology.BatchDeadline)
			}
			return
		}
	}
	t.Fatal("no AUTOMATION_BATCH_DEADLINE_SECONDS setting")
}

// rateService is an idempotent service whose chunk takes perMessage of the clock per
// message; chunks records each chunk's size.
type rateService struct {
	clock      *automation.ManualClock
	perMessage time.Duration
	chunks     []int
}

func (s *rateService) handle(_ context.Context, msgs []bus.Message) []error {
	s.clock.Advance(time.Duration(len(msgs)) * s.perMessage)
	s.chunks = append(s.chunks, len(msgs))
	return make([]error, len(msgs))
}

// The dispatch and the delivery facts grow their chunks (growChunk): a fast batch of 100
// is a chunk of BatchChunk and then the rest in one (two send claims where four chunks made
// four; in the 09:00 herd 4,000 claims of 25 for 100,000 deliveries), and a slow one keeps
// chunks of BatchChunk, each started before the deadline. Every other batch function keeps
// chunks of BatchChunk.
func TestDispatchAndFactsChunksGrowWhenFast(t *testing.T) {
	t.Parallel()
	for _, dest := range []string{topology.NotificationDispatchQueue, topology.DeliveryFactsTopic, topology.TrackingTopic} {
		clock := automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
		svc := &rateService{clock: clock, perMessage: time.Millisecond}
		d := Deps{Clock: clock, Log: slog.New(slog.DiscardHandler), BatchDeadline: 90 * time.Second}
		call := func() error {
			_, err := d.batchInvocation(context.Background(), hostBatch(t, topology.MaxMessageBatchSize), dest, "batch", svc.handle)
			return err
		}
		if err := call(); err != nil {
			t.Fatalf("%s: %v", dest, err)
		}
		want := []int{BatchChunk, topology.MaxMessageBatchSize - BatchChunk}
		if dest == topology.TrackingTopic {
			want = []int{BatchChunk, BatchChunk, BatchChunk, BatchChunk}
		}
		if fmt.Sprint(svc.chunks) != fmt.Sprint(want) {
			t.Errorf("%s, fast: chunks %v, want %v", dest, svc.chunks, want)
		}
		// 2 s a message: the first chunk takes 50 s of the 90 s; the next is not grown.
		svc.chunks, svc.perMessage = nil, 2*time.Second
		if err := call(); !errors.Is(err, ErrBatchDeadline) {
			t.Fatalf("%s, slow: %v, want ErrBatchDeadline", dest, err)
		}
		if want := []int{BatchChunk, BatchChunk}; fmt.Sprint(svc.chunks) != fmt.Sprint(want) {
			t.Errorf("%s, slow: chunks %v, want %v", dest, svc.chunks, want)
		}
	}
	// A grown chunk is at most topology.MaxMessageBatchSize (a crash mid-claim leaves at
	// most that many claims in doubt), whatever batch the embedded bus hands over.
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	svc := &rateService{clock: clock, perMessage: time.Millisecond}
	d := Deps{Clock: clock, Log: slog.New(slog.DiscardHandler), BatchDeadline: 90 * time.Second}
	if _, err := d.batchInvocation(context.Background(), hostBatch(t, 300), topology.NotificationDispatchQueue, "dispatch", svc.handle); err != nil {
		t.Fatal(err)
	}
	if want := []int{BatchChunk, 100, 100, 75}; fmt.Sprint(svc.chunks) != fmt.Sprint(want) {
		t.Errorf("a fast batch of 300: chunks %v, want %v", svc.chunks, want)
	}
}
