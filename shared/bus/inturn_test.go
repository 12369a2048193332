package bus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/automation-platform/automation/shared/bus"
)

// TestDrainInTurnServesALateDestination: a destination published to first is never empty
// (each delivery publishes the next message, as a busy upstream stage does); a destination
// published to later still gets the second delivery of DrainInTurn. Drain serves the first
// destination for as long as it has a message, so the late one waits for the whole limit
// (issue 39: campaign-results starved behind events and campaign-commands on the local
// host's loop).
func TestDrainInTurnServesALateDestination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, inTurn := range []bool{false, true} {
		b := bus.NewMemory(nil)
		var order []string
		seq := 0
		b.Subscribe("early", func(ctx context.Context, m bus.Message) error {
			order = append(order, "early")
			seq++
			return b.Publish(ctx, bus.Message{ID: fmt.Sprintf("e%d", seq), Destination: "early", Body: []byte("{}")})
		})
		b.SubscribeBatch("late", 100, func(_ context.Context, ms []bus.Message) error {
			for range ms {
				order = append(order, "late")
			}
			return nil
		})
		for _, m := range []bus.Message{{ID: "e0", Destination: "early"}, {ID: "l0", Destination: "late"}, {ID: "l1", Destination: "late"}} {
			m.Body = []byte("{}")
			if err := b.Publish(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		drain := b.Drain
		if inTurn {
			drain = b.DrainInTurn
		}
		n, err := drain(ctx, 10)
		if err != nil || n != 10 {
			t.Fatalf("inTurn %v: %d deliveries, %v", inTurn, n, err)
		}
		late := b.Len("late")
		if !inTurn {
			if late != 2 {
				t.Fatalf("Drain: late has %d waiting, want 2 (served only when early is empty): %v", late, order)
			}
			continue
		}
		if late != 0 || order[0] != "early" || order[1] != "late" || order[2] != "late" || order[3] != "early" {
			t.Fatalf("DrainInTurn: late has %d waiting; order %v, want early, late, late (one batch), early, ...", late, order)
		}
	}
}
