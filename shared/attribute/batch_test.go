package attribute_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
)

// customerPayload is a tracking message of customer cust (its session) in bu-syd at instant
// at (trackingPayload).
func customerPayload(id, cust, at string, ins ...string) []byte {
	return trackingPayload(id, "bu-syd", cust, at, ins...)
}

const (
	flagIns   = `{"attribute_code":"first_login","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"Welcome"}]}`
	poisonIns = `{"attribute_code":"first_login","entity_type":"CUSTOMER","operation":"INCREMENT"}` // a number op on the flag: refused once the flag is stored
	recentIns = `{"attribute_code":"recently_viewed","entity_type":"CUSTOMER","operation":"APPEND_UNIQUE","value":"SKU-%d","max_items":3}`
	// An entity every session writes: its order across sessions is the batch's order.
	itemIns = `{"target_entity_id":"SKU-1","attribute_code":"views","entity_type":"ITEM","operation":"INCREMENT","thresholds":[{"value":25,"trigger_event":"Item_25_Views","reset_policy":"RESET_ON_TRIGGER"}]}`
	hotIns  = `{"target_entity_id":"SKU-1","attribute_code":"hot_views","entity_type":"ITEM","operation":"INCREMENT","hot":true,"step":"2"}`
)

// workload is a deterministic mix of tracking messages of six customers in their sessions'
// order: weekly views crossing their threshold, the first-login flag, lists, a shared item
// counter (with a trigger) and a hot counter, redelivered copies (one right after its
// original, so in the same batch), and poison messages that a message before them made
// unapplicable (a number operation on the stored flag), one that does not parse and one
// naming an unknown business unit.
func workload() [][]byte {
	var out [][]byte
	for i := 0; i < 160; i++ {
		cust := fmt.Sprintf("CUST-%03d", i%6)
		at := fmt.Sprintf("2026-07-07T%02d:%02d:00Z", i/60, i%60)
		id := fmt.Sprintf("ev-%03d", i)
		switch {
		case i%37 == 36:
			out = append(out, customerPayload(id, cust, at, weeklyView, poisonIns))
		case i == 50:
			out = append(out, []byte(`{"event_id":"ev-050","business_unit_id":`))
		case i == 51:
			out = append(out, []byte(strings.Replace(string(customerPayload(id, cust, at, weeklyView)), "bu-syd", "bu-nowhere", 1)))
		case i%7 == 0:
			out = append(out, customerPayload(id, cust, at, flagIns, itemIns))
		default:
			out = append(out, customerPayload(id, cust, at, weeklyView, fmt.Sprintf(recentIns, i%5), itemIns, hotIns))
		}
		if i%11 == 5 {
			out = append(out, out[len(out)-1]) // the same message again
		}
	}
	return out
}

// tables dumps the attribute engine's tables and the outbox, every column, as text.
func tables(t *testing.T, st store.Store) map[string][]string {
	t.Helper()
	db := st.(interface{ DB() *sql.DB }).DB()
	out := map[string][]string{}
	for _, table := range []string{"AttributeValue", "AttributeProcessedEvent", "AttributeDelta", "Outbox"} {
		rows, err := db.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, c := range cols {
				v := vals[i]
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s=%v ", c, v)
			}
			out[table] = append(out[table], b.String())
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		sort.Strings(out[table])
	}
	return out
}

// counting counts the transactions the engine asks for.
type counting struct {
	store.Store
	applies, batches, batchFailures int
}

func (c *counting) AttributeApply(ctx context.Context, p store.AttributeApplyParams) (store.AttributeApplyOutcome, error) {
	c.applies++
	return c.Store.AttributeApply(ctx, p)
}

func (c *counting) AttributeApplyBatch(ctx context.Context, ps []store.AttributeApplyParams) ([]store.AttributeApplyOutcome, error) {
	c.batches++
	outs, err := c.Store.AttributeApplyBatch(ctx, ps)
	if err != nil {
		c.batchFailures++
	}
	return outs, err
}

// outcome is what a message's Handle returned, comparable across runs.
func outcome(r attribute.Result, err error) string {
	if err != nil {
		return fmt.Sprintf("error invalid=%v permanent=%v: %v", automation.IsInvalid(err), automation.IsPermanent(err), err)
	}
	r.Attempts = 0 // a batch commits once; one at a time may retry a lost race
	b, _ := json.Marshal(r)
	return string(b)
}

// The same messages applied one at a time and in batches (of several sizes, cutting the
// sessions and the redelivered copies at different places) write the same attribute rows,
// processed-event rows, deltas and outbox rows, and answer each message the same: values,
// triggers, duplicates and refusals alike.
func TestHandleBatchEqualsOneAtATime(t *testing.T) {
	t.Parallel()
	msgs := workload()
	one := newEnv(t)
	var want, wantApplied, wantRefused []string
	one.svc.OnApplied = func(r attribute.Result) { wantApplied = append(wantApplied, r.EventID) }
	one.svc.OnRefused = func(id string, _ error) { wantRefused = append(wantRefused, id) }
	for _, m := range msgs {
		r, err := one.svc.Handle(context.Background(), m)
		want = append(want, outcome(r, err))
	}
	wantTables := tables(t, one.st)
	for _, table := range []string{"AttributeValue", "AttributeProcessedEvent", "AttributeDelta", "Outbox"} {
		if len(wantTables[table]) == 0 {
			t.Fatalf("the workload wrote no %s row: it checks nothing there", table)
		}
	}
	var refused, dup, trig int
	for _, w := range want {
		refused += strings.Count(w, "error invalid=true")
		dup += strings.Count(w, `"outcome":"Duplicate"`)
		trig += strings.Count(w, `"triggers":`)
	}
	if refused < 4 || dup < 10 || trig < 10 {
		t.Fatalf("the workload has %d refusals, %d duplicates, %d messages with triggers: too few to check them", refused, dup, trig)
	}

	for _, size := range []int{2, 7, 25, 100} {
		t.Run(fmt.Sprint("batch=", size), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cs := &counting{Store: e.st}
			svc := &attribute.Service{Store: cs, Clock: e.clock}
			var got []string
			var applied, refusedSeen []string
			svc.OnApplied = func(r attribute.Result) { applied = append(applied, r.EventID) }
			svc.OnRefused = func(id string, _ error) { refusedSeen = append(refusedSeen, id) }
			for lo := 0; lo < len(msgs); lo += size {
				rs, errs := svc.HandleBatch(context.Background(), msgs[lo:min(lo+size, len(msgs))])
				for i := range rs {
					got = append(got, outcome(rs[i], errs[i]))
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("message %d: batched\n  %s\none at a time\n  %s", i, got[i], want[i])
				}
			}
			if gotTables := tables(t, e.st); !reflect.DeepEqual(gotTables, wantTables) {
				for table := range wantTables {
					if !reflect.DeepEqual(gotTables[table], wantTables[table]) {
						t.Errorf("%s differs:\nbatched      %q\none at a time %q", table, gotTables[table], wantTables[table])
					}
				}
			}
			if !reflect.DeepEqual(applied, wantApplied) || !reflect.DeepEqual(refusedSeen, wantRefused) {
				t.Errorf("OnApplied %v, OnRefused %v; one at a time %v, %v", applied, refusedSeen, wantApplied, wantRefused)
			}
			// A batch commits once unless a poison message is in it (then one at a time); a
			// batch with one message to apply (the others refused before their transaction,
			// as the message that does not parse or names an unknown business unit) applies it
			// alone.
			poisoned, alone := 0, 0
			for lo := 0; lo < len(msgs); lo += size {
				ready, poison := 0, false
				for _, m := range msgs[lo:min(lo+size, len(msgs))] {
					if strings.Contains(string(m), `"business_unit_id":"bu-syd"`) {
						ready++
					}
					poison = poison || strings.Contains(string(m), `"first_login","entity_type":"CUSTOMER","operation":"INCREMENT"`)
				}
				switch {
				case ready == 1:
					alone++
				case poison:
					poisoned++
					alone += ready
				}
			}
			if poisoned == 0 || cs.batchFailures != poisoned || cs.applies != alone {
				t.Errorf("%d batch transactions (%d failed), %d single ones; want %d failed (the batches with a poison) and %d single ones", cs.batches, cs.batchFailures, cs.applies, poisoned, alone)
			}
		})
	}
}

// A poison message in the middle of a batch (an instruction that does not fit the value a
// message before it in the same batch stored) fails alone: the messages around it are
// applied once each, in order, with their triggers; nothing of the poison is written.
func TestHandleBatchPoisonInTheMiddle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := &counting{Store: e.st}
	svc := &attribute.Service{Store: cs, Clock: e.clock, Triggers: metricscount.New(metricscount.FlowTrigger)}
	batch := [][]byte{
		customerPayload("a", "CUST-001", "2026-07-07T01:00:00Z", flagIns, itemIns),
		customerPayload("b", "CUST-001", "2026-07-07T01:01:00Z", weeklyView, poisonIns),
		customerPayload("c", "CUST-001", "2026-07-07T01:02:00Z", weeklyView, itemIns),
	}
	rs, errs := svc.HandleBatch(context.Background(), batch)
	if errs[0] != nil || errs[2] != nil || rs[0].Outcome != store.AttributeApplied || rs[2].Outcome != store.AttributeApplied {
		t.Fatalf("batch-mates of the poison: %+v %v / %+v %v, want both applied", rs[0], errs[0], rs[2], errs[2])
	}
	if !automation.IsInvalid(errs[1]) || !strings.Contains(errs[1].Error(), "first_login") {
		t.Fatalf("poison: %v, want a permanent error naming first_login", errs[1])
	}
	if cs.batchFailures != 1 {
		t.Fatalf("%d batch transactions failed, want the one the poison failed (then one at a time)", cs.batchFailures)
	}
	asOf := e.clock.Now()
	item := func() string {
		vs, err := attribute.Read(context.Background(), e.st, store.AttributeEntity{BusinessUnitID: "bu-syd", EntityType: "ITEM", EntityID: "SKU-1"}, asOf)
		if err != nil || len(vs) != 1 {
			t.Fatalf("item: %+v %v", vs, err)
		}
		return fmt.Sprint(vs[0].Value)
	}
	if got := item(); got != "2" {
		t.Fatalf("item views %s, want 2 (a and c once each)", got)
	}
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", asOf)); got != "1" {
		t.Fatalf("weekly views %s, want 1 (c only: b wrote nothing)", got)
	}
	if len(rs[0].Triggers) != 1 || rs[0].Triggers[0].EventName != "Welcome" {
		t.Fatalf("a's trigger: %+v", rs[0].Triggers)
	}
	// The overview counts a's trigger once: the failed batch transaction wrote none.
	if got := svc.Triggers.DrainCounts(asOf); len(got) != 1 || got[0].Label != "Welcome" || got[0].N != 1 {
		t.Fatalf("triggers counted: %+v, want Welcome once", got)
	}
	ms, err := e.st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 100})
	if err != nil || len(ms) != 1 {
		t.Fatalf("outbox: %d rows %v, want a's one trigger", len(ms), err)
	}
	// b is not processed: after a fix of its instructions... it is still the same message;
	// its redelivery is refused again, and a and c are duplicates.
	rs, errs = svc.HandleBatch(context.Background(), batch)
	if errs[0] != nil || errs[2] != nil || rs[0].Outcome != store.AttributeDuplicate || rs[2].Outcome != store.AttributeDuplicate || !automation.IsInvalid(errs[1]) {
		t.Fatalf("redelivery: %+v %v", rs, errs)
	}
	if got := item(); got != "2" {
		t.Fatalf("item views %s after the redelivery, want 2", got)
	}
}

// A whole batch delivered again (the host abandoned it: a batch-mate's transient error, a
// deadline) applies nothing twice: every message is a Duplicate, no row, delta or outbox
// row changes, and it takes one transaction.
func TestHandleBatchRedeliveredWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := &counting{Store: e.st}
	svc := &attribute.Service{Store: cs, Clock: e.clock}
	var batch [][]byte
	for i := 0; i < 30; i++ {
		batch = append(batch, customerPayload(fmt.Sprint("r-", i), fmt.Sprintf("CUST-%d", i%3), fmt.Sprintf("2026-07-07T02:%02d:00Z", i), weeklyView, itemIns, hotIns))
	}
	if _, errs := svc.HandleBatch(context.Background(), batch); errs[0] != nil {
		t.Fatal(errs)
	}
	before := tables(t, e.st)
	cs.batches = 0
	rs, errs := svc.HandleBatch(context.Background(), batch)
	for i := range rs {
		if errs[i] != nil || rs[i].Outcome != store.AttributeDuplicate || len(rs[i].Changes) != 0 || len(rs[i].Triggers) != 0 {
			t.Fatalf("message %d again: %+v %v, want a Duplicate that changed nothing", i, rs[i], errs[i])
		}
	}
	if after := tables(t, e.st); !reflect.DeepEqual(before, after) {
		t.Fatalf("a redelivered batch changed the tables:\nbefore %q\nafter  %q", before, after)
	}
	if cs.batches != 1 || cs.applies != 0 {
		t.Fatalf("%d batch and %d single transactions, want the one batch", cs.batches, cs.applies)
	}
}

// A session's messages are applied in the batch's order: of ten views in one batch the
// tenth crosses the threshold (its trigger names it), and an item counter shared by two
// sessions sees them interleaved as given.
func TestHandleBatchKeepsSessionOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var batch [][]byte
	for i := 0; i < 12; i++ {
		batch = append(batch, customerPayload(fmt.Sprint("o-", i), "CUST-001", fmt.Sprintf("2026-07-07T03:%02d:00Z", i), weeklyView,
			fmt.Sprintf(recentIns, i)))
	}
	rs, errs := e.svc.HandleBatch(context.Background(), batch)
	for i := range rs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got := len(rs[i].Triggers); (i == 9) != (got == 1) {
			t.Fatalf("message %d fired %d triggers; want the tenth alone to fire", i, got)
		}
	}
	if id := rs[9].Triggers[0].Metadata.OriginalTriggerEventID; id != "o-9" {
		t.Fatalf("trigger from %s, want o-9", id)
	}
	asOf := e.clock.Now()
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "recently_viewed", asOf)); got != "[SKU-11 SKU-10 SKU-9]" {
		t.Fatalf("recently viewed %s, want the last three in order", got)
	}
	if got := fmt.Sprint(e.value(t, "CUSTOMER", "CUST-001", "weekly_view_count", asOf)); got != "2" {
		t.Fatalf("weekly views %s, want 2 (reset at the tenth)", got)
	}
}
