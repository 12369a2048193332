package campaign_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

// The outcomes of a batch's commands are written in one CampaignFinishMany, which runs under
// one context: the first outcome's. With telemetry on, the other commands' outbox rows (the
// finish's fact, the result message) carried that first command's traceparent, so a
// command's result joined another command's trace (found by the hostile review). Each
// command's rows carry its own command's trace (CampaignFinishParams.Trace): two commands of
// two traces, finished in one group, each result and fact carrying its own campaign.command
// span, and each post-result hook (the budget guard's, which writes the fee facts) run in
// its own command's trace.
// Not parallel: telemetry installs the process's OTel globals.
func TestBatchFinishKeepsEachCommandsTrace(t *testing.T) {
	rcv, p := telemetrytest.Export(t, telemetry.Options{Sampler: telemetry.SamplerParentBasedTraceIDRatio, Ratio: 1})
	ctx := context.Background()

	r := newRig(t, campaign.ProviderConfig{})
	r.topUpOnly("c", "sim")
	events := []string{"e1", "e2"}
	cmds := r.fireCommands(t, events)
	st := &countingClaims{CampaignStore: r.Store}
	w := *r.Worker
	w.Store = st
	w.FinishGather = time.Hour // only "every command waits" writes: both in one group
	var mu sync.Mutex
	hookTrace := map[string]string{} // command id -> the trace id its post-result hook ran in
	w.AfterResult = func(ctx context.Context, _ *sql.Tx, s campaign.Step, _ store.CampaignCommand) error {
		mu.Lock()
		defer mu.Unlock()
		hookTrace[s.Command.CommandID] = trace.SpanContextFromContext(ctx).TraceID().String()
		return nil
	}
	traces := []string{"0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"}
	parents := []string{"00-" + traces[0] + "-b7ad6b7169203331-01", "00-" + traces[1] + "-00f067aa0ba902b7-01"}
	for i, err := range w.HandleBatch(ctx, cmds, parents) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if st.finishMany != 1 || st.finishedInMany != 2 || st.finishOne != 0 {
		t.Fatalf("outcomes: %d CampaignFinishMany of %d in all, %d alone; want one of 2", st.finishMany, st.finishedInMany, st.finishOne)
	}
	msgs, err := r.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	commandSpan := map[string]string{} // trace id -> the campaign.command span in it
	for _, sp := range rcv.Spans() {
		if sp.Name == "campaign.command" {
			commandSpan[sp.TraceID] = sp.SpanID
		}
	}
	for i, body := range cmds {
		var m campaign.CommandMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		want := "00-" + traces[i] + "-" + commandSpan[traces[i]] + "-01"
		if commandSpan[traces[i]] == "" {
			t.Fatalf("no campaign.command span in trace %s (command %s)", traces[i], m.CommandID)
		}
		finished := 0
		for _, o := range msgs {
			// The finish's fact and result message (revision 3); the claim's fact (r2) was
			// written by the batch's claim, under the batch's context.
			if !strings.HasPrefix(o.MessageID, m.CommandID+":") || !strings.HasSuffix(o.MessageID, ":r3") {
				continue
			}
			finished++
			if o.TraceParent != want {
				t.Errorf("command %d's %s (%s) carries %q, want its own command's span %q", i, o.MessageID, o.Destination, o.TraceParent, want)
			}
		}
		if got := hookTrace[m.CommandID]; got != traces[i] {
			t.Errorf("command %d's post-result hook ran in trace %q, want its own %q (what it writes, the fee facts, joins that trace)", i, got, traces[i])
		}
		if finished != 2 {
			t.Errorf("command %d (%s): %d outbox rows of its finish, want 2 (its fact and its result)", i, m.CommandID, finished)
		}
	}
}
