package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// Definitions of seed 003's examples (UC-02/UC-05 Login, UC-03 ViewItem) in the registry's form.
const (
	loginDef = `{"eventType":"Login","class":"DUAL","routes":["tracking","events"],
	  "schema":{"type":"object","properties":{"channel":{"type":"string"}},"required":["channel"]},
	  "counterInstructions":[
	    {"attribute_code":"login_streak","entity_type":"CUSTOMER","operation":"STREAK_INCREMENT","period_type":"DAILY",
	     "thresholds":[{"value":7,"trigger_event":"Login_Streak_7_Days","reset_policy":"NONE"},{"value":30,"trigger_event":"Login_Streak_30_Days","reset_policy":"RESET_ON_TRIGGER"}]},
	    {"attribute_code":"last_login_date","entity_type":"CUSTOMER","operation":"CHECK_AND_UPDATE_TIMER",
	     "thresholds":[{"value":90,"unit":"DAYS","trigger_event":"Account_Reactivated","reset_policy":"NONE"}]}]}`
	viewItemDef = `{"eventType":"ViewItem","class":"COUNTER",
	  "schema":{"type":"object","properties":{"itemId":{"type":"string"}},"required":["itemId"]},
	  "counterInstructions":[
	    {"attribute_code":"weekly_view_count","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"WEEKLY","step":1,
	     "thresholds":[{"value":10,"trigger_event":"View_10_Items_Reward","reset_policy":"RESET_ON_TRIGGER"}]},
	    {"attribute_code":"item_view_count","entity_type":"ITEM","entity_id_pointer":"/itemId","operation":"INCREMENT"},
	    {"attribute_code":"recently_viewed","entity_type":"CUSTOMER","operation":"APPEND_UNIQUE","value_pointer":"/itemId","max_items":50}]}`
	redeemDef = `{"eventType":"Redeem_Item","class":"NOTIFICATION","schema":{"type":"object"},
	  "filters":[{"pointer":"/originChannel","op":"notEquals","value":"OLS"}],
	  "notification":{"template":"redeem-done","channels":["log"],"recipientPointer":"/email"}}`
)

func TestDefinitionsOfTheSeedAreAccepted(t *testing.T) {
	ck := gateway.Checker{Channels: map[string]bool{"log": true}}
	for _, d := range []string{loginDef, viewItemDef, redeemDef} {
		c, err := ck.CheckDefinition([]byte(d))
		if err != nil {
			t.Fatalf("%.40s…: %v", d, err)
		}
		if len(c.Routes) == 0 {
			t.Fatalf("%s: no routes", c.EventType)
		}
	}
}

// Each refusal names the JSON Pointer of the bad member.
func TestDefinitionRefusalsNameThePointer(t *testing.T) {
	ck := gateway.Checker{Channels: map[string]bool{"log": true}}
	base := counterDef
	cases := []refusalCase{
		{"invalid data schema", `{"eventType":"E","class":"DIRECT","schema":{"type":"objekt"}}`, "/schema/type", "not a valid JSON Schema"},
		{"schema minLength not a number", `{"eventType":"E","class":"DIRECT","schema":{"minLength":"x"}}`, "/schema/minLength", "not a valid JSON Schema"},
		{"unknown operation", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"MULTIPLY"}`), "/counterInstructions/0/operation", ""},
		{"unknown member", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","stepp":1}`), "/counterInstructions/0", "stepp"},
		{"reset on SET_TRUE_ONCE", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"T","reset_policy":"RESET_ON_TRIGGER"}]}`),
			"/counterInstructions/0/thresholds/0/reset_policy", "not allowed for SET_TRUE_ONCE"},
		{"reset on timer", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"CHECK_AND_UPDATE_TIMER","thresholds":[{"value":90,"unit":"DAYS","trigger_event":"T","reset_policy":"RESET_ON_TRIGGER"}]}`),
			"/counterInstructions/0/thresholds/0/reset_policy", "not allowed for CHECK_AND_UPDATE_TIMER"},
		{"unknown reset policy", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1,"trigger_event":"T","reset_policy":"SOMETIMES"}]}`),
			"/counterInstructions/0/thresholds/0/reset_policy", ""},
		{"zero step", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","step":0}`), "/counterInstructions/0/step", "positive"},
		{"negative step", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"DECREMENT","step":-2}`), "/counterInstructions/0/step", "positive"},
		{"zero max_items", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"APPEND_UNIQUE","value_pointer":"/x","max_items":0}`), "/counterInstructions/0/max_items", ""},
		{"inexact threshold", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1e3,"trigger_event":"T"}]}`),
			"/counterInstructions/0/thresholds/0/value", "exact decimal"},
		{"unknown period", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"HOURLY"}`), "/counterInstructions/0/period_type", ""},
		{"period on a timer", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"COMPUTE_GAP","period_type":"DAILY"}`), "/counterInstructions/0/period_type", "takes no period"},
		{"unit missing on a gap", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"COMPUTE_GAP","thresholds":[{"value":3,"trigger_event":"T"}]}`),
			"/counterInstructions/0/thresholds/0/unit", "needs a unit"},
		{"unknown unit", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"COMPUTE_GAP","thresholds":[{"value":3,"unit":"WEEKS","trigger_event":"T"}]}`),
			"/counterInstructions/0/thresholds/0/unit", ""},
		{"thresholds out of order", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":10,"trigger_event":"T"},{"value":2,"trigger_event":"U"}]}`),
			"/counterInstructions/0/thresholds/1/value", ""},
		{"counter without instructions", `{"eventType":"E","class":"COUNTER","schema":{}}`, "/counterInstructions", "at least one"},
		{"dual with one route", `{"eventType":"E","class":"DUAL","routes":["events"],"schema":{}}`, "/routes", "at least two"},
		{"unknown channel", `{"eventType":"E","class":"NOTIFICATION","schema":{},"notification":{"template":"t","channels":["fax"],"recipients":["a@b.test"]}}`,
			"/notification/channels/0", "unknown channel"},
		{"event channel for a notification", `{"eventType":"E","class":"NOTIFICATION","schema":{},"notification":{"template":"E","channels":["log","event"],"recipients":["CUST-1"]}}`,
			"/notification/channels/1", "is for reminders"},
		{"member twice", `{"eventType":"E","eventType":"F","class":"DIRECT","schema":{}}`, "/eventType", ""},
		{"zone in the wrong case", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"DAILY","time_zone":"asia/ho_chi_minh"}`),
			"/counterInstructions/0/time_zone", `did you mean "Asia/Ho_Chi_Minh"?`},
	}
	expectRefusals(t, ck, cases)
}

// counterDef is a COUNTER definition of event E whose counter instructions are ins (JSON,
// comma-separated).
func counterDef(ins string) string {
	return `{"eventType":"E","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[` + ins + `]}`
}

// refusalCase is a definition the checker must refuse at pointer, its reason containing
// reason.
type refusalCase struct{ name, def, pointer, reason string }

func expectRefusals(t *testing.T, ck gateway.Checker, cases []refusalCase) {
	t.Helper()
	for _, c := range cases {
		_, err := ck.CheckDefinition([]byte(c.def))
		var r *gateway.Refusal
		if !errors.As(err, &r) {
			t.Errorf("%s: %v, want a refusal", c.name, err)
			continue
		}
		if r.Pointer != c.pointer || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("%s: refused at %q (%s), want %q containing %q", c.name, r.Pointer, r.Reason, c.pointer, c.reason)
		}
	}
}

type env struct {
	st    store.Store
	clock *automation.ManualClock
	admin *gateway.Admin
	svc   *gateway.Service
}

func newEnv(t testing.TB) *env {
	t.Helper()
	st := sqlitetest.Open(t)
	// Ingest refuses an event of a unit that does not exist: the units the events name.
	for _, id := range []string{"bu-1", "bu-2"} {
		if err := st.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: id, Name: id, TimeZoneID: "Australia/Sydney"}); err != nil {
			t.Fatal(err)
		}
	}
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	ck := gateway.Checker{Channels: map[string]bool{"log": true}}
	cache := &gateway.Cache{Store: st, Checker: ck, Clock: clock}
	e := &env{st: st, clock: clock, admin: &gateway.Admin{Store: st, Checker: ck, Cache: cache, Clock: clock},
		svc: &gateway.Service{Store: st, Registry: cache, Clock: clock, Metrics: gateway.NewMetrics()}}
	for _, d := range []string{loginDef, viewItemDef, redeemDef} {
		var head struct{ EventType string }
		_ = json.Unmarshal([]byte(d), &head)
		if _, err := e.admin.Save(context.Background(), gateway.SaveParams{EventType: head.EventType, Definition: []byte(d), Operator: "jane"}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func ce(id, typ, data string, ext ...string) events.Raw {
	s := `{"specversion":"1.0","id":"` + id + `","source":"/app","type":"` + typ + `","businessunitid":"bu-1","customerid":"CUST-001"`
	for i := 0; i+1 < len(ext); i += 2 {
		s += `,"` + ext[i] + `":` + ext[i+1]
	}
	if data != "" {
		s += `,"data":` + data
	}
	return events.Raw{JSON: []byte(s + "}")}
}

func (e *env) outbox(t *testing.T) []store.OutboxMessage {
	t.Helper()
	m, err := e.st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A batch: each event gets its result; a bad one (every "Bad input" row of the issue) is
// rejected naming the member, writes nothing and leaves the others alone.
func TestIngestBadInputRows(t *testing.T) {
	e := newEnv(t)
	big := `{"itemId":"` + strings.Repeat("x", gateway.DefaultMaxDataBytes) + `"}`
	raws := []events.Raw{
		ce("ok-1", "ViewItem", `{"itemId":"SKU-1"}`),
		ce("bad-type", "Teleport", `{}`),
		ce("bad-schema", "ViewItem", `{"itemId":42}`),
		{JSON: []byte(`{"specversion":"1.0","source":"/app","type":"ViewItem","businessunitid":"bu-1","customerid":"C","data":{"itemId":"a"}}`)},
		{JSON: []byte(`{"specversion":"1.0","id":"no-source","type":"ViewItem","businessunitid":"bu-1","customerid":"C","data":{"itemId":"a"}}`)},
		{JSON: []byte(`{"specversion":"1.0","id":"no-type","source":"/app","businessunitid":"bu-1","customerid":"C","data":{"itemId":"a"}}`)},
		{JSON: []byte(`{"specversion":"1.0","id":"no-customer","source":"/app","type":"ViewItem","businessunitid":"bu-1","data":{"itemId":"a"}}`)},
		ce("too-big", "ViewItem", big),
		ce("ok-2", "Login", `{"channel":"app"}`),
		ce("other-bu", "ViewItem", `{"itemId":"a"}`, "businessunitid", `"bu-9"`),
	}
	raws[9] = events.Raw{JSON: []byte(strings.Replace(string(raws[9].JSON), `"businessunitid":"bu-1",`, ``, 1))}
	res, err := e.svc.Ingest(context.Background(), automation.BusinessUnits("bu-1"), raws)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ status, pointer string }{
		{"accepted", ""}, {"rejected", "/type"}, {"rejected", "/data/itemId"}, {"rejected", "/id"}, {"rejected", "/source"},
		{"rejected", "/type"}, {"rejected", "/customerid"}, {"rejected", "/data"}, {"accepted", ""}, {"rejected", "/businessunitid"},
	}
	for i, w := range want {
		if res[i].Status != w.status || res[i].Pointer != w.pointer || res[i].Index != i {
			t.Errorf("event %d: %+v, want %s at %q", i, res[i], w.status, w.pointer)
		}
		if w.status == "rejected" && res[i].Reason == "" {
			t.Errorf("event %d: a rejection without a reason", i)
		}
	}
	// Only the two accepted events wrote rows: ViewItem → tracking, Login → events + tracking.
	var ids []string
	for _, m := range e.outbox(t) {
		ids = append(ids, m.MessageID+"@"+m.Destination+"/"+m.SessionID)
	}
	ok1, ok2 := events.Identity("/app", "ok-1"), events.Identity("/app", "ok-2")
	if got := strings.Join(ids, " "); got != ok1+":tracking@tracking/CUST-001 "+ok2+":events@events/CUST-001 "+ok2+":tracking@tracking/CUST-001" {
		t.Fatalf("outbox: %s", got)
	}
}

// An event outside the caller's scope is rejected like an unknown unit, and nothing is written.
func TestIngestOutOfScopeWritesNothing(t *testing.T) {
	e := newEnv(t)
	res, err := e.svc.Ingest(context.Background(), automation.BusinessUnits("bu-2"), []events.Raw{ce("x", "ViewItem", `{"itemId":"a"}`)})
	if err != nil || res[0].Status != "rejected" || res[0].Pointer != "/businessunitid" || !strings.Contains(res[0].Reason, "not found") {
		t.Fatalf("%+v %v", res, err)
	}
	if n := len(e.outbox(t)); n != 0 {
		t.Fatalf("%d outbox rows", n)
	}
}

// The fat payload (docs/gateway.md#fat-payload): instructions resolved (ITEM target from data, APPEND_UNIQUE value,
// defaults filled), MessageId {events.Identity(source, id)}:{route}, SessionId the customer.
func TestFatPayload(t *testing.T) {
	e := newEnv(t)
	if _, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), []events.Raw{
		ce("evt_998877", "ViewItem", `{"itemId":"SKU-9"}`, "time", `"2026-07-10T16:00:00Z"`)}); err != nil {
		t.Fatal(err)
	}
	m := e.outbox(t)
	if len(m) != 1 || m[0].MessageID != events.Identity("/app", "evt_998877")+":tracking" || m[0].SessionID != "CUST-001" {
		t.Fatalf("%+v", m)
	}
	var p gateway.Payload
	if err := json.Unmarshal(m[0].Body, &p); err != nil {
		t.Fatal(err)
	}
	if p.EventID != "evt_998877" || p.SourceEvent != "ViewItem" || p.CustomerID != "CUST-001" || p.Timestamp != "2026-07-10T16:00:00Z" || p.RegistryVersion != 1 || len(p.Instructions) != 3 {
		t.Fatalf("%+v", p)
	}
	i0, i1, i2 := p.Instructions[0], p.Instructions[1], p.Instructions[2]
	if i0.TargetEntityID != "CUST-001" || i0.Period != "WEEKLY" || i0.Step != "1" || i0.Thresholds[0].ResetPolicy != "RESET_ON_TRIGGER" {
		t.Errorf("weekly_view_count: %+v", i0)
	}
	if i1.TargetEntityID != "SKU-9" || i1.EntityType != "ITEM" || i1.Period != "LIFETIME" || i1.Step != "1" {
		t.Errorf("item_view_count: %+v", i1)
	}
	if i2.Value != "SKU-9" || i2.MaxItems == nil || *i2.MaxItems != 50 {
		t.Errorf("recently_viewed: %+v", i2)
	}
}

// Redelivery (the same batch again, and an id repeated inside a batch) routes once.
func TestIngestRedeliveryRoutesOnce(t *testing.T) {
	e := newEnv(t)
	batch := []events.Raw{ce("a", "Login", `{"channel":"app"}`), ce("a", "Login", `{"channel":"app"}`), ce("r", "Redeem_Item", `{"email":"x@example.test"}`)}
	for round := 0; round < 3; round++ {
		res, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), batch)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"accepted", "duplicate", "accepted"}
		if round > 0 {
			want = []string{"duplicate", "duplicate", "duplicate"}
		}
		for i := range want {
			if res[i].Status != want[i] {
				t.Fatalf("round %d event %d: %+v, want %s", round, i, res[i], want[i])
			}
		}
	}
	if n := len(e.outbox(t)); n != 3 { // a:events, a:tracking, r:noti
		t.Fatalf("%d outbox rows, want 3", n)
	}
	snap := e.svc.Metrics.Snapshot(automation.AllBusinessUnits())
	if fmt.Sprint(snap) != "[{Login 1 5 0 0} {Redeem_Item 1 2 0 0}]" {
		t.Fatalf("metrics %v", snap)
	}
}

// UC-13's filter: an OLS-originated redeem is accepted but routed nowhere.
func TestFilterRoutesNowhere(t *testing.T) {
	e := newEnv(t)
	res, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), []events.Raw{
		ce("ols", "Redeem_Item", `{"email":"x@example.test","originChannel":"OLS"}`), ce("app", "Redeem_Item", `{"email":"x@example.test","originChannel":"APP"}`)})
	if err != nil || res[0].Status != "accepted" || !res[0].Filtered || len(res[0].Routes) != 0 || res[1].Filtered {
		t.Fatalf("%+v %v", res, err)
	}
	m := e.outbox(t)
	if len(m) != 1 || m[0].MessageID != events.Identity("/app", "app")+":noti" {
		t.Fatalf("%+v", m)
	}
	var p gateway.Payload
	_ = json.Unmarshal(m[0].Body, &p)
	if p.Notification == nil || p.Notification.Template != "redeem-done" || fmt.Sprint(p.Notification.Recipients) != "[x@example.test]" {
		t.Fatalf("%+v", p.Notification)
	}
}

// Hot reload: a version saved by another process is in force within the Cache interval.
func TestHotReloadWithinInterval(t *testing.T) {
	e := newEnv(t)
	other := &gateway.Admin{Store: e.st, Checker: gateway.Checker{}, Clock: e.clock} // another process: no shared cache
	ctx := context.Background()
	if _, err := e.svc.Ingest(ctx, automation.AllBusinessUnits(), []events.Raw{ce("w1", "ViewItem", `{"itemId":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	stricter := strings.Replace(viewItemDef, `"required":["itemId"]`, `"required":["itemId","shelf"]`, 1)
	if _, err := other.Save(ctx, gateway.SaveParams{EventType: "ViewItem", ExpectedVersion: 1, Definition: []byte(stricter), Operator: "ops"}); err != nil {
		t.Fatal(err)
	}
	res, _ := e.svc.Ingest(ctx, automation.AllBusinessUnits(), []events.Raw{ce("w2", "ViewItem", `{"itemId":"a"}`)})
	if res[0].Status != "accepted" || res[0].RegistryVersion != 1 {
		t.Fatalf("before the interval: %+v (the cached version 1 is still in force)", res[0])
	}
	e.clock.Advance(gateway.DefaultReloadInterval)
	res, _ = e.svc.Ingest(ctx, automation.AllBusinessUnits(), []events.Raw{ce("w3", "ViewItem", `{"itemId":"a"}`)})
	if res[0].Status != "rejected" || res[0].Pointer != "/data/shelf" || !strings.Contains(res[0].Reason, "version 2") {
		t.Fatalf("after the interval: %+v, want rejected by version 2", res[0])
	}
}

func TestAdminVersionsAndImport(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.admin.Save(ctx, gateway.SaveParams{EventType: "ViewItem", Definition: []byte(viewItemDef), Operator: "jane"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("create existing: %v", err)
	}
	if _, err := e.admin.Save(ctx, gateway.SaveParams{EventType: "ViewItem", ExpectedVersion: 1, Definition: []byte(viewItemDef)}); automation.CodeOf(err) != automation.CodeMalformed {
		t.Fatalf("no operator: %v", err)
	}
	doc, err := e.admin.Export(ctx)
	if err != nil || len(doc.Events) != 3 {
		t.Fatalf("export: %v %v", doc, err)
	}
	got, err := e.admin.Import(ctx, doc, "ops")
	if err != nil || len(got) != 3 || got[0].Changed || got[1].Changed {
		t.Fatalf("re-import changed something: %+v %v", got, err)
	}
	doc.Events[0] = json.RawMessage(strings.Replace(string(doc.Events[0]), `"channel":{"type":"string"}`, `"channel":{"type":"string","maxLength":10}`, 1))
	got, err = e.admin.Import(ctx, doc, "ops")
	if err != nil || !got[0].Changed || got[0].Version != 2 {
		t.Fatalf("import of a change: %+v %v", got, err)
	}
	versions, _ := e.st.EventRegistryListVersions(ctx, "Login")
	if len(versions) != 2 || versions[0].Operator != "jane" || versions[1].Operator != "ops" {
		t.Fatalf("versions: %+v", versions)
	}
	doc.Events[1] = json.RawMessage(`{"eventType":"Bad","class":"SET"}`)
	if _, err := e.admin.Import(ctx, doc, "ops"); err == nil || !strings.Contains(err.Error(), "/events/1") {
		t.Fatalf("a bad file: %v", err)
	}
}

// The attribute engine's registry file (testdata/registry/attributes.json: UC-01, UC-02 with
// its cap, UC-03, UC-05, UC-08, UC-12 and a gap) is accepted as it is.
func TestAttributeRegistryFileIsAccepted(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "registry", "attributes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc gateway.Document
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ck := gateway.Checker{}
	for i, d := range doc.Events {
		if _, err := ck.CheckDefinition(d); err != nil {
			t.Errorf("events[%d]: %v", i, err)
		}
	}
}

// The members the attribute engine added are checked when a definition is saved.
func TestAttributeMembersRefusals(t *testing.T) {
	ck := gateway.Checker{}
	base := counterDef
	cases := []refusalCase{
		{"hot with thresholds", base(`{"attribute_code":"a","entity_type":"ITEM","operation":"INCREMENT","hot":true,"thresholds":[{"value":10,"trigger_event":"T"}]}`),
			"/counterInstructions/0/thresholds", "hot counter takes no thresholds"},
		{"hot weekly", base(`{"attribute_code":"a","entity_type":"ITEM","operation":"INCREMENT","hot":true,"period_type":"WEEKLY"}`), "/counterInstructions/0/period_type", "LIFETIME"},
		{"hot streak", base(`{"attribute_code":"a","entity_type":"ITEM","operation":"STREAK_INCREMENT","hot":true}`), "/counterInstructions/0/hot", "only INCREMENT"},
		{"unknown zone", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"DAILY","time_zone":"Mars/Olympus"}`), "/counterInstructions/0/time_zone", "unknown time zone"},
		{"unknown week start", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"WEEKLY","week_start":"FUNDAY"}`), "/counterInstructions/0/week_start", ""},
		{"week start without a week", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"DAILY","week_start":"SUNDAY"}`), "/counterInstructions/0/week_start", "WEEKLY"},
		{"reset on a gap", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"COMPUTE_GAP","thresholds":[{"value":1,"unit":"DAYS","trigger_event":"T","reset_policy":"RESET_ON_TRIGGER"}]}`),
			"/counterInstructions/0/thresholds/0/reset_policy", "not allowed for COMPUTE_GAP"},
		{"from_pointer on a counter", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","from_pointer":"/x"}`), "/counterInstructions/0/from_pointer", ""},
		{"cap cost over its limit", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1,"trigger_event":"T","cap":{"budget":"b","limit":10,"cost":20}}]}`),
			"/counterInstructions/0/thresholds/0/cap/cost", "more than the limit"},
		{"cap zero limit", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1,"trigger_event":"T","cap":{"budget":"b","limit":0,"cost":1}}]}`),
			"/counterInstructions/0/thresholds/0/cap/limit", "positive"},
		{"cap unknown period", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1,"trigger_event":"T","cap":{"budget":"b","period_type":"DECADE","limit":10,"cost":1}}]}`),
			"/counterInstructions/0/thresholds/0/cap/period_type", ""},
		{"brace without a member", base(`{"attribute_code":"survey_{}_done","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE"}`), "/counterInstructions/0/attribute_code", ""},
		{"max_items on a gap", base(`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"COMPUTE_GAP","max_items":3}`), "/counterInstructions/0/max_items", ""},
	}
	expectRefusals(t, ck, cases)
}

// A "{member}" attribute code and a gap's operands are resolved into the fat payload; a
// missing member rejects the event naming it.
func TestFatPayloadResolvesCodeAndGap(t *testing.T) {
	e := newEnv(t)
	for _, d := range []string{
		`{"eventType":"Survey_Completed","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"survey_{surveyId}_completed","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"Survey_Reward"}]}]}`,
		`{"eventType":"Order_Completed","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"gap","entity_type":"CUSTOMER","operation":"COMPUTE_GAP","from_pointer":"/placedAt","value_pointer":"/completedAt","time_zone":"Asia/Ho_Chi_Minh","thresholds":[{"value":48,"unit":"HOURS","trigger_event":"Slow"}]}]}`,
	} {
		var head struct{ EventType string }
		_ = json.Unmarshal([]byte(d), &head)
		if _, err := e.admin.Save(context.Background(), gateway.SaveParams{EventType: head.EventType, Definition: []byte(d), Operator: "jane"}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.svc.Ingest(context.Background(), automation.AllBusinessUnits(), []events.Raw{
		ce("s-1", "Survey_Completed", `{"surveyId":"NPS-2026"}`),
		ce("o-1", "Order_Completed", `{"placedAt":"2026-07-01T00:00:00Z","completedAt":"2026-07-04T00:00:00Z"}`),
		ce("s-2", "Survey_Completed", `{"other":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res[2].Status != "rejected" || res[2].Pointer != "/data/surveyId" {
		t.Fatalf("s-2: %+v, want rejected at /data/surveyId", res[2])
	}
	m := e.outbox(t)
	if len(m) != 2 {
		t.Fatalf("%d messages", len(m))
	}
	var p0, p1 gateway.Payload
	_ = json.Unmarshal(m[0].Body, &p0)
	_ = json.Unmarshal(m[1].Body, &p1)
	if p0.Instructions[0].AttributeCode != "survey_NPS-2026_completed" {
		t.Errorf("code = %q", p0.Instructions[0].AttributeCode)
	}
	if g := p1.Instructions[0]; g.From != "2026-07-01T00:00:00Z" || g.Value != "2026-07-04T00:00:00Z" || g.TimeZone != "Asia/Ho_Chi_Minh" {
		t.Errorf("gap: %+v", g)
	}
}

// Every refusal of the attribute engine's instruction check (attribute.InstructionRules) is
// a refusal of the registry at save, naming the member: a definition the registry saves is
// never one whose tracking messages the engine dead-letters (issue 33, item 5).
func TestRegistryRefusesEveryEngineRefusal(t *testing.T) {
	ck := gateway.Checker{Channels: map[string]bool{"log": true}}
	cases := map[string]struct{ instruction, pointer string }{
		"operation":       {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"MULTIPLY"}`, "/operation"},
		"reserved-code":   {`{"attribute_code":"cap:x","entity_type":"CUSTOMER","operation":"INCREMENT"}`, "/attribute_code"},
		"column-bounds":   {`{"attribute_code":"a","entity_type":"` + strings.Repeat("E", 51) + `","operation":"INCREMENT"}`, "/entity_type"},
		"cap-budget":      {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1,"trigger_event":"T","cap":{"budget":"` + strings.Repeat("b", 200) + `","limit":1,"cost":1}}]}`, "/thresholds/0/cap/budget"},
		"hot-shape":       {`{"attribute_code":"a","entity_type":"ITEM","operation":"APPEND_UNIQUE","value_pointer":"/x","max_items":5,"hot":true}`, "/hot"},
		"period":          {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"STREAK_INCREMENT","period_type":"MONTHLY"}`, "/period_type"},
		"step":            {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","step":0}`, "/step"},
		"hot-step":        {`{"attribute_code":"a","entity_type":"ITEM","operation":"INCREMENT","hot":true,"step":1000000001}`, "/step"},
		"threshold-value": {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1e3,"trigger_event":"T"}]}`, "/thresholds/0/value"},
		"cap-amounts":     {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1,"trigger_event":"T","cap":{"budget":"b","limit":1e3,"cost":1}}]}`, "/thresholds/0/cap/limit"},
		"time-zone":       {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"DAILY","time_zone":"Mars/Olympus_Mons"}`, "/time_zone"},
		"week-start":      {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"WEEKLY","week_start":"FUNDAY"}`, "/week_start"},
		"max-items":       {`{"attribute_code":"a","entity_type":"CUSTOMER","operation":"APPEND_UNIQUE","value_pointer":"/x","max_items":0}`, "/max_items"},
	}
	for _, rule := range attribute.InstructionRules() {
		c, ok := cases[rule]
		if !ok {
			t.Errorf("the engine's refusal %q has no case here: add one (its registry refusal must be tested)", rule)
			continue
		}
		var in attribute.Instruction
		if err := json.Unmarshal([]byte(c.instruction), &in); err != nil {
			t.Fatal(err)
		}
		if ie := attribute.CheckInstruction(in); ie == nil || ie.Rule != rule {
			t.Errorf("%s: the engine's check gives %+v, want a refusal by rule %s (the case does not exercise it)", rule, ie, rule)
		}
		def := `{"eventType":"E","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[` + c.instruction + `]}`
		_, err := ck.CheckDefinition([]byte(def))
		var r *gateway.Refusal
		if !errors.As(err, &r) || r.Pointer != "/counterInstructions/0"+c.pointer {
			t.Errorf("%s: the registry answers %v, want a refusal at /counterInstructions/0%s", rule, err, c.pointer)
		}
	}
}

// A save over a stale version is 412 naming the version in force (issue 33, item 10).
func TestStaleSaveNamesTheCurrentVersion(t *testing.T) {
	e := newEnv(t)
	save := func(expected int64) error {
		_, err := e.admin.Save(context.Background(), gateway.SaveParams{EventType: "Login", ExpectedVersion: expected, Definition: []byte(loginDef), Operator: "jane"})
		return err
	}
	if err := save(1); err != nil {
		t.Fatal(err)
	}
	err := save(1)
	if automation.CodeOf(err) != automation.CodePreconditionFailed || !strings.Contains(err.Error(), `Login is at version "2", not "1"`) {
		t.Fatalf("%v, want 412 naming version 2", err)
	}
}
