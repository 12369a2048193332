package app_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/topology"
)

// TestEmbeddedRelayLeavesOutAFullDestination (issue 39): the embedded runtime's relay counts
// a destination as full once the in-process bus holds half of the in-flight bound (500) of its
// messages, and only that destination: its claims then leave that destination's rows out
// (delivery.Relay.FullDestinations) while the others still have room (Relay.Room).
func TestEmbeddedRelayLeavesOutAFullDestination(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string { return map[string]string{"AUTOMATION_DATA_DIR": dir}[k] })
	if err != nil {
		t.Fatal(err)
	}
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC)), Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if rt.Memory == nil || rt.Relay.FullDestinations == nil || rt.Relay.Room == nil {
		t.Fatal("the embedded relay has no per-destination bound")
	}
	publish := func(dst string, n int) {
		t.Helper()
		for i := range n {
			if err := rt.Memory.Publish(context.Background(), bus.Message{ID: fmt.Sprintf("%s-%d", dst, i), Destination: dst, Body: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(topology.CampaignCommandsQueue, 499)
	publish(topology.TrackingTopic, 10)
	if got := rt.Relay.FullDestinations(); len(got) != 0 {
		t.Fatalf("full at 499 = %v; want none", got)
	}
	if err := rt.Memory.Publish(context.Background(), bus.Message{ID: "one-more", Destination: topology.CampaignCommandsQueue, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if got := rt.Relay.FullDestinations(); !slices.Equal(got, []string{topology.CampaignCommandsQueue}) {
		t.Fatalf("full at 500 = %v; want only %s", got, topology.CampaignCommandsQueue)
	}
	if !rt.Relay.Room() {
		t.Fatal("the bus as a whole has no room at 510 messages; want room for the other destinations")
	}
}
