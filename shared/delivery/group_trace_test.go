package delivery_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/telemetry/otlptest"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
	"github.com/automation-platform/automation/shared/topology"
)

// The dispatcher's shared committer records the outcomes of every batch running in one
// group, yet ran under the context of the batch whose send started it: the group's writes
// (its facts' outbox row, and the publish after it) joined that one batch's trace, whatever
// sends of other traces the group served (found by the hostile review). A group is traced
// apart: its "delivery.record" span is a root, in no batch's or message's trace, linked to
// the "delivery.send" span of each outcome in it, and its facts' row carries that span.
// Two batches of two invocations, each message of its own trace, recorded in one group (the
// first commit is held until the second batch's send has finished). Not parallel:
// telemetry installs the process's OTel globals.
func TestGroupCommitIsARootLinkedToEachSend(t *testing.T) {
	rcv, p := telemetrytest.Export(t, telemetry.Options{Sampler: telemetry.SamplerParentBasedTraceIDRatio, Ratio: 1})
	ctx := context.Background()

	prov := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: prov}})
	gate := &gatedStore{DispatchStore: e.st, entered: make(chan struct{}), release: make(chan struct{})}
	e.disp.Store = gate
	keys := queueN(t, e, "log", 2)
	msgTraces := []string{"0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"}
	msgs := make([]bus.Message, 2)
	for i, k := range keys {
		msgs[i] = dispatchMsg(k)
		msgs[i].TraceParent = "00-" + msgTraces[i] + "-b7ad6b7169203331-01"
	}
	run := func(name string, m bus.Message) (chan []error, string) {
		bctx, span := telemetry.Start(ctx, name, 0) // the batch's invocation span
		done := make(chan []error, 1)
		go func() {
			defer span.End()
			done <- e.disp.HandleBatch(bctx, []bus.Message{m})
		}()
		return done, span.SpanContext().TraceID().String()
	}
	doneA, batchA := run("invocation-a", msgs[0])
	<-gate.entered // batch A's send started the committer, which is held
	doneB, batchB := run("invocation-b", msgs[1])
	for prov.deliveries() < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // batch B's outcome is handed over right after its send
	close(gate.release)
	for _, done := range []chan []error{doneA, doneB} {
		for i, err := range <-done {
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
	}
	if err := p.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}

	var records []otlptest.Span
	sendSpan := map[string]string{} // trace id -> the delivery.send span in it
	for _, s := range rcv.Spans() {
		switch {
		case s.Name == "delivery.record":
			records = append(records, s)
		case strings.HasPrefix(s.Name, "delivery.send "):
			sendSpan[s.TraceID] = s.SpanID
		}
	}
	// The group's facts (revision 3, the outcome; revision 2 is each batch's claim, written
	// in its own batch's trace) are one row: in neither batch's trace.
	rows, err := e.st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var facts []store.OutboxMessage
	for _, m := range rows {
		if m.Destination == topology.DeliveryFactsTopic && strings.Contains(m.MessageID, ":r3") {
			facts = append(facts, m)
		}
	}
	if len(facts) != 1 {
		t.Fatalf("%d rows of the group's facts, want 1: %+v", len(facts), facts)
	}
	for name, tr := range map[string]string{"batch A's": batchA, "batch B's": batchB} {
		if strings.Contains(facts[0].TraceParent, tr) {
			t.Errorf("the group's facts row carries %q, in %s trace: the group served both batches", facts[0].TraceParent, name)
		}
	}
	if len(records) != 1 {
		t.Fatalf("%d delivery.record spans, want 1 (one group for both batches): %+v", len(records), records)
	}
	rec := records[0]
	if want := "00-" + rec.TraceID + "-" + rec.SpanID + "-01"; facts[0].TraceParent != want {
		t.Errorf("the group's facts row carries %q, want the group's span %q", facts[0].TraceParent, want)
	}
	if rec.ParentID != "" || slices.Contains([]string{batchA, batchB, msgTraces[0], msgTraces[1]}, rec.TraceID) {
		t.Errorf("the group's span %+v: want a root in a trace of its own, not a batch's (%s, %s) or a message's", rec, batchA, batchB)
	}
	for _, tr := range msgTraces {
		if sendSpan[tr] == "" {
			t.Errorf("no delivery.send span in the message's trace %s", tr)
		}
		if !slices.Contains(rec.Links, tr) {
			t.Errorf("the group's span links to %v, want the send of trace %s among them", rec.Links, tr)
		}
	}
	if rec.Attributes["automation.count"] != "2" {
		t.Errorf("the group's span counts %q outcomes, want 2", rec.Attributes["automation.count"])
	}
}
