package app_test

import (
	"context"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
)

// The embedded host hands DeliveryFactProjection the facts waiting at once (cardinality
// "many", as NotificationDispatch): 30 deliveries' 60 facts come in far fewer invocations
// than facts, each answered 200; a malformed fact in a batch is dead-lettered alone and its
// batch-mates are applied; the projection counts every delivery once.
func TestEmbeddedHostProjectsFactsInBatches(t *testing.T) {
	t.Parallel()
	const n = 30
	e := newBatchEnv(t, n, nil)
	ctx := context.Background()
	inner, most := e.rt.Memory.BatchHandler(topology.DeliveryFactsTopic)
	if inner == nil || most != topology.MaxMessageBatchSize {
		t.Fatalf("DeliveryFactProjection is not a batch consumer of the in-process bus (max %d)", most)
	}
	var mu sync.Mutex
	var sizes []int
	var answers []error
	bad := true
	e.rt.Memory.SubscribeBatch(topology.DeliveryFactsTopic, most, func(ctx context.Context, ms []bus.Message) error {
		mu.Lock()
		if bad {
			bad = false
			ms = append([]bus.Message{{ID: "bad-fact", Destination: topology.DeliveryFactsTopic, Body: []byte(`{"eventId":7}`), DeliveryCount: 1}}, ms...)
		}
		mu.Unlock()
		err := inner(ctx, ms)
		mu.Lock()
		sizes, answers = append(sizes, len(ms)), append(answers, err)
		mu.Unlock()
		return err
	})
	if _, err := e.rt.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, s := range sizes {
		total += s
		if answers[i] != nil {
			t.Fatalf("invocation %d answered %v", i, answers[i])
		}
	}
	if total != 2*n+1 || len(sizes) >= n {
		t.Fatalf("%d facts in %d invocations (%v); want %d in fewer than %d", total, len(sizes), sizes, 2*n+1, n)
	}
	if _, err := e.rt.Trace.GetBlob(ctx, trace.DeadLetterBlobName(topology.DeliveryFactProjection, "bad-fact")); err != nil {
		t.Fatalf("dead-letter record of the malformed fact: %v", err)
	}
	counts, err := e.rt.Store.DeliveryCountsByDay(ctx, store.DeliveryCountsParams{BusinessUnitID: "bu-syd", From: "2026-10-01", To: "2026-10-01"})
	if err != nil || len(counts.Days) != 1 || counts.Days[0].Sent != n {
		t.Fatalf("projection %+v (%v); want %d sent on 2026-10-01", counts, err, n)
	}
}
