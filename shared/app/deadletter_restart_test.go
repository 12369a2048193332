package app_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// dlProcess is one run of the embedded runtime on a data directory, at a clock of its own.
type dlProcess struct {
	rt *app.Runtime
}

func openDeadLetterProcess(t *testing.T, dir string, clock automation.Clock) *dlProcess {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_DATA_DIR": dir, "AUTOMATION_API_BUSINESS_UNITS": "*"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: clock, LogOutput: &logsink.Buffer{}, Seed: 7, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.LocalHost("../../functions", cfg, false, quietLog); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return &dlProcess{rt: rt}
}

func (p *dlProcess) do(method, path, body string, headers ...string) (int, []byte) {
	rec := serveJSON(p.rt.ListenerHandler(false), method, path, body, headers...)
	return rec.Code, rec.Body.Bytes()
}

// trackLate publishes a tracking message of unit bu-late (not created yet) and drains the
// bus: it is dead-lettered.
func (p *dlProcess) trackLate(t *testing.T, eventID string) {
	t.Helper()
	body := `{"event_id":"` + eventID + `","source_event":"Visit","customer_id":"C1","business_unit_id":"bu-late","timestamp":"2026-07-10T16:00:00Z",
	  "instructions":[{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"visits","operation":"INCREMENT"}]}`
	ctx := context.Background()
	if err := p.rt.Memory.Publish(ctx, bus.Message{ID: eventID + ":tracking", Destination: topology.TrackingTopic, SessionID: "C1", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.rt.Memory.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
}

// list returns the dead letters listed, by message id.
func (p *dlProcess) list(t *testing.T) map[string]deadletter.Item {
	t.Helper()
	code, b := p.do("GET", "/api/support/dead-letters", "")
	var page struct {
		Items []deadletter.Item `json:"items"`
	}
	if code != 200 || json.Unmarshal(b, &page) != nil {
		t.Fatalf("list: %d %s", code, b)
	}
	out := map[string]deadletter.Item{}
	for _, it := range page.Items {
		out[it.MessageID] = it
	}
	return out
}

func (p *dlProcess) visits(t *testing.T) string {
	t.Helper()
	rows, err := p.rt.Store.AttributeList(context.Background(), store.AttributeEntity{BusinessUnitID: "bu-late", EntityType: "CUSTOMER", EntityID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		return ""
	}
	return rows[0].ValueText
}

// The embedded runtime's dead letters survive a restart (a new Runtime on the same data
// directory): the list shows the same ones, with the same ids and ETags, except one
// discarded before the restart; a requeue after it, with the ETag read before it, delivers
// the message; new dead letters take ids no earlier one had; and what was requeued or
// discarded does not come back after the next restart.
func TestDeadLetterListSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	p1 := openDeadLetterProcess(t, dir, clock)
	p1.trackLate(t, "late-1")
	p1.trackLate(t, "late-2")
	before := p1.list(t)
	a, b := before["late-1:tracking"], before["late-2:tracking"]
	if a.ID == "" || b.ID == "" || a.ETag == "" {
		t.Fatalf("before the restart: %+v", before)
	}
	if code, body := p1.do("POST", "/api/support/dead-letters/discard", `{"id":"`+b.ID+`","etag":"`+b.ETag+`","reason":"a test event"}`,
		"X-Automation-Operator", "jane"); code != 200 {
		t.Fatalf("discard: %d %s", code, body)
	}
	if err := p1.rt.Close(); err != nil {
		t.Fatal(err)
	}

	clock.Advance(time.Hour)
	p2 := openDeadLetterProcess(t, dir, clock)
	after := p2.list(t)
	if len(after) != 1 || after["late-1:tracking"].ID != a.ID || after["late-1:tracking"].ETag != a.ETag ||
		after["late-1:tracking"].Reason != a.Reason || a.DeadLetteredOn == nil || !after["late-1:tracking"].DeadLetteredOn.Equal(*a.DeadLetteredOn) {
		t.Fatalf("after the restart: %+v, want late-1 as it was before: %+v", after, a)
	}
	// A new dead letter takes an id after both earlier ones (late-2's, discarded, too).
	p2.trackLate(t, "late-3")
	c := p2.list(t)["late-3:tracking"]
	if n, _ := strconv.Atoi(c.ID); n <= max(atoi(a.ID), atoi(b.ID)) {
		t.Fatalf("a new dead letter after the restart: %+v, want an id above %s and %s", c, a.ID, b.ID)
	}
	// The fix, then the requeue with the ETag read before the restart: delivered.
	if err := p2.rt.Store.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-late", Name: "Late", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	if code, body := p2.do("POST", "/api/support/dead-letters/requeue", `{"id":"`+a.ID+`","etag":"`+a.ETag+`","reason":"unit created"}`,
		"X-Automation-Operator", "jane"); code != 200 {
		t.Fatalf("requeue after the restart: %d %s", code, body)
	}
	if _, err := p2.rt.Memory.Drain(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if v := p2.visits(t); v != "1" {
		t.Fatalf("visits after the requeue: %q, want 1", v)
	}
	if err := p2.rt.Close(); err != nil {
		t.Fatal(err)
	}

	p3 := openDeadLetterProcess(t, dir, clock)
	if got := p3.list(t); len(got) != 1 || got["late-3:tracking"].ID != c.ID || got["late-3:tracking"].ETag != c.ETag {
		t.Fatalf("after the second restart: %+v, want late-3 only (late-1 requeued, late-2 discarded)", got)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// An action recorded in the audit by a process that died before it called the bus is taken
// over after the restart, once AbandonedAfter has passed: the dead letter is listed again
// with the ETag its audit row is keyed by, and the requeue is done (not answered "replayed"
// for a message nobody requeued).
func TestDeadLetterActionDiedBeforeRestartIsTakenOver(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))
	p1 := openDeadLetterProcess(t, dir, clock)
	p1.trackLate(t, "late-1")
	a := p1.list(t)["late-1:tracking"]
	// What Requeue writes before its bus call; then the process dies.
	if err := p1.rt.Store.DeadLetterAuditInsert(context.Background(), store.DeadLetterAudit{ETag: a.ETag, Action: store.DeadLetterRequeue,
		DeadLetterID: a.ID, Destination: a.Destination, MessageID: a.MessageID, BusinessUnitID: "bu-late", Operator: "ann",
		Reason: "unit created", ActedOn: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := p1.rt.Close(); err != nil {
		t.Fatal(err)
	}

	clock.Advance(deadletter.AbandonedAfter + time.Minute)
	p2 := openDeadLetterProcess(t, dir, clock)
	if err := p2.rt.Store.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-late", Name: "Late", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	code, body := p2.do("POST", "/api/support/dead-letters/requeue", `{"id":"`+a.ID+`","etag":"`+a.ETag+`","reason":"again"}`, "X-Automation-Operator", "bob")
	if code != 200 {
		t.Fatalf("requeue after the restart: %d %s", code, body)
	}
	if au, err := p2.rt.Store.DeadLetterAuditGet(context.Background(), a.ETag); err != nil || au.Operator != "bob" || au.Reason != "again" {
		t.Fatalf("audit after the requeue: %+v %v, want bob's, taken over", au, err)
	}
	if _, err := p2.rt.Memory.Drain(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if v := p2.visits(t); v != "1" {
		t.Fatalf("visits after the requeue: %q, want 1", v)
	}
	if got := p2.list(t); len(got) != 0 {
		t.Fatalf("listed after the requeue: %+v", got)
	}
}
