package scheduler_test

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/telemetry/telemetrytest"
)

// The poller counts its claims (automation.due.claimed) and each claimed row's recorded
// outcome (automation.due.outcomes by outcome). Not parallel: telemetry installs the
// process's OTel globals (parallel tests start after this one ends).
func TestPollerCountsClaimsAndOutcomes(t *testing.T) {
	p := telemetrytest.Prometheus(t)
	e := newEnv(t, scheduler.Config{})
	e.ensure(t, 1, t0.Add(time.Minute))
	e.ensure(t, 2, t0.Add(time.Minute))
	e.clock.Set(t0.Add(time.Minute))
	if r := e.run(t); r.Claimed != 2 || r.Completed != 2 {
		t.Fatalf("result %+v", r)
	}
	claimed := telemetrytest.Series(t, p.Registry, "automation_due_claimed_total")
	outcomes := telemetrytest.Series(t, p.Registry, "automation_due_outcomes_total")
	if claimed[""] != 2 || outcomes["automation_outcome=Completed"] != 2 {
		t.Fatalf("counters claimed %v, outcomes %v, want 2 claimed and 2 Completed", claimed, outcomes)
	}
}
