package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// hostBatch builds a host-shaped Service Bus batch invocation of function (dataType string,
// cardinality many: the bodies as one JSON array of strings, every Metadata array as long as
// the batch) from the TrackingProcessor fixture's shape, with the given bodies, MessageIds and
// SessionIds (nil: a queue without sessions).
func hostBatch(t *testing.T, function string, bodies []string, ids, sessions []string) []byte {
	t.Helper()
	var p map[string]map[string]any
	if err := json.Unmarshal(fixture(t, "TrackingProcessor_session_batch.json"), &p); err != nil {
		t.Fatal(err)
	}
	arr, _ := json.Marshal(bodies)
	p["Data"]["message"] = string(arr)
	for k, v := range p["Metadata"] {
		s, ok := v.(string)
		if !ok || !strings.HasSuffix(k, "Array") {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal([]byte(s), &items); err != nil || len(items) == 0 {
			t.Fatalf("fixture %s: %v", k, err)
		}
		out := make([]json.RawMessage, len(bodies))
		for i := range out {
			out[i] = items[i%len(items)]
		}
		b, _ := json.Marshal(out)
		p["Metadata"][k] = string(b)
	}
	b, _ := json.Marshal(ids)
	p["Metadata"]["MessageIdArray"] = string(b)
	if sessions == nil {
		nulls, _ := json.Marshal(make([]any, len(bodies)))
		p["Metadata"]["SessionIdArray"] = string(nulls)
	} else {
		b, _ = json.Marshal(sessions)
		p["Metadata"]["SessionIdArray"] = string(b)
	}
	p["Metadata"]["sys"].(map[string]any)["MethodName"] = function
	out, _ := json.Marshal(p)
	return out
}

// CampaignDispatch and CampaignWorker are batch triggers (cardinality many, dataType string):
// a host-shaped session batch of two trigger events of one customer with an unreadable one
// between them dead-letters that one with its record and starts both executions (one
// transaction); a host-shaped batch of their two commands, one of them twice and an
// unreadable message between them, dead-letters that one and runs each command once. Each
// batch again (the host redelivers it) starts and runs nothing twice.
func TestCampaignChainHostShapedBatches(t *testing.T) {
	e := newFnEnv(t, nil)
	ctx := context.Background()
	def := `{"name":"Welcome","status":"ACTIVE","triggers":["First_Login_Reward"],"actions":[{"key":"hello","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Hi","text":"Welcome"}}]}`
	if _, err := e.rt.Store.CampaignSave(ctx, store.CampaignSaveParams{Campaign: store.Campaign{BusinessUnitID: "bu-syd", CampaignID: "welcome", Name: "Welcome",
		Status: store.CampaignActive, RunID: "r1", Triggers: []string{"First_Login_Reward"}, DefinitionJSON: def}, Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	trigger := func(id string) string {
		return `{"event_id":"` + id + `","event_name":"First_Login_Reward","customer_id":"CUST-001","business_unit_id":"bu-syd"}`
	}
	triggers := hostBatch(t, topology.CampaignDispatch, []string{trigger("trg-1"), `{"event_id":`, trigger("trg-2")},
		[]string{"trg-1:events", "trg-2:poison", "trg-2:events"}, []string{"CUST-001", "CUST-001", "CUST-001"})
	e.postBatchTwice(t, topology.CampaignDispatch, triggers, 3, "trg-2:poison", "event_id", func(round int) {
		if es, err := e.rt.Store.CampaignExecutionListByRecipient(ctx, "bu-syd", "CUST-001", 0, 10); err != nil || len(es) != 2 {
			t.Fatalf("CampaignDispatch round %d: %d executions (%v), want 2, each started once", round, len(es), err)
		}
	})
	msgs, err := e.rt.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var cmds, ids []string
	for _, m := range msgs {
		if m.Destination == topology.CampaignCommandsQueue {
			cmds, ids = append(cmds, string(m.Body)), append(ids, m.MessageID)
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("%d command messages, want 2 (one per execution)", len(cmds))
	}
	batch := hostBatch(t, topology.CampaignWorker, []string{cmds[0], `{"commandId":`, cmds[1], cmds[0]},
		[]string{ids[0], "cmd-poison", ids[1], ids[0]}, nil)
	e.postBatchTwice(t, topology.CampaignWorker, batch, 4, "cmd-poison", "", func(round int) {
		for _, id := range ids {
			c, err := e.rt.Store.CampaignCommandGet(ctx, id)
			if err != nil || c.Status != store.CommandSucceeded || c.AttemptCount != 1 {
				t.Fatalf("CampaignWorker round %d: command %s %s after %d attempts (%v), want SUCCEEDED once", round, id, c.Status, c.AttemptCount, err)
			}
		}
	})
}
