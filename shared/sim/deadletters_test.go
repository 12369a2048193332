package sim

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
)

// TestDeadLetterOperatorSeed50: seed 50 with every fault kind runs the dead-letter operator
// through each of its faults (an action that dies between its audit row and the bus call and
// is taken over, a bus that refuses, a lost answer repeated, the other action by a second
// operator), the fix, and the pace; every dead-letter invariant is evaluated and holds.
func TestDeadLetterOperatorSeed50(t *testing.T) {
	kinds, _ := ParseKinds("all")
	r := RunSeed(context.Background(), 50, kinds)
	if r.Err != nil {
		t.Fatalf("seed 50 (%d operations, faults %v):\n%v", r.Ops, r.Faults, r.Err)
	}
	for _, k := range []string{string(DLCrash), string(DLRefused), string(DLLostAnswer), string(DLOtherAction), "dead-letter-take-over", "dead-letter-fix", "dead-letter-paced"} {
		if r.Faults[k] == 0 {
			t.Errorf("%s never happened in seed 50: %s", k, joinCounts(r.Faults))
		}
	}
	for _, inv := range []string{InvDLRequeued, InvDLDiscarded, InvDLAudit, InvDLNo409} {
		if r.Checked[inv] == 0 {
			t.Errorf("%s not evaluated in seed 50: %s", inv, joinCounts(r.Checked))
		}
	}
}

// TestDeadLetterTakeOverAfterRestartSeed2: in seed 2 a dead-letter action dies between its
// audit row and the bus call with its process (the restart point of deadletter-crash); after
// the restart the dead letter is listed again with the etag read before it, and the first
// session takes the action over; every dead-letter invariant holds. Red when a restart
// empties the list (deadletter.Kept.Restore skipped): the dead letters are gone after the
// seed's earlier restarts, and no action reaches the restart point or its take-over.
func TestDeadLetterTakeOverAfterRestartSeed2(t *testing.T) {
	kinds, _ := ParseKinds("all")
	r := RunSeed(context.Background(), 2, kinds)
	if r.Err != nil {
		t.Fatalf("seed 2 (%d operations, faults %v):\n%v", r.Ops, r.Faults, r.Err)
	}
	if r.Faults["dead-letter-restart"] == 0 || r.Faults["dead-letter-take-over-after-restart"] != r.Faults["dead-letter-restart"] {
		t.Fatalf("seed 2: the restart point and its take-over: %s", joinCounts(r.Faults))
	}
}

// TestDeadLetterChecksCanFail: the final dead-letter checks report an audit row for an
// action the bus never did, an action the bus did without its audit row, a dead letter
// answered 409 and never acted on, a discarded message that took effect, and a message
// requeued after the fix that never did; the same record without those defects passes.
func TestDeadLetterChecksCanFail(t *testing.T) {
	db, err := migrated()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "automation.db")
	if err := os.WriteFile(path, db, 0o644); err != nil {
		t.Fatal(err)
	}
	rw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := rw.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	audit := func(etag, action string) {
		exec(`INSERT INTO DeadLetterAudit (ETag, Action, DeadLetterId, Destination, MessageId, Operator, Reason, ActedOn) VALUES (?, ?, '1', 'domain-events', 'm', 'op', 'r', 0)`, etag, action)
	}
	snapshot := func(entity, eventID string) {
		exec(`INSERT INTO SourceSnapshot (EntityType, EntityGuid, BusinessUnitId, Revision, IsDeleted, DataJson, LastEventId, UpdatedOn) VALUES ('ClassSession', ?, ?, 1, 0, '{}', ?, 0)`, entity, lateUnit, eventID)
	}
	discarded, requeued := events.Identity(poisonSource, "dl-d"), events.Identity(poisonSource, "dl-r")
	state := func() *dlState {
		return &dlState{busDone: map[string][]store.DeadLetterAction{"e-ok": {store.DeadLetterRequeue}, "e-noaudit": {store.DeadLetterDiscard}},
			conflicted: map[string]string{"e-409": "m"},
			last: map[string]dlLast{discarded: {action: store.DeadLetterDiscard, fixed: true, etag: "e-d"},
				requeued: {action: store.DeadLetterRequeue, fixed: true, etag: "e-r"}},
			events: map[string]dlEvent{discarded: {id: "dl-d", entity: "ent-d", unit: lateUnit}, requeued: {id: "dl-r", entity: "ent-r", unit: lateUnit}}}
	}
	audit("e-ok", "Requeue")
	audit("e-nobus", "Discard")
	snapshot("ent-d", "dl-d")
	check := func() map[string]int {
		c := &checker{dbPath: path, checked: map[string]int{}, dl: state()}
		defer c.close()
		r := &report{c: c}
		if err := c.checkDeadLetters(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, v := range r.vs {
			got[v.Invariant]++
			t.Log(v)
		}
		return got
	}
	got := check()
	if got[InvDLAudit] != 2 || got[InvDLNo409] != 1 || got[InvDLDiscarded] != 1 || got[InvDLRequeued] != 1 {
		t.Fatalf("violations %v, want 2 %s (a row without its bus action, a bus action without its row), one each of %s, %s, %s",
			got, InvDLAudit, InvDLNo409, InvDLDiscarded, InvDLRequeued)
	}
	// Repaired: the bus did the discard the row records and the one it lacked, the 409'd
	// dead letter was taken over, the discarded message's effect is gone, the requeued one's
	// happened.
	exec(`DELETE FROM DeadLetterAudit WHERE ETag = 'e-nobus'`)
	audit("e-noaudit", "Discard")
	audit("e-409", "Requeue")
	exec(`DELETE FROM SourceSnapshot`)
	snapshot("ent-r", "dl-r")
	c := &checker{dbPath: path, checked: map[string]int{}, dl: state()}
	defer c.close()
	c.dl.busDone["e-409"] = []store.DeadLetterAction{store.DeadLetterRequeue}
	r := &report{c: c}
	if err := c.checkDeadLetters(context.Background(), r); err != nil || len(r.vs) != 0 {
		t.Fatalf("repaired record: %v %v", r.vs, err)
	}
}
