package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
)

// Everything a later stage would refuse an event for is refused at ingest, per event, with
// a pointer (issue 33, items 1, 3 and 11): a business unit that does not exist, a time more
// than a day ahead (the attribute engine's bound), an id with a control character, a number
// out of range. The valid events of the same batch are accepted, and only they write rows.
func TestIngestRefusesWhatWouldBeDeadLettered(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now()
	ahead := now.Add(24*time.Hour + time.Second).Format(time.RFC3339)
	within := now.Add(23 * time.Hour).Format(time.RFC3339)
	raws := []events.Raw{
		ce("ok-1", "ViewItem", `{"itemId":"SKU-1"}`),
		ceUnit("typo-unit", "ViewItem", `{"itemId":"SKU-1"}`, "bu-11"),
		ce("future", "ViewItem", `{"itemId":"SKU-1"}`, "time", `"`+ahead+`"`),
		ce("nul\u0000id", "ViewItem", `{"itemId":"SKU-1"}`),
		ce("tab\tid", "ViewItem", `{"itemId":"SKU-1"}`),
		ce("huge", "ViewItem", `{"itemId":"SKU-1","n":1e1000001}`),
		ce("ok-2", "ViewItem", `{"itemId":"SKU-2"}`, "time", `"`+within+`"`),
	}
	raws[3] = events.Raw{JSON: []byte(strings.Replace(string(raws[3].JSON), "nul\u0000id", `nul\u0000id`, 1))}
	raws[4] = events.Raw{JSON: []byte(strings.Replace(string(raws[4].JSON), "tab\tid", `tab\tid`, 1))}
	res, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), raws)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ status, pointer, reason string }{
		{"accepted", "", ""},
		{"rejected", "/businessunitid", `business unit "bu-11" not found`},
		{"rejected", "/time", "ahead of now"},
		{"rejected", "/id", "control characters"},
		{"rejected", "/id", "control characters"},
		{"rejected", "/data/n", "out of range"},
		{"accepted", "", ""},
	}
	for i, w := range want {
		if res[i].Status != w.status || res[i].Pointer != w.pointer || !strings.Contains(res[i].Reason, w.reason) {
			t.Errorf("event %d: %+v, want %s at %q with %q", i, res[i], w.status, w.pointer, w.reason)
		}
	}
	if n := len(e.outbox(t)); n != 2 {
		t.Fatalf("%d outbox rows, want the two accepted events' tracking rows", n)
	}
	// A registered type's rejection after its type is known (its time, its data) counts under
	// its type; only the unit typo and the unreadable ids go to the "" bucket.
	for _, c := range e.svc.Metrics.Snapshot(automation.AllBusinessUnits()) {
		if c.EventType == "ViewItem" && (c.Accepted != 2 || c.Rejected != 2) {
			t.Errorf("ViewItem counts %+v, want 2 accepted and 2 rejected (the future time, the huge number)", c)
		}
	}
}

// A number the schema library cannot take (big.Rat gives up beyond an exponent of 10^6 and
// panicked; just under it costs tens of ms) is refused on its own, naming its pointer, even
// for a type whose schema has minimum/maximum/multipleOf; the batch's other events are
// accepted, and the answer is not an error (the client would retry it forever).
func TestAbsurdNumberFailsOnlyItsEvent(t *testing.T) {
	e := newEnv(t)
	def := `{"eventType":"Purchase","class":"DIRECT","schema":{"type":"object","properties":{
	  "amount":{"type":"number","minimum":0,"maximum":1e9,"multipleOf":0.01},"qty":{"type":"integer","exclusiveMinimum":0}}}}`
	if _, err := e.admin.Save(context.Background(), gateway.SaveParams{EventType: "Purchase", Definition: []byte(def), Operator: "jane"}); err != nil {
		t.Fatal(err)
	}
	var raws []events.Raw
	bad := []string{"1e1000001", "-1e1000001", "1e-1000001", "1e999999", "1e401", "1" + strings.Repeat("0", 400), "0." + strings.Repeat("0", 120) + "1"}
	for i, n := range bad {
		raws = append(raws, ce(fmt.Sprintf("bad-%d", i), "Purchase", `{"amount":`+n+`,"qty":1}`))
	}
	raws = append(raws, ce("good", "Purchase", `{"amount":12.5,"qty":2}`), ce("edge", "Purchase", `{"amount":1e2,"qty":1E+2}`))
	res, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), raws)
	if err != nil {
		t.Fatalf("the batch failed as a whole: %v", err)
	}
	for i := range bad {
		if res[i].Status != "rejected" || res[i].Pointer != "/data/amount" || !strings.Contains(res[i].Reason, "out of range") {
			t.Errorf("%s: %+v, want rejected at /data/amount as out of range", bad[i], res[i])
		}
	}
	for _, r := range res[len(bad):] {
		if r.Status != "accepted" {
			t.Errorf("%s: %+v, want accepted", r.ID, r)
		}
	}
}

// A data schema whose keywords hold a number the schema library cannot handle is refused
// when it is saved, naming the keyword (it was saved and then silently not enforced).
func TestSchemaWithAbsurdNumberRefusedAtSave(t *testing.T) {
	ck := gateway.Checker{}
	for _, c := range []struct{ schema, pointer string }{
		{`{"type":"number","minimum":1e99999999}`, "/schema/minimum"},
		{`{"type":"number","maximum":-1e1000001}`, "/schema/maximum"},
		{`{"properties":{"a":{"exclusiveMinimum":1e500}}}`, "/schema/properties/a/exclusiveMinimum"},
		{`{"properties":{"a":{"exclusiveMaximum":1e500}}}`, "/schema/properties/a/exclusiveMaximum"},
		{`{"properties":{"a":{"multipleOf":1e-500}}}`, "/schema/properties/a/multipleOf"},
	} {
		_, err := ck.CheckDefinition([]byte(`{"eventType":"E","class":"DIRECT","schema":` + c.schema + `}`))
		var r *gateway.Refusal
		if !errors.As(err, &r) || r.Pointer != c.pointer || !strings.Contains(r.Reason, "out of range") {
			t.Errorf("%s: %v, want a refusal at %s", c.schema, err, c.pointer)
		}
	}
}

// The gateway's metrics stay bounded however many made-up business units are sent: an
// unknown unit counts in the one "" bucket (issue 33, item 4).
func TestMetricsBoundedUnderMadeUpUnits(t *testing.T) {
	e := newEnv(t)
	for round := 0; round < 20; round++ {
		var raws []events.Raw
		for i := 0; i < events.MaxBatchEvents; i++ {
			unit := fmt.Sprintf("made-up-%d-%d-%s", round, i, strings.Repeat("u", 150))
			raws = append(raws, ceUnit(fmt.Sprintf("x-%d-%d", round, i), "ViewItem", `{"itemId":"a"}`, unit))
		}
		if _, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), raws); err != nil {
			t.Fatal(err)
		}
	}
	// Out of the caller's scope counts there too.
	if _, err := e.svc.Ingest(context.Background(), automation.BusinessUnits("bu-2"), []events.Raw{ce("y", "ViewItem", `{"itemId":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	if n := e.svc.Metrics.Len(); n > 1 {
		t.Fatalf("%d metric keys after 10,001 events of made-up or out-of-scope units, want the one unknown bucket", n)
	}
	counts := e.svc.Metrics.Snapshot(automation.AllBusinessUnits())
	if len(counts) != 1 || counts[0].Rejected != 10_001 || counts[0].EventType != "" {
		t.Fatalf("counts = %+v, want 10,001 rejections under the unknown bucket", counts)
	}
	// Callers of one unit never see the unknown bucket.
	if c := e.svc.Metrics.Snapshot(automation.BusinessUnits("bu-1")); len(c) != 0 {
		t.Fatalf("a unit's caller sees %+v", c)
	}
}

// The per-key bound itself: past MaxMetricKeys distinct keys, counts go to the overflow
// bucket and the map stops growing.
func TestMetricsMapBound(t *testing.T) {
	m := gateway.NewMetrics()
	for i := 0; i < gateway.MaxMetricKeys+500; i++ {
		m.CountForTest(fmt.Sprintf("bu-%d", i), "ViewItem", gateway.StatusAccepted)
	}
	if n := m.Len(); n > gateway.MaxMetricKeys+1 {
		t.Fatalf("%d keys, want at most %d", n, gateway.MaxMetricKeys+1)
	}
	var total int64
	for _, c := range m.Snapshot(automation.AllBusinessUnits()) {
		total += c.Accepted
	}
	if total != gateway.MaxMetricKeys+500 {
		t.Fatalf("counted %d, want every event counted (%d)", total, gateway.MaxMetricKeys+500)
	}
}

// A batch of exactly events.MaxBatchEvents (500) is taken; one more is 413 (the surviving
// mutant `>` → `>=` of issue 33).
func TestBatchOf500IsTakenAnd501Is413(t *testing.T) {
	e := newEnv(t)
	mk := func(n int, prefix string) []events.Raw {
		raws := make([]events.Raw, n)
		for i := range raws {
			raws[i] = ce(fmt.Sprintf("%s-%d", prefix, i), "ViewItem", `{"itemId":"a"}`)
		}
		return raws
	}
	res, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), mk(events.MaxBatchEvents, "full"))
	if err != nil || len(res) != 500 {
		t.Fatalf("a batch of 500: %d results, %v", len(res), err)
	}
	for _, r := range res {
		if r.Status != "accepted" {
			t.Fatalf("a batch of 500: %+v", r)
		}
	}
	_, err = e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), mk(events.MaxBatchEvents+1, "over"))
	var ae *automation.Error
	if !errors.As(err, &ae) || ae.Code != events.CodeContentTooLarge {
		t.Fatalf("a batch of 501: %v, want content too large (413)", err)
	}
}

// ceUnit is ce with another business unit.
func ceUnit(id, typ, data, unit string) events.Raw {
	r := ce(id, typ, data)
	return events.Raw{JSON: []byte(strings.Replace(string(r.JSON), `"businessunitid":"bu-1"`, `"businessunitid":"`+unit+`"`, 1))}
}

// A definition stored before the registry ran the engine's check (a hot step above 1e9)
// is left out when loaded, and its events are rejected saying why — never accepted and then
// dead-lettered by the attribute engine, nor called "not registered".
func TestStoredDefinitionTheEngineRefusesRejectsItsEvents(t *testing.T) {
	e := newEnv(t)
	def := `{"eventType":"ItemView","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"views","entity_type":"ITEM","entity_id_pointer":"/itemId","operation":"INCREMENT","hot":true,"step":2000000000}]}`
	if _, err := e.st.EventRegistrySave(context.Background(), store.EventRegistrySaveParams{EventType: "ItemView", DefinitionJSON: def, Operator: "old", Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute) // past the reload interval
	res, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), []events.Raw{ce("iv-1", "ItemView", `{"itemId":"SKU-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != "rejected" || res[0].Pointer != "/type" || !strings.Contains(res[0].Reason, "no longer passes the registry's check") ||
		!strings.Contains(res[0].Reason, "/counterInstructions/0/step") {
		t.Fatalf("%+v", res[0])
	}
}

// A filter value the number rule would refuse in data is refused when the definition is
// saved, naming its pointer: compared exactly (math/big) with every event's member, a value
// like 1e999999 cost tens of milliseconds per event and condition, and 1e1000001 could never
// be equal to anything.
func TestFilterValueWithAbsurdNumberRefusedAtSave(t *testing.T) {
	ck := gateway.Checker{}
	for _, c := range []struct{ filters, pointer string }{
		{`[{"pointer":"/n","op":"equals","value":1e999999}]`, "/filters/0/value"},
		{`[{"pointer":"/n","op":"notEquals","value":-1e1000001}]`, "/filters/0/value"},
		{`[{"pointer":"/n","op":"exists"},{"pointer":"/n","op":"in","values":[1,2,1e401]}]`, "/filters/1/values/2"},
		{`[{"pointer":"/n","op":"notIn","values":["a",` + strings.Repeat("1", 101) + `]}]`, "/filters/0/values/1"},
	} {
		_, err := ck.CheckDefinition([]byte(`{"eventType":"E","class":"DIRECT","schema":{"type":"object"},"filters":` + c.filters + `}`))
		var r *gateway.Refusal
		if !errors.As(err, &r) || r.Pointer != c.pointer || !strings.Contains(r.Reason, "out of range") {
			t.Errorf("%s: %v, want a refusal at %s", c.filters, err, c.pointer)
		}
	}
	if _, err := ck.CheckDefinition([]byte(`{"eventType":"E","class":"DIRECT","schema":{"type":"object"},"filters":[{"pointer":"/n","op":"in","values":[1e308,-0,0.5]}]}`)); err != nil {
		t.Fatalf("in-range filter values: %v", err)
	}
}

// The counts not yet persisted: DrainCounts takes them once (stamped with the minute, sorted,
// bounded like the counts), RestoreCounts gives back those a failed write did not persist and
// the next drain returns them with what was counted since; the counts since start are
// untouched by either (issue 35: ingest counts persist across restarts).
func TestMetricsDrainAndRestore(t *testing.T) {
	m := gateway.NewMetrics()
	m.CountForTest("bu-1", "ViewItem", gateway.StatusAccepted)
	m.CountForTest("bu-1", "ViewItem", gateway.StatusAccepted)
	m.CountForTest("bu-2", "ViewItem", gateway.StatusDuplicate)
	at := time.Date(2026, 10, 5, 9, 30, 42, 0, time.FixedZone("AEST", 10*3600))
	got := m.DrainCounts(at)
	want := []store.MetricsCount{
		{MinuteOn: time.Date(2026, 10, 4, 23, 30, 0, 0, time.UTC), Flow: store.FlowIngest, BusinessUnitID: "bu-1", Label: "ViewItem", Outcome: gateway.StatusAccepted, N: 2},
		{MinuteOn: time.Date(2026, 10, 4, 23, 30, 0, 0, time.UTC), Flow: store.FlowIngest, BusinessUnitID: "bu-2", Label: "ViewItem", Outcome: gateway.StatusDuplicate, N: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("drain = %+v, want %+v", got, want)
	}
	if again := m.DrainCounts(at); len(again) != 0 {
		t.Fatalf("a second drain = %+v, want nothing (each count persisted once)", again)
	}
	m.RestoreCounts(got[1:])
	m.CountForTest("bu-2", "ViewItem", gateway.StatusDuplicate)
	if again := m.DrainCounts(at); len(again) != 1 || again[0].N != 2 || again[0].BusinessUnitID != "bu-2" {
		t.Fatalf("after a restore = %+v, want bu-2's 2 duplicates", again)
	}
	if c := m.Snapshot(automation.AllBusinessUnits()); len(c) != 1 || c[0].Accepted != 2 || c[0].Duplicate != 2 {
		t.Fatalf("since start = %+v, want every count kept", c)
	}
	var nilM *gateway.Metrics
	if nilM.DrainCounts(at) != nil {
		t.Fatal("a nil Metrics drains something")
	}
	nilM.RestoreCounts(want)
}
