package app_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
)

// TrackingProcessor through the in-process route: a tracking message is applied once (a
// redelivery is a duplicate), its trigger goes to the events topic on the next relay, a hot
// counter's delta is folded by the OutboxRelay timer, and a payload that fails permanently is
// dead-lettered with its reason while nothing of it is written.
func TestTrackingProcessorInProcess(t *testing.T) {
	e := openGateway(t, t.TempDir())
	ctx := context.Background()
	if err := e.rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "Asia/Ho_Chi_Minh"}); err != nil {
		t.Fatal(err)
	}
	host := e.host
	good := `{"event_id":"s-1","source_event":"Survey_Completed","customer_id":"C1","business_unit_id":"bu-1","timestamp":"2026-07-10T16:00:00Z",
	  "instructions":[{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"survey_NPS_completed","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"Survey_Reward"}]},
	                  {"target_entity_id":"SKU-1","entity_type":"ITEM","attribute_code":"total_redeem_count","operation":"INCREMENT","hot":true,"step":"2"}]}`
	for i := 0; i < 2; i++ {
		code, body, err := host.Deliver(ctx, topology.TrackingTopic, bus.Message{ID: "s-1:tracking", Destination: topology.TrackingTopic, SessionID: "C1", Body: []byte(good)})
		if err != nil || code != 200 {
			t.Fatalf("delivery %d: %d %s %v", i, code, body, err)
		}
	}
	if _, err := e.rt.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	var trig []string
	for _, r := range e.routed {
		if r.Topic == topology.EventsTopic {
			trig = append(trig, r.EventID)
		}
	}
	if len(trig) != 1 || !strings.HasPrefix(trig[0], "attr-gen-") {
		t.Fatalf("triggers routed: %v", trig)
	}
	rows, err := e.rt.Store.AttributeList(ctx, store.AttributeEntity{BusinessUnitID: "bu-1", EntityType: "ITEM", EntityID: "SKU-1"})
	if err != nil || len(rows) != 1 || rows[0].ValueText != "2" {
		t.Fatalf("hot counter after the relay timer: %+v %v (want folded 2, once)", rows, err)
	}
	bad := `{"event_id":"s-2","customer_id":"C1","business_unit_id":"bu-1","timestamp":"2026-07-10T16:00:00Z",
	  "instructions":[{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"visits","operation":"INCREMENT"},
	                  {"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"survey_NPS_completed","operation":"APPEND_UNIQUE","value":"x","max_items":3}]}`
	code, body, err := host.Deliver(ctx, topology.TrackingTopic, bus.Message{ID: "s-2:tracking", Destination: topology.TrackingTopic, SessionID: "C1", Body: []byte(bad)})
	if err != nil || code != 200 {
		t.Fatalf("a permanent error is completed (dead-lettered), not retried: %d %s %v", code, body, err)
	}
	rec, err := e.rt.Trace.GetBlob(ctx, trace.DeadLetterBlobName(topology.TrackingProcessor, "s-2:tracking"))
	if err != nil || !strings.Contains(string(rec), "survey_NPS_completed") {
		t.Fatalf("dead-letter record: %s %v", rec, err)
	}
	vs, err := attribute.Read(ctx, e.rt.Store, store.AttributeEntity{BusinessUnitID: "bu-1", EntityType: "CUSTOMER", EntityID: "C1"}, e.rt.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Code == "visits" {
			t.Fatalf("half-applied: %+v", v)
		}
	}
}

// The OutboxRelay timer purges the attribute ledger past the dedupe window
// (AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS, 35 days by default): 34 days on, a redelivery is
// still a duplicate; 36 days on, the ledger rows are gone.
func TestAttributeLedgerPurgedOnTheRelayTimer(t *testing.T) {
	e := openGateway(t, t.TempDir())
	ctx := context.Background()
	if e.rt.AttributePurger == nil || e.rt.AttributePurger.Window != 35*24*time.Hour {
		t.Fatalf("purger %+v", e.rt.AttributePurger)
	}
	if err := e.rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "Asia/Ho_Chi_Minh"}); err != nil {
		t.Fatal(err)
	}
	msg := `{"event_id":"v-1","source_event":"Visit","customer_id":"C1","business_unit_id":"bu-1","timestamp":"2026-07-10T16:00:00Z",
	  "instructions":[{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"visits","operation":"INCREMENT"}]}`
	deliver := func() {
		t.Helper()
		if code, body, err := e.host.Deliver(ctx, topology.TrackingTopic, bus.Message{ID: "v-1:tracking", Destination: topology.TrackingTopic, SessionID: "C1", Body: []byte(msg)}); err != nil || code != 200 {
			t.Fatalf("%d %s %v", code, body, err)
		}
	}
	ledger := func() (n int) {
		t.Helper()
		if err := e.rt.Store.(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT COUNT(*) FROM AttributeProcessedEvent`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	visits := func() string {
		t.Helper()
		rows, err := e.rt.Store.AttributeList(ctx, store.AttributeEntity{BusinessUnitID: "bu-1", EntityType: "CUSTOMER", EntityID: "C1"})
		if err != nil || len(rows) != 1 {
			t.Fatalf("%+v %v", rows, err)
		}
		return rows[0].ValueText
	}
	deliver()
	clock := e.rt.Clock.(*automation.ManualClock)
	clock.Advance(34 * 24 * time.Hour)
	if _, err := e.rt.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	deliver()
	if ledger() != 1 || visits() != "1" {
		t.Fatalf("inside the window: ledger %d, visits %s", ledger(), visits())
	}
	clock.Advance(2 * 24 * time.Hour)
	if _, err := e.rt.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if n := ledger(); n != 0 {
		t.Fatalf("past the window: %d ledger rows", n)
	}
}

// TrackingProcessor is a batch trigger on the embedded runtime: a session's waiting tracking
// messages come in one batch and are applied in one transaction, in order; a poison message
// in the middle is dead-lettered alone (its batch-mates applied, the batch answered 200), and
// the whole batch delivered again applies nothing twice.
func TestTrackingProcessorTakesBatches(t *testing.T) {
	e := openGateway(t, t.TempDir())
	ctx := context.Background()
	if err := e.rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "One", TimeZoneID: "Asia/Ho_Chi_Minh"}); err != nil {
		t.Fatal(err)
	}
	bh, most := e.rt.Memory.BatchHandler(topology.TrackingTopic)
	if bh == nil || most != topology.MaxMessageBatchSize {
		t.Fatalf("tracking's consumer: batch handler %v of %d, want a batch trigger of %d", bh != nil, most, topology.MaxMessageBatchSize)
	}
	var sizes []int
	e.rt.Memory.SubscribeBatch(topology.TrackingTopic, most, func(ctx context.Context, ms []bus.Message) error {
		sizes = append(sizes, len(ms))
		return bh(ctx, ms)
	})
	body := func(id, ins string) []byte {
		return []byte(`{"event_id":"` + id + `","customer_id":"C1","business_unit_id":"bu-1","timestamp":"2026-07-10T15:00:00Z","instructions":[` + ins + `]}`)
	}
	const visit = `{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"visits","operation":"INCREMENT"}`
	const flag = `{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"flag","operation":"SET_TRUE_ONCE"}`
	var msgs []bus.Message
	for i, b := range [][]byte{body("t-1", flag+","+visit), body("t-2", visit+","+strings.Replace(flag, "SET_TRUE_ONCE", "INCREMENT", 1)), body("t-3", visit), body("t-4", visit)} {
		msgs = append(msgs, bus.Message{ID: fmt.Sprintf("t-%d:tracking", i+1), Destination: topology.TrackingTopic, SessionID: "C1", Body: b})
	}
	for _, m := range msgs {
		if err := e.rt.Memory.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.rt.Memory.DrainDestination(ctx, topology.TrackingTopic, 0); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sizes) != "[4]" {
		t.Fatalf("batches %v, want the session's four messages in one", sizes)
	}
	visits := func() string {
		vs, err := attribute.Read(ctx, e.rt.Store, store.AttributeEntity{BusinessUnitID: "bu-1", EntityType: "CUSTOMER", EntityID: "C1"}, e.rt.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if v.Code == "visits" {
				return fmt.Sprint(v.Value)
			}
		}
		return ""
	}
	if got := visits(); got != "3" {
		t.Fatalf("visits %s, want 3 (t-1, t-3, t-4; the poison t-2 wrote nothing)", got)
	}
	if rec, err := e.rt.Trace.GetBlob(ctx, trace.DeadLetterBlobName(topology.TrackingProcessor, "t-2:tracking")); err != nil || !strings.Contains(string(rec), "flag") {
		t.Fatalf("the poison's dead-letter record: %s %v", rec, err)
	}
	if n := e.rt.Memory.Len(topology.TrackingTopic); n != 0 {
		t.Fatalf("%d tracking messages left on the bus, want every one settled", n)
	}
	// The host brings the whole batch again: nothing is applied twice.
	for i := range msgs {
		msgs[i].DeliveryCount = 2
	}
	if err := bh(ctx, msgs); err != nil {
		t.Fatalf("the batch again: %v", err)
	}
	if got := visits(); got != "3" {
		t.Fatalf("visits %s after the batch came again, want 3", got)
	}
}
