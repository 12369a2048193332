package console_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// lateVisit is a tracking message of a business unit that does not exist yet: the attribute
// engine refuses it and it is dead-lettered, until the unit is created and it is requeued.
const lateVisit = `{"event_id":"late-1","source_event":"Visit","customer_id":"C1","business_unit_id":"bu-late","timestamp":"2026-10-05T09:00:00Z",
  "instructions":[{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"visits","operation":"INCREMENT"}]}`

// deadLetterFixture subscribes the functions to the in-process bus (no timers) and
// dead-letters lateVisit through them: the real consumer refuses it.
func (e *env) deadLetterFixture(t *testing.T) deadletter.Item {
	t.Helper()
	ctx := context.Background()
	if _, err := e.rt.LocalHost("../../../functions", e.cfg, false, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.Memory.Publish(ctx, bus.Message{ID: "late-1:tracking", Destination: topology.TrackingTopic, SessionID: "C1", Body: []byte(lateVisit)}); err != nil {
		t.Fatal(err)
	}
	e.drain(t)
	items, _, err := e.rt.DeadLetters.List(ctx, automation.AllBusinessUnits(), deadletter.ListParams{BusinessUnitID: "bu-late", Limit: 10})
	if err != nil || len(items) != 1 {
		t.Fatalf("the fixture's dead letter: %+v %v", items, err)
	}
	return items[0]
}

func (e *env) drain(t *testing.T) {
	t.Helper()
	if _, err := e.rt.Memory.Drain(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

// visits is C1's visits counter in bu-late ("" when it has none).
func (e *env) visits(t *testing.T) string {
	t.Helper()
	rows, err := e.rt.Store.AttributeList(context.Background(), store.AttributeEntity{BusinessUnitID: "bu-late", EntityType: "CUSTOMER", EntityID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.AttributeCode == "visits" {
			return r.ValueText
		}
	}
	return ""
}
