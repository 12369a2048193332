package sim

import (
	"context"
	"os"
	"strconv"
	"testing"
)

func TestSeedsPass(t *testing.T) {
	kinds, _ := ParseKinds(os.Getenv("SIM_FAULTS"))
	n, _ := strconv.Atoi(os.Getenv("SIM_N"))
	n = max(n, 3)
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := RunSeed(context.Background(), seed, kinds)
		if r.Err != nil {
			t.Errorf("seed %d: %d ops, faults %v\n%v", seed, r.Ops, r.Faults, r.Err)
		}
	}
}
