package app_test

import (
	"runtime/debug"
	"testing"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/config"
)

// ApplyMemoryLimit sets AUTOMATION_MEMORY_LIMIT_MIB as the runtime's soft limit, leaves a
// GOMEMLIMIT the process started with alone, and sets nothing for 0.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cfg, err := config.Load(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MemoryLimitMiB != 64 {
		t.Fatalf("default %d MiB, want 64", cfg.MemoryLimitMiB)
	}
	if got := app.ApplyMemoryLimit(cfg, env(nil)); got != 64<<20 || debug.SetMemoryLimit(-1) != 64<<20 {
		t.Fatalf("limit %d, runtime %d, want 64 MiB", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(before)
	if got := app.ApplyMemoryLimit(cfg, env(map[string]string{"GOMEMLIMIT": "1GiB"})); got != before {
		t.Fatalf("with GOMEMLIMIT set, the limit became %d (was %d)", got, before)
	}
	cfg.MemoryLimitMiB = 0
	if got := app.ApplyMemoryLimit(cfg, env(nil)); got != before {
		t.Fatalf("with 0, the limit became %d (was %d)", got, before)
	}
	if _, err := config.Load(env(map[string]string{"AUTOMATION_MEMORY_LIMIT_MIB": "-1"})); err == nil {
		t.Fatal("a negative limit was taken")
	}
}
