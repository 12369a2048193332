package sim

import (
	"context"
	"testing"
)

// Regression tests: one per bug the simulator found, named after the seed that found it
// (docs/simulation.md). Each runs its seed with every fault kind, as `automation sim -seed`
// does, and fails with the violations the bug produced.

func runSeedClean(t *testing.T, seed uint64) {
	t.Helper()
	kinds, _ := ParseKinds("all")
	if r := RunSeed(context.Background(), seed, kinds); r.Err != nil {
		t.Fatalf("seed %d (%d operations, faults %v):\n%v", seed, r.Ops, r.Faults, r.Err)
	}
}

// TestSeed22ProjectionCatchesUpAfterRestart: a crash while the in-process bus still held
// delivery-fact messages the relay had marked published lost them for good, and the
// delivery projection stayed behind NotificationJob (projection-recomputed). Fixed by
// Runtime.CatchUpProjection at start (delivery.Projector.CatchUp).
func TestSeed22ProjectionCatchesUpAfterRestart(t *testing.T) { runSeedClean(t, 22) }

// TestSeed32ProjectionCatchesUpAfterRestart: the same loss after a crash between send and
// record and a restart.
func TestSeed32ProjectionCatchesUpAfterRestart(t *testing.T) { runSeedClean(t, 32) }
