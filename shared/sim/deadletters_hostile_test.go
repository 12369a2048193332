package sim

import (
	"context"
	"testing"
)

// Hostile: the repeat of an action that died between its audit row and the bus call must be
// answered 409 by the take-over guard (deadletter.AbandonedAfter). The simulated pace is one
// requeue a minute and the died requeue used it, so the repeat of a died requeue is answered
// 429 before the guard is reached, and dead-letter-no-409-for-good accepts that: in seeds 50
// and 2 no repeat ever reaches the guard, and a take-over at once (DeadLetterAuditTakeOver's
// cutoff now+1h, or now-BusCallBound) passes every dead-letter invariant. At least one
// repeat in the seeds the dead-letter tests run must be answered by the guard.
func TestHostileCrashRepeatReachesTheTakeOverGuard(t *testing.T) {
	kinds, _ := ParseKinds("all")
	n := 0
	for _, seed := range []uint64{50, 2} {
		r := RunSeed(context.Background(), seed, kinds)
		if r.Err != nil {
			t.Fatalf("seed %d: %v", seed, r.Err)
		}
		n += r.Faults["dead-letter-crash-repeat-409"]
		t.Logf("seed %d: %s", seed, joinCounts(r.Faults))
	}
	if n == 0 {
		t.Fatalf("no repeat of a died dead-letter action was answered 409 by the take-over guard in seeds 50 and 2 (each was paced, 429): the guard is unchecked")
	}
}
