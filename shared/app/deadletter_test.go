package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// A message that still fails after ingest (here a tracking message whose business unit was
// created only later) is not lost in a log line: GET /api/support/dead-letters lists it
// with its reason, route and original message, scoped by business unit; the events metrics
// count it; after the fix, POST /api/support/dead-letters/requeue delivers it again and it
// is applied (issue 33, item 1).
func TestDeadLetterListedCountedAndRequeued(t *testing.T) {
	e := openGateway(t, t.TempDir())
	ctx := context.Background()
	body := `{"event_id":"late-1","source_event":"Visit","customer_id":"C1","business_unit_id":"bu-late","timestamp":"2026-07-10T16:00:00Z",
	  "instructions":[{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"visits","operation":"INCREMENT"}]}`
	if err := e.rt.Memory.Publish(ctx, bus.Message{ID: "late-1:tracking", Destination: topology.TrackingTopic, SessionID: "C1", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Memory.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// Through the gateway's listener handler (what e.srv serves), in-process.
	do := func(method, path, body string, headers ...string) (int, []byte) {
		rec := serveJSON(e.srv.Config.Handler, method, path, body, headers...)
		return rec.Code, rec.Body.Bytes()
	}
	var page struct {
		Items      []deadletter.Item `json:"items"`
		NextCursor string            `json:"nextCursor"`
	}
	code, b := do("GET", "/api/support/dead-letters?businessUnitId=bu-late", "")
	if code != 200 || json.Unmarshal(b, &page) != nil || len(page.Items) != 1 {
		t.Fatalf("list: %d %s", code, b)
	}
	dl := page.Items[0]
	if dl.Destination != topology.TrackingTopic || dl.MessageID != "late-1:tracking" || dl.BusinessUnitID != "bu-late" ||
		!strings.Contains(dl.Reason, `business unit "bu-late" is not known`) || !strings.Contains(string(dl.Body), `"event_id":"late-1"`) {
		t.Fatalf("dead letter: %+v", dl)
	}
	// The metrics count it, per route.
	code, b = do("GET", eventsapi.MetricsPath, "")
	var m eventsapi.MetricsResponse
	if code != 200 || json.Unmarshal(b, &m) != nil || len(m.DeadLetters) != 1 || m.DeadLetters[0] != (deadletter.Count{Destination: topology.TrackingTopic, Count: 1}) {
		t.Fatalf("metrics: %d %s", code, b)
	}
	// Another unit's caller neither sees it nor can requeue it.
	code, b = do("GET", "/api/support/dead-letters", "", "X-Automation-Business-Units", "bu-1")
	if code != 200 || strings.Contains(string(b), "late-1") {
		t.Fatalf("bu-1's list: %d %s", code, b)
	}
	if code, b = do("POST", "/api/support/dead-letters/requeue", `{"id":"`+dl.ID+`","reason":"unit created"}`,
		"X-Automation-Operator", "jane", "X-Automation-Business-Units", "bu-1"); code != 404 {
		t.Fatalf("requeue out of scope: %d %s", code, b)
	}
	// A requeue is audited: without an operator it is refused.
	if code, b = do("POST", "/api/support/dead-letters/requeue", `{"id":"`+dl.ID+`"}`); code != 400 {
		t.Fatalf("requeue without an operator: %d %s", code, b)
	}
	// Both actions on one dead letter read the same request: no id is 422 naming it (before
	// the operator is asked for), no operator 400 naming the header; neither changes anything.
	for _, path := range []string{"/api/support/dead-letters/requeue", "/api/support/dead-letters/discard"} {
		if code, b = do("POST", path, `{"reason":"fixed"}`); code != 422 || !strings.Contains(string(b), `"field":"id"`) {
			t.Fatalf("%s without an id: %d %s", path, code, b)
		}
		if code, b = do("POST", path, `{"id":"`+dl.ID+`","reason":"fixed"}`); code != 400 || !strings.Contains(string(b), `"field":"X-Automation-Operator"`) {
			t.Fatalf("%s without an operator: %d %s", path, code, b)
		}
	}
	// The fix, then the requeue: applied, and the list is empty.
	if err := e.rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-late", Name: "Late", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	if code, b = do("POST", "/api/support/dead-letters/requeue", `{"id":"`+dl.ID+`","reason":"unit created"}`, "X-Automation-Operator", "jane"); code != 200 {
		t.Fatalf("requeue: %d %s", code, b)
	}
	if _, err := e.rt.Memory.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	rows, err := e.rt.Store.AttributeList(ctx, store.AttributeEntity{BusinessUnitID: "bu-late", EntityType: "CUSTOMER", EntityID: "C1"})
	if err != nil || len(rows) != 1 || rows[0].ValueText != "1" {
		t.Fatalf("after the requeue: %+v %v, want visits = 1", rows, err)
	}
	code, b = do("GET", "/api/support/dead-letters", "")
	if code != 200 || json.Unmarshal(b, &page) != nil || len(page.Items) != 0 {
		t.Fatalf("list after the requeue: %d %s", code, b)
	}
	if code, b = do("POST", "/api/support/dead-letters/requeue", `{"id":"`+dl.ID+`","reason":"again"}`, "X-Automation-Operator", "jane"); code != 404 {
		t.Fatalf("a second requeue: %d %s", code, b)
	}
}
