package publish_test

import (
	"context"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/publish"
	"github.com/automation-platform/automation/shared/topology"
)

func TestEventSetsIdentityAndRejectsBadInput(t *testing.T) {
	t.Parallel()
	b := bus.NewMemory(nil)
	var got []bus.Message
	b.Subscribe(topology.DomainEventsTopic, func(_ context.Context, m bus.Message) error { got = append(got, m); return nil })
	raw := []byte(`{"specversion":"1.0","id":"evt-1","source":"/hr","type":"PoliceVetting.Upserted","businessunitid":"bu","entitytype":"PoliceVetting","entityguid":"g-1","revision":1,"data":{}}`)
	if _, err := publish.Event(context.Background(), b, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Event(context.Background(), b, []byte(`{"id":"x"}`)); !automation.IsInvalid(err) {
		t.Fatalf("bad event: %v", err)
	}
	b.Drain(context.Background(), 0)
	if len(got) != 1 || got[0].ID != events.Identity("/hr", "evt-1") || got[0].SessionID != "g-1" || string(got[0].Body) != string(raw) {
		t.Fatalf("%+v", got)
	}
}

// Two producers may both send id "1" (CloudEvents: source + id identifies an event), so the
// broker MessageId derives from (source, id): with id alone, duplicate detection on the
// domain-events topic (Service Bus's, and bus.Memory's) silently dropped the second
// producer's event. A re-sent event (same source and id) is still one message.
func TestSameIDFromTwoSourcesIsTwoMessages(t *testing.T) {
	t.Parallel()
	b := bus.NewMemory(nil)
	var got []bus.Message
	b.Subscribe(topology.DomainEventsTopic, func(_ context.Context, m bus.Message) error { got = append(got, m); return nil })
	ev := func(source string) []byte {
		return []byte(`{"specversion":"1.0","id":"1","source":"` + source + `","type":"PoliceVetting.Upserted","businessunitid":"bu","entitytype":"PoliceVetting","entityguid":"g-1","revision":1,"data":{}}`)
	}
	for _, raw := range [][]byte{ev("/hr"), ev("/pos"), ev("/hr"), ev("/pos")} {
		if _, err := publish.Event(context.Background(), b, raw); err != nil {
			t.Fatal(err)
		}
	}
	b.Drain(context.Background(), 0)
	if len(got) != 2 || got[0].ID != events.Identity("/hr", "1") || got[1].ID != events.Identity("/pos", "1") {
		t.Fatalf("%d messages %+v, want one per (source, id)", len(got), got)
	}
}
