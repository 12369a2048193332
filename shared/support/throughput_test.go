package support_test

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/support"
)

// Throughput has one entry per minute of the window, ending with the current minute; hours
// are 1..24, and a business unit outside the scope is not found.
func TestThroughputWindowAndScope(t *testing.T) {
	e := newEnv(t, support.Config{})
	e.clock.Set(t0.Add(90 * time.Second))
	ctx := context.Background()
	tp, err := e.svc.Throughput(ctx, automation.AllBusinessUnits(), "", 2)
	if err != nil {
		t.Fatal(err)
	}
	last := tp.Minutes[len(tp.Minutes)-1].Minute
	if len(tp.Minutes) != 120 || !last.Equal(t0.Add(time.Minute)) || !tp.Since.Equal(t0.Add(2*time.Minute-2*time.Hour)) || tp.Sent != 0 {
		t.Fatalf("window: %d minutes, last %s, since %s", len(tp.Minutes), last, tp.Since)
	}
	for _, h := range []int{0, 25} {
		if _, err := e.svc.Throughput(ctx, automation.AllBusinessUnits(), "", h); automation.CodeOf(err) != automation.CodeInvalidInput {
			t.Errorf("hours %d: %v", h, err)
		}
	}
	if _, err := e.svc.Throughput(ctx, automation.BusinessUnits("bu-a"), "bu-b", 1); automation.CodeOf(err) != automation.CodeNotFound {
		t.Errorf("another business unit: %v", err)
	}
}
