package deadletter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
)

// A dead letter is shown to a caller of the unit its body names; one naming no unit only to
// a caller of every unit; a requeue outside the scope is not found and changes nothing; the
// counts follow the same scope; without a box every call answers ErrNoBox.
func TestScopedListRequeueAndCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := bus.NewMemory(nil)
	for _, m := range []bus.Message{
		{ID: "a", Destination: "tracking", Body: []byte(`{"event_id":"a","business_unit_id":"bu-1"}`)},
		{ID: "b", Destination: "domain-events", Body: []byte(`{"id":"b","businessunitid":"bu-2"}`)},
		{ID: "c", Destination: "notification-dispatch", Body: []byte(`{"deliveryKey":"k"}`)},
		{ID: "d", Destination: "campaign-commands", Body: []byte(`not json`)},
	} {
		b.RecordDeadLetter(m, "refused "+m.ID)
	}
	s := &deadletter.Service{Box: b, Audit: newAudit()}
	ids := func(scope automation.Scope, p deadletter.ListParams) []string {
		items, _, err := s.List(ctx, scope, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			out = append(out, it.MessageID)
		}
		return out
	}
	if got := ids(automation.AllBusinessUnits(), deadletter.ListParams{Limit: 10}); len(got) != 4 {
		t.Fatalf("every unit: %v", got)
	}
	if got := ids(automation.BusinessUnits("bu-1"), deadletter.ListParams{Limit: 10}); len(got) != 1 || got[0] != "a" {
		t.Fatalf("bu-1: %v", got)
	}
	if got := ids(automation.AllBusinessUnits(), deadletter.ListParams{BusinessUnitID: "bu-2", Limit: 10}); len(got) != 1 || got[0] != "b" {
		t.Fatalf("bu-2 of every unit: %v", got)
	}
	if _, _, err := s.List(ctx, automation.BusinessUnits("bu-1"), deadletter.ListParams{BusinessUnitID: "bu-2"}); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("another unit's list: %v", err)
	}
	items, _, _ := s.List(ctx, automation.AllBusinessUnits(), deadletter.ListParams{Limit: 10})
	if items[3].BodyText != "not json" || items[3].Body != nil || string(items[0].Body) != `{"event_id":"a","business_unit_id":"bu-1"}` || items[0].BusinessUnitID != "bu-1" {
		t.Fatalf("bodies: %+v", items)
	}
	if _, err := s.Requeue(ctx, automation.BusinessUnits("bu-1"), deadletter.ActRequest{ID: items[1].ID, Operator: "jane", Reason: "fixed"}); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("requeue out of scope: %v", err)
	}
	if _, err := s.Requeue(ctx, automation.BusinessUnits("bu-1"), deadletter.ActRequest{ID: items[2].ID, Operator: "jane", Reason: "fixed"}); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("requeue of a unit-less dead letter by a unit's caller: %v", err)
	}
	if n := len(b.DeadLetters()); n != 4 {
		t.Fatalf("a refused requeue changed the list: %d", n)
	}
	counts, err := s.Counts(ctx, automation.BusinessUnits("bu-2"))
	if err != nil || len(counts) != 1 || counts[0] != (deadletter.Count{Destination: "domain-events", Count: 1}) {
		t.Fatalf("bu-2's counts: %+v %v", counts, err)
	}
	if _, err := s.Requeue(ctx, automation.AllBusinessUnits(), deadletter.ActRequest{ID: items[0].ID, Operator: "jane", Reason: "fixed"}); err != nil {
		t.Fatal(err)
	}
	if b.Len("tracking") != 1 || len(b.DeadLetters()) != 3 {
		t.Fatalf("after the requeue: queued %d, dead %d", b.Len("tracking"), len(b.DeadLetters()))
	}
	none := &deadletter.Service{}
	if _, _, err := none.List(ctx, automation.AllBusinessUnits(), deadletter.ListParams{}); !errors.Is(err, deadletter.ErrNoBox) {
		t.Fatalf("without a box: %v", err)
	}
}

// The in-process list is bounded (MaxDeadLetters): a dead letter pushed out of it no longer
// appears in the list, but it is counted, per route, as evicted, under the scope of the unit
// its body names (one naming no unit only for a caller of every unit), so nothing vanishes
// from the counts without a trace.
func TestEvictedDeadLettersAreCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := bus.NewMemory(&bus.MemoryOptions{MaxDeadLetters: 2, DeadLetterLabel: func(m bus.Message) string { return deadletter.BusinessUnitOf(m.Body) }})
	for _, m := range []bus.Message{
		{ID: "a", Destination: "tracking", Body: []byte(`{"business_unit_id":"bu-1"}`)},
		{ID: "b", Destination: "tracking", Body: []byte(`{"business_unit_id":"bu-2"}`)},
		{ID: "c", Destination: "campaign-commands", Body: []byte(`not json`)},
		{ID: "d", Destination: "tracking", Body: []byte(`{"business_unit_id":"bu-1"}`)},
		{ID: "e", Destination: "tracking", Body: []byte(`{"business_unit_id":"bu-1"}`)},
	} {
		b.RecordDeadLetter(m, "refused "+m.ID)
	}
	s := &deadletter.Service{Box: b}
	counts := func(scope automation.Scope) map[string][2]int {
		cs, err := s.Counts(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][2]int{}
		for _, c := range cs {
			out[c.Destination] = [2]int{c.Count, c.Evicted}
		}
		return out
	}
	all := counts(automation.AllBusinessUnits())
	if all["tracking"] != [2]int{2, 2} || all["campaign-commands"] != [2]int{0, 1} || len(all) != 2 {
		t.Fatalf("every unit: %v, want tracking 2 listed + 2 evicted, campaign-commands 1 evicted", all)
	}
	if got := counts(automation.BusinessUnits("bu-1")); got["tracking"] != [2]int{2, 1} || len(got) != 1 {
		t.Fatalf("bu-1: %v, want tracking 2 listed + 1 evicted", got)
	}
	if got := counts(automation.BusinessUnits("bu-2")); got["tracking"] != [2]int{0, 1} || len(got) != 1 {
		t.Fatalf("bu-2: %v, want tracking 1 evicted", got)
	}
}
