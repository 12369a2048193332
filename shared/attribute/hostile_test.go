package attribute_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// An event stamped far in the future (a producer's broken clock, or year 9999) would set
// LastEventOn, a streak's period and a timer there, and every real event after it would be
// "late": the customer's recently-viewed list, streak and timer frozen for good. A tracking
// message more than MaxFutureSkew ahead of the clock is refused (dead-lettered), writing
// nothing.
func TestFarFutureEventIsRefusedAndWritesNothing(t *testing.T) {
	e := newEnv(t) // the clock reads 2026-07-10T00:00:00Z
	list := `{"attribute_code":"recently_viewed","entity_type":"CUSTOMER","operation":"APPEND_UNIQUE","value":"SKU-9","max_items":5}`
	_, err := e.svc.Handle(context.Background(), payload("future-1", "bu-syd", "9999-12-31T23:59:59Z", list))
	if !automation.IsInvalid(err) || !strings.Contains(err.Error(), "timestamp") {
		t.Fatalf("err = %v, want a permanent error on timestamp", err)
	}
	_, err = e.svc.Handle(context.Background(), payload("future-2", "bu-syd", "2026-07-11T00:00:01Z", list))
	if !automation.IsInvalid(err) {
		t.Fatalf("err = %v, want a permanent error one second past the skew", err)
	}
	if got := e.value(t, "CUSTOMER", "CUST-001", "recently_viewed", time.Date(2026, 7, 10, 0, 0, 0, 0, time.UTC)); got != nil {
		t.Fatalf("recently_viewed = %v after a refused event", got)
	}
	// Within the skew it applies, and a later real event is not frozen out.
	e.handle(t, payload("near-1", "bu-syd", "2026-07-10T23:00:00Z", list))
	e.clock.Set(time.Date(2026, 7, 12, 0, 0, 0, 0, time.UTC))
	e.handle(t, payload("next-1", "bu-syd", "2026-07-11T12:00:00Z", strings.Replace(list, "SKU-9", "SKU-10", 1)))
	if got := e.value(t, "CUSTOMER", "CUST-001", "recently_viewed", time.Date(2026, 7, 12, 0, 0, 0, 0, time.UTC)); !reflect.DeepEqual(got, []string{"SKU-10", "SKU-9"}) {
		t.Fatalf("recently_viewed = %#v, want [SKU-10 SKU-9]", got)
	}
}

// A tracking message is bad input when an id or code is longer than its column (event id,
// entity id and attribute code 200, entity type 50 on SQL Server): permanent, naming the
// member, rather than a SQL error retried until the bus gives up.
func TestOverlongIdsArePermanent(t *testing.T) {
	e := newEnv(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	flag := func(typ, id, code string) string {
		return `{"attribute_code":"` + code + `","entity_type":"` + typ + `","target_entity_id":"` + id + `","operation":"SET_TRUE_ONCE"}`
	}
	for _, c := range []struct{ name, body, field string }{
		{"event id", string(payload(long(201), "bu-syd", "2026-07-07T00:00:00Z", flag("CUSTOMER", "c1", "f"))), "event_id"},
		{"entity type", string(payload("e-1", "bu-syd", "2026-07-07T00:00:00Z", flag(long(51), "c1", "f"))), "entity_type"},
		{"entity id", string(payload("e-2", "bu-syd", "2026-07-07T00:00:00Z", flag("CUSTOMER", long(201), "f"))), "target_entity_id"},
		{"attribute code", string(payload("e-3", "bu-syd", "2026-07-07T00:00:00Z", flag("CUSTOMER", "c1", long(201)))), "attribute_code"},
	} {
		_, err := e.svc.Handle(context.Background(), []byte(c.body))
		if !automation.IsInvalid(err) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want a permanent error on %s", c.name, err, c.field)
		}
	}
	e.handle(t, payload(long(200), "bu-syd", "2026-07-07T00:00:00Z", flag(long(50), long(200), long(200))))
}
