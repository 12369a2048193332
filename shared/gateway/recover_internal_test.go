package gateway

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// A panic inside one event's validation (here a schema format that panics, as the schema
// library's big.Rat did on 1e1000001) rejects that event alone: the request does not fail,
// and the batch's other events are accepted and written (issue 33, item 3).
func TestPanicInValidationFailsOnlyThatEvent(t *testing.T) {
	ctx := context.Background()
	st := sqlitetest.Open(t)
	if err := st.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "bu-1", TimeZoneID: "UTC"}); err != nil {
		t.Fatal(err)
	}
	compile := func(schema string) *jsonschema.Schema {
		c := newCompiler()
		c.RegisterFormat(&jsonschema.Format{Name: "boom", Validate: func(v any) error {
			if s, ok := v.(string); ok && s == "boom" {
				panic("a schema library bug")
			}
			return nil
		}})
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(schema)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("urn:t", doc); err != nil {
			t.Fatal(err)
		}
		return c.MustCompile("urn:t")
	}
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	reg := &Registry{Version: 1, byType: map[string]*Compiled{"Boom": {
		Definition: Definition{EventType: "Boom", Class: ClassDirect, Routes: []string{RouteEvents}}, Version: 1,
		schema: compile(`{"type":"object","properties":{"s":{"type":"string","format":"boom"}}}`)}}}
	cache := &Cache{Store: st, Clock: clock, cur: reg, checkedAt: clock.Now()}
	svc := &Service{Store: st, Registry: cache, Clock: clock, Metrics: NewMetrics()}
	raw := func(id, s string) events.Raw {
		return events.Raw{JSON: []byte(`{"specversion":"1.0","id":"` + id + `","source":"/app","type":"Boom","businessunitid":"bu-1","customerid":"C-1","data":{"s":"` + s + `"}}`)}
	}
	res, err := svc.Ingest(ctx, automation.AllBusinessUnits(), []events.Raw{raw("a", "fine"), raw("b", "boom"), raw("c", "fine")})
	if err != nil {
		t.Fatalf("one panicking event failed the request: %v", err)
	}
	if res[0].Status != StatusAccepted || res[2].Status != StatusAccepted {
		t.Fatalf("the other events: %+v", res)
	}
	if res[1].Status != StatusRejected || res[1].Index != 1 || res[1].ID != "b" || !strings.Contains(res[1].Reason, "could not be checked") {
		t.Fatalf("the panicking event: %+v", res[1])
	}
	rows, err := st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10})
	if err != nil || len(rows) != 2 {
		t.Fatalf("outbox: %d rows, %v; want the two accepted events", len(rows), err)
	}
	// The domain-events path has the same boundary: a rejection, not a crash.
	r, err := svc.Consume(ctx, raw("d", "boom"), func(context.Context, []byte) error { return nil })
	if !automation.IsInvalid(err) || r.Status != StatusRejected {
		t.Fatalf("Consume: %+v %v, want a permanent rejection", r, err)
	}
}
