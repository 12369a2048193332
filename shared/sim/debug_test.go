package sim

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestDebugSeed keeps the directory of SIM_DEBUG_SEED's run (a debugging aid; skipped
// without the variable).
func TestDebugSeed(t *testing.T) {
	s := os.Getenv("SIM_DEBUG_SEED")
	if s == "" {
		t.Skip("SIM_DEBUG_SEED not set")
	}
	seed, _ := strconv.ParseUint(s, 10, 64)
	keepDir = func(d string) { t.Logf("dir %s", d) }
	defer func() { keepDir = nil }()
	b, _ := Generate(seed).Scenario()
	os.WriteFile(os.TempDir()+"/sim-debug.json", b, 0o644)
	kinds, _ := ParseKinds(os.Getenv("SIM_FAULTS"))
	r := RunSeed(context.Background(), seed, kinds)
	t.Logf("faults %v err %v", r.Faults, r.Err)
}
