package attribute_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

type env struct {
	st    store.Store
	clock *automation.ManualClock
	svc   *attribute.Service
}

func newEnv(t testing.TB) *env {
	t.Helper()
	st := sqlitetest.Open(t)
	storetest.Units(t, st, store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"}, store.BusinessUnit{ID: "bu-ny", Name: "New York", TimeZoneID: "America/New_York"})
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 0, 0, 0, 0, time.UTC))
	return &env{st: st, clock: clock, svc: &attribute.Service{Store: st, Clock: clock}}
}

const weeklyView = `{"attribute_code":"weekly_view_count","entity_type":"CUSTOMER","operation":"INCREMENT","period_type":"WEEKLY","step":"1",
 "thresholds":[{"value":10,"trigger_event":"View_10_Items_Reward","reset_policy":"RESET_ON_TRIGGER"}]}`

// payload is a tracking message of customer CUST-001 in unit bu at instant at
// (trackingPayload).
func payload(id, bu, at string, ins ...string) []byte {
	return trackingPayload(id, bu, "CUST-001", at, ins...)
}

// trackingPayload is a tracking message (a ViewItem of source /app, registry version 1) of
// customer cust in unit bu at instant at carrying the instructions ins, each aimed at cust
// unless it names its own target_entity_id.
func trackingPayload(id, bu, cust, at string, ins ...string) []byte {
	for i, in := range ins {
		var m map[string]any
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			panic(err)
		}
		if _, ok := m["target_entity_id"]; !ok {
			m["target_entity_id"] = cust
		}
		b, _ := json.Marshal(m)
		ins[i] = string(b)
	}
	return []byte(`{"event_id":"` + id + `","source":"/app","source_event":"ViewItem","customer_id":"` + cust + `","business_unit_id":"` + bu +
		`","timestamp":"` + at + `","registry_version":1,"route":"tracking","instructions":[` + strings.Join(ins, ",") + `]}`)
}

func (e *env) handle(t testing.TB, body []byte) attribute.Result {
	t.Helper()
	r, err := e.svc.Handle(context.Background(), body)
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	return r
}

func (e *env) value(t testing.TB, typ, id, code string, asOf time.Time) any {
	t.Helper()
	vs, err := attribute.Read(context.Background(), e.st, store.AttributeEntity{BusinessUnitID: "bu-syd", EntityType: typ, EntityID: id}, asOf)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Code == code {
			return v.Value
		}
	}
	return nil
}

func (e *env) triggers(t *testing.T) []attribute.TriggerEvent {
	t.Helper()
	ms, err := e.st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []attribute.TriggerEvent
	for _, m := range ms {
		if m.Destination != "events" {
			continue
		}
		var tr attribute.TriggerEvent
		if err := json.Unmarshal(m.Body, &tr); err != nil {
			t.Fatal(err)
		}
		if m.MessageID != tr.EventID+":events" || m.SessionID != "CUST-001" {
			t.Errorf("message %s/%s for trigger %s", m.MessageID, m.SessionID, tr.EventID)
		}
		out = append(out, tr)
	}
	return out
}

// Seed 003's "threshold jumping": five ViewItems processed at the same time while the weekly
// count is 9 of 10 give exactly one trigger (on real SQLite, five goroutines).
func TestFiveConcurrentViewsAtNineGiveOneTrigger(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 9; i++ {
		e.handle(t, payload(fmt.Sprint("pre-", i), "bu-syd", "2026-07-07T01:00:00Z", weeklyView))
	}
	if got := e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", time.Date(2026, 7, 8, 0, 0, 0, 0, time.UTC)); fmt.Sprint(got) != "9" {
		t.Fatalf("before: %v", got)
	}
	var wg sync.WaitGroup
	results := make([]attribute.Result, 5)
	errs := make([]error, 5)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = e.svc.Handle(context.Background(), payload(fmt.Sprint("burst-", i), "bu-syd", "2026-07-07T02:00:00Z", weeklyView))
		}(i)
	}
	wg.Wait()
	fired := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		fired += len(results[i].Triggers)
	}
	trs := e.triggers(t)
	if fired != 1 || len(trs) != 1 {
		t.Fatalf("%d triggers reported, %d in the outbox; want exactly 1", fired, len(trs))
	}
	tr := trs[0]
	if tr.EventName != "View_10_Items_Reward" || tr.Metadata.ThresholdReached != "10" || tr.Metadata.SourceSystem != "attribute-service" ||
		tr.Metadata.TriggerAttribute != "weekly_view_count" || !strings.HasPrefix(tr.Metadata.OriginalTriggerEventID, "burst-") || tr.Timestamp != "2026-07-07T02:00:00Z" {
		t.Errorf("trigger = %+v", tr)
	}
	// 9 -> 10 (trigger, reset to 0) -> 1, 2, 3, 4.
	if got := e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", time.Date(2026, 7, 8, 0, 0, 0, 0, time.UTC)); fmt.Sprint(got) != "4" {
		t.Fatalf("after: %v, want 4", got)
	}
}

// Replaying the same payloads gives the same values and no new trigger; trigger ids are the
// deterministic hash of (source event, entity, attribute, threshold).
func TestReplayIsANoOp(t *testing.T) {
	e := newEnv(t)
	e.svc.Triggers = metricscount.New(metricscount.FlowTrigger) // the overview's count: one trigger, once
	var bodies [][]byte
	for i := 0; i < 12; i++ {
		bodies = append(bodies, payload(fmt.Sprint("v-", i), "bu-syd", fmt.Sprintf("2026-07-07T%02d:00:00Z", i), weeklyView,
			`{"attribute_code":"recently_viewed","entity_type":"CUSTOMER","operation":"APPEND_UNIQUE","value":"SKU-`+fmt.Sprint(i%4)+`","max_items":3}`))
	}
	for _, b := range bodies {
		e.handle(t, b)
	}
	asOf := time.Date(2026, 7, 8, 0, 0, 0, 0, time.UTC)
	count, recent := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", asOf)), fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "recently_viewed", asOf))
	first := e.triggers(t)
	for _, b := range bodies {
		if r := e.handle(t, b); r.Outcome != store.AttributeDuplicate || len(r.Triggers) != 0 {
			t.Fatalf("replay: %+v", r)
		}
	}
	if c, r := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", asOf)), fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "recently_viewed", asOf)); c != count || r != recent {
		t.Fatalf("after replay %s %s, before %s %s", c, r, count, recent)
	}
	if count != "2" || recent != "[SKU-3 SKU-2 SKU-1]" || len(first) != 1 || len(e.triggers(t)) != 1 {
		t.Fatalf("count %s, recent %s, triggers %d", count, recent, len(first))
	}
	want := attribute.TriggerID(events.Identity("/app", "v-9"), store.AttributeEntity{BusinessUnitID: "bu-syd", EntityType: "CUSTOMER", EntityID: "CUST-001"}, "weekly_view_count", mustDec("10"))
	if first[0].EventID != want {
		t.Errorf("trigger id %s, want %s", first[0].EventID, want)
	}
	counted := e.svc.Triggers.DrainCounts(asOf)
	if len(counted) != 1 || counted[0].N != 1 || counted[0].BusinessUnitID != "bu-syd" || counted[0].Label != "View_10_Items_Reward" || counted[0].Outcome != metricscount.OutcomeFired {
		t.Fatalf("triggers counted for the overview: %+v, want one fired (the replays write none)", counted)
	}
}

// An instruction that does not fit the stored value is a permanent error naming the
// attribute, and nothing of the event is written (not its other instructions either).
func TestTypeMismatchIsPermanentAndWritesNothing(t *testing.T) {
	e := newEnv(t)
	e.handle(t, payload("flag-1", "bu-syd", "2026-07-07T00:00:00Z", `{"attribute_code":"first_login","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE"}`))
	_, err := e.svc.Handle(context.Background(), payload("bad-1", "bu-syd", "2026-07-07T01:00:00Z", weeklyView,
		`{"attribute_code":"first_login","entity_type":"CUSTOMER","operation":"INCREMENT"}`))
	if !automation.IsInvalid(err) || !strings.Contains(err.Error(), "first_login") {
		t.Fatalf("err = %v, want a permanent error naming first_login", err)
	}
	if got := e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", time.Date(2026, 7, 8, 0, 0, 0, 0, time.UTC)); got != nil {
		t.Fatalf("weekly_view_count = %v after a refused event (half-applied)", got)
	}
	for _, c := range []struct{ name, body, field string }{
		{"not JSON", `{`, "payload"},
		{"no event id", `{"business_unit_id":"bu-syd","timestamp":"2026-07-07T00:00:00Z","instructions":[{}]}`, "event_id"},
		{"bad time", `{"event_id":"x","business_unit_id":"bu-syd","timestamp":"yesterday","instructions":[{"target_entity_id":"a","entity_type":"CUSTOMER","attribute_code":"c","operation":"INCREMENT"}]}`, "timestamp"},
		{"unknown business unit", string(payload("u-1", "bu-nowhere", "2026-07-07T00:00:00Z", weeklyView)), "business_unit_id"},
		{"hot with thresholds", string(payload("h-1", "bu-syd", "2026-07-07T00:00:00Z", `{"attribute_code":"c","entity_type":"ITEM","operation":"INCREMENT","hot":true,"thresholds":[{"value":1,"trigger_event":"T"}]}`)), "instructions[0]"},
		{"cap code", string(payload("c-1", "bu-syd", "2026-07-07T00:00:00Z", `{"attribute_code":"cap:x","entity_type":"ITEM","operation":"INCREMENT"}`)), "attribute_code"},
	} {
		_, err := e.svc.Handle(context.Background(), []byte(c.body))
		if !automation.IsInvalid(err) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want a permanent error on %s", c.name, err, c.field)
		}
	}
}

// Hot counters append deltas; reads add what is not folded; the flusher folds in bounded
// batches and a second run finds nothing.
func TestHotCounterDeltasAndFlush(t *testing.T) {
	e := newEnv(t)
	hot := `{"attribute_code":"item_view_count","entity_type":"ITEM","target_entity_id":"SKU-7","operation":"INCREMENT","hot":true}`
	for i := 0; i < 25; i++ {
		e.handle(t, payload(fmt.Sprint("h-", i), "bu-syd", "2026-07-07T00:00:00Z", hot))
	}
	e.handle(t, payload("h-0", "bu-syd", "2026-07-07T00:00:00Z", hot)) // a redelivery appends nothing
	now := time.Date(2026, 7, 8, 0, 0, 0, 0, time.UTC)
	if got := fmt.Sprint(e.value(t, "ITEM", "SKU-7", "item_view_count", now)); got != "25" {
		t.Fatalf("before the flush: %s", got)
	}
	f := &attribute.Flusher{Store: e.st, Clock: e.clock, Batch: 10, MaxBatches: 2}
	r, err := f.RunOnce(context.Background())
	if err != nil || r.Deltas != 20 || r.Batches != 2 {
		t.Fatalf("bounded run: %+v %v", r, err)
	}
	if got := fmt.Sprint(e.value(t, "ITEM", "SKU-7", "item_view_count", now)); got != "25" {
		t.Fatalf("mid-flush: %s", got)
	}
	if r, err = f.RunOnce(context.Background()); err != nil || r.Deltas != 5 {
		t.Fatalf("rest: %+v %v", r, err)
	}
	if r, err = f.RunOnce(context.Background()); err != nil || r.Deltas != 0 {
		t.Fatalf("nothing left: %+v %v", r, err)
	}
	if got := fmt.Sprint(e.value(t, "ITEM", "SKU-7", "item_view_count", now)); got != "25" {
		t.Fatalf("after: %s", got)
	}
	top, err := e.st.AttributeTop(context.Background(), store.AttributeTopParams{BusinessUnitID: "bu-syd", EntityType: "ITEM", AttributeCode: "item_view_count", Limit: 5})
	if err != nil || len(top) != 1 || top[0].ValueText != "25" {
		t.Fatalf("top: %+v %v", top, err)
	}
}

// UC-01/UC-02/UC-05 in the business unit's zone: a Sunday-night login in Sydney and the
// Monday-morning one are consecutive days; an older login does not move the streak; the
// timer restarts; the first-login flag fires once.
func TestLoginStreakTimerAndFlagInTheUnitsZone(t *testing.T) {
	e := newEnv(t)
	login := []string{
		`{"attribute_code":"first_login","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"First_Login"}]}`,
		`{"attribute_code":"login_streak","entity_type":"CUSTOMER","operation":"STREAK_INCREMENT","period_type":"DAILY","thresholds":[{"value":2,"trigger_event":"Streak_2"}]}`,
		`{"attribute_code":"last_active","entity_type":"CUSTOMER","operation":"CHECK_AND_UPDATE_TIMER","thresholds":[{"value":90,"unit":"CALENDAR_DAYS","trigger_event":"Back_After_90"}]}`,
		`{"attribute_code":"last_seen","entity_type":"CUSTOMER","operation":"CHECK_AND_UPDATE_TIMER","thresholds":[{"value":90,"unit":"DAYS","trigger_event":"Back_After_90_Elapsed"}]}`,
	}
	in := func() []string { return append([]string(nil), login...) }
	// Events arrive after they happen (an event more than a day ahead of the clock is refused).
	e.clock.Set(time.Date(2026, 7, 12, 15, 0, 0, 0, time.UTC))
	r1 := e.handle(t, payload("l-1", "bu-syd", "2026-07-12T13:30:00Z", in()...)) // Sun 23:30 Sydney
	r2 := e.handle(t, payload("l-2", "bu-syd", "2026-07-12T14:30:00Z", in()...)) // Mon 00:30 Sydney
	r3 := e.handle(t, payload("l-3", "bu-syd", "2026-07-01T00:00:00Z", in()...)) // an old login delivered late
	names := func(r attribute.Result) string {
		var n []string
		for _, t := range r.Triggers {
			n = append(n, t.EventName)
		}
		return strings.Join(n, ",")
	}
	if names(r1) != "First_Login" || names(r2) != "Streak_2" || names(r3) != "" {
		t.Fatalf("triggers: %q %q %q", names(r1), names(r2), names(r3))
	}
	asOf := time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC)
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "login_streak", asOf)); got != "2" {
		t.Fatalf("streak %s", got)
	}
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "last_active", asOf)); got != "2026-07-12T14:30:00Z" {
		t.Fatalf("timer %s", got)
	}
	// Sydney 2026-10-10 23:59 (+11) is 89 local days after 13 July; 13:00Z is 11 October 00:00:
	// 90 calendar days, but 89 days 22.5 hours elapsed, so only the CALENDAR_DAYS timer fires
	// (both restart).
	e.clock.Set(time.Date(2026, 10, 10, 13, 5, 0, 0, time.UTC))
	r4 := e.handle(t, payload("l-4", "bu-syd", "2026-10-10T13:00:00Z", in()...))
	if names(r4) != "Back_After_90" {
		t.Fatalf("after 90 calendar days: %q", names(r4))
	}
	// 90 x 24 hours after l-4: the elapsed timer fires (and the calendar one, 90 dates later).
	e.clock.Set(time.Date(2027, 1, 8, 13, 5, 0, 0, time.UTC))
	r5 := e.handle(t, payload("l-5", "bu-syd", "2027-01-08T13:00:00Z", in()...))
	if names(r5) != "Back_After_90,Back_After_90_Elapsed" {
		t.Fatalf("after 90 days elapsed: %q", names(r5))
	}
}

func mustDec(s string) decimalT { return decimalFrom(s) }

// A gap between two operands of the event fires without a stored value and writes no row
// (an earlier version wrote an empty-typed row, which the store refused); an event that
// leaves a value as it was writes nothing (its Version does not move).
func TestGapWithoutRowAndUnchangedValuesWriteNothing(t *testing.T) {
	e := newEnv(t)
	gap := `{"attribute_code":"order_gap","entity_type":"CUSTOMER","operation":"COMPUTE_GAP","from":"2026-07-01T00:00:00Z","value":"2026-07-03T02:00:00Z",
	  "thresholds":[{"value":48,"unit":"HOURS","trigger_event":"Slow"}]}`
	r := e.handle(t, payload("o-1", "bu-syd", "2026-07-03T02:00:00Z", gap))
	if len(r.Triggers) != 1 || len(r.Changes) != 0 {
		t.Fatalf("gap: %+v", r)
	}
	flag := `{"attribute_code":"first_login","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE"}`
	e.handle(t, payload("f-1", "bu-syd", "2026-07-03T02:00:00Z", flag))
	if r := e.handle(t, payload("f-0", "bu-syd", "2026-07-01T00:00:00Z", flag)); len(r.Changes) != 0 {
		t.Fatalf("an older flag event changed %+v", r.Changes)
	}
	rows, err := e.st.AttributeList(context.Background(), store.AttributeEntity{BusinessUnitID: "bu-syd", EntityType: "CUSTOMER", EntityID: "CUST-001"})
	if err != nil || len(rows) != 1 || rows[0].Version != 1 {
		t.Fatalf("rows %+v %v", rows, err)
	}
}

// leaseLosing loses the first `lose` AttributeApply calls, as a concurrent writer of the
// same entity would (ErrLeaseLost: nothing written).
type leaseLosing struct {
	store.Store
	lose, calls int
}

func (l *leaseLosing) AttributeApply(ctx context.Context, p store.AttributeApplyParams) (store.AttributeApplyOutcome, error) {
	l.calls++
	if l.calls <= l.lose {
		return "", fmt.Errorf("moved on: %w", store.ErrLeaseLost)
	}
	return l.Store.AttributeApply(ctx, p)
}

// A lost optimistic race is retried, at most MaxAttempts times.
func TestLeaseLostIsRetriedWithABound(t *testing.T) {
	e := newEnv(t)
	ll := &leaseLosing{Store: e.st, lose: 2}
	svc := &attribute.Service{Store: ll, Clock: e.clock}
	r, err := svc.Handle(context.Background(), payload("r-1", "bu-syd", "2026-07-07T00:00:00Z", weeklyView))
	if err != nil || r.Attempts != 3 || r.Outcome != store.AttributeApplied {
		t.Fatalf("%+v %v, want applied on the third attempt", r, err)
	}
	ll = &leaseLosing{Store: e.st, lose: 100}
	svc = &attribute.Service{Store: ll, Clock: e.clock, MaxAttempts: 4}
	if _, err := svc.Handle(context.Background(), payload("r-2", "bu-syd", "2026-07-07T00:00:00Z", weeklyView)); !errors.Is(err, store.ErrLeaseLost) || ll.calls != 4 {
		t.Fatalf("err %v after %d calls, want ErrLeaseLost after 4", err, ll.calls)
	}
}

// A crash between the attribute update and the outbox write (Hooks.AfterUpdate, inside the
// event's transaction) leaves nothing half-applied: no value, no processed event, no
// trigger. The redelivery then applies the event once, with its one trigger.
func TestCrashBetweenUpdateAndOutboxWritesNothing(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 9; i++ {
		e.handle(t, payload(fmt.Sprint("v-", i), "bu-syd", fmt.Sprintf("2026-07-07T%02d:00:00Z", i), weeklyView))
	}
	crash := errors.New("process killed")
	var seen []string
	e.svc.Hooks = &attribute.Hooks{AfterUpdate: func(_ context.Context, id string) error { seen = append(seen, id); return crash }}
	tenth := payload("v-9", "bu-syd", "2026-07-07T09:00:00Z", weeklyView)
	if _, err := e.svc.Handle(context.Background(), tenth); !errors.Is(err, crash) {
		t.Fatalf("Handle = %v, want the crash", err)
	}
	asOf := time.Date(2026, 7, 8, 0, 0, 0, 0, time.UTC)
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", asOf)); got != "9" || len(e.triggers(t)) != 0 || fmt.Sprint(seen) != "[v-9]" {
		t.Fatalf("after the crash: count %s, %d triggers, hook saw %v; want 9, 0, [v-9]", got, len(e.triggers(t)), seen)
	}
	e.svc.Hooks = nil
	if r := e.handle(t, tenth); r.Outcome != store.AttributeApplied || len(r.Triggers) != 1 {
		t.Fatalf("redelivery: %+v", r)
	}
	if r := e.handle(t, tenth); r.Outcome != store.AttributeDuplicate {
		t.Fatalf("second redelivery: %+v", r)
	}
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", asOf)); got != "0" || len(e.triggers(t)) != 1 {
		t.Fatalf("after the redelivery: count %s (reset on trigger), %d triggers", got, len(e.triggers(t)))
	}
}

// The same event id from two sources is two events (CloudEvents: source + id identify an
// event): both are applied, each crossing fires with its own trigger id, and a redelivery of
// either is a duplicate.
func TestSameIDFromTwoSourcesIsTwoEvents(t *testing.T) {
	e := newEnv(t)
	e.clock.Set(time.Date(2026, 7, 12, 15, 0, 0, 0, time.UTC))
	in := `{"attribute_code":"logins","entity_type":"CUSTOMER","operation":"INCREMENT","thresholds":[{"value":1,"trigger_event":"One"},{"value":2,"trigger_event":"Two"}]}`
	a := payload("1", "bu-syd", "2026-07-12T13:00:00Z", in)
	b := bytes.Replace(payload("1", "bu-syd", "2026-07-12T13:00:00Z", in), []byte(`"source":"/app"`), []byte(`"source":"/pos"`), 1)
	ra, rb := e.handle(t, a), e.handle(t, b)
	if ra.Outcome != store.AttributeApplied || rb.Outcome != store.AttributeApplied {
		t.Fatalf("outcomes %s %s, want both applied", ra.Outcome, rb.Outcome)
	}
	if len(ra.Triggers) != 1 || len(rb.Triggers) != 1 || ra.Triggers[0].EventID == rb.Triggers[0].EventID {
		t.Fatalf("triggers %+v %+v, want one each with distinct ids", ra.Triggers, rb.Triggers)
	}
	if rb.Triggers[0].Metadata.OriginalTriggerEventSource != "/pos" {
		t.Fatalf("metadata %+v", rb.Triggers[0].Metadata)
	}
	for _, body := range [][]byte{a, b} {
		if r := e.handle(t, body); r.Outcome != store.AttributeDuplicate {
			t.Fatalf("redelivery: %s, want duplicate", r.Outcome)
		}
	}
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "logins", time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC))); got != "2" {
		t.Fatalf("logins %s, want 2", got)
	}
}
