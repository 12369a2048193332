package logctx_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/logctx"
)

// TestSamplerDemotesPastItsRate: PerSecond lines per second of the clock are INFO, the rest
// DEBUG, and a new second starts again; every line is counted.
func TestSamplerDemotesPastItsRate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	s := &logctx.Sampler{Now: func() time.Time { return now }, PerSecond: 2}
	want := []slog.Level{slog.LevelInfo, slog.LevelInfo, slog.LevelDebug, slog.LevelDebug}
	for i, w := range want {
		if got := s.Level(); got != w {
			t.Fatalf("line %d: %v, want %v", i, got, w)
		}
	}
	now = now.Add(time.Second)
	if got := s.Level(); got != slog.LevelInfo {
		t.Fatalf("next second: %v, want INFO", got)
	}
	if s.Lines.Load() != 5 || s.Demoted.Load() != 2 {
		t.Fatalf("Lines %d Demoted %d, want 5 and 2", s.Lines.Load(), s.Demoted.Load())
	}
	var none *logctx.Sampler
	if none.Level() != slog.LevelDebug {
		t.Fatal("a nil sampler must answer DEBUG")
	}
}
