package app

import (
	"math"
	"runtime/debug"

	"github.com/automation-platform/automation/shared/config"
)

// ApplyMemoryLimit sets the Go runtime's soft memory limit to cfg.MemoryLimitMiB
// (AUTOMATION_MEMORY_LIMIT_MIB; docs/performance.md#memory) and returns the limit in force,
// in bytes (math.MaxInt64: none). A GOMEMLIMIT the process started with wins: the runtime
// read it already, and it is left as it is. serve and the custom handler call it once at
// start; it is process-wide, so a library user decides for itself.
func ApplyMemoryLimit(cfg config.Config, getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" || cfg.MemoryLimitMiB <= 0 {
		return debug.SetMemoryLimit(-1) // -1 reads the limit without changing it
	}
	limit := int64(cfg.MemoryLimitMiB) << 20
	if cfg.MemoryLimitMiB >= math.MaxInt64>>20 {
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit
}
