package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/telemetry"
)

// The poller counts its claims (automation.due.claimed) and each claimed row's recorded
// outcome (automation.due.outcomes by outcome). Not parallel: telemetry installs the
// process's OTel globals (parallel tests start after this one ends).
func TestPollerCountsClaimsAndOutcomes(t *testing.T) {
	ctx := context.Background()
	p, err := telemetry.Setup(ctx, telemetry.Options{MetricsPrometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(ctx)
	e := newEnv(t, scheduler.Config{})
	e.ensure(t, 1, t0.Add(time.Minute))
	e.ensure(t, 2, t0.Add(time.Minute))
	e.clock.Set(t0.Add(time.Minute))
	if r := e.run(t); r.Claimed != 2 || r.Completed != 2 {
		t.Fatalf("result %+v", r)
	}
	fams, err := p.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	if got["automation_due_claimed_total"] != 2 || got["automation_due_outcomes_total,automation_outcome=Completed"] != 2 {
		t.Fatalf("counters %v, want 2 claimed and 2 Completed", got)
	}
}
