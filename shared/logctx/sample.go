package logctx

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Sampler picks the level of a per-message log line on a hot path (docs/performance.md,
// "Logs at rate"): the first PerSecond lines of each second of Now are INFO, the rest of
// that second DEBUG, so a handful of messages (a demo, the walk-throughs in docs/) is logged
// in full at INFO and a production rate is not a log flood. Every call is counted (Lines),
// and the lines demoted to DEBUG apart (Demoted), for the metrics. A nil *Sampler always
// answers DEBUG. Safe for concurrent use.
type Sampler struct {
	Now       func() time.Time // the clock; UTC or local does not matter (whole seconds)
	PerSecond int              // INFO lines per second; 0 means 10

	mu     sync.Mutex
	second int64
	used   int
	// Lines counts every call of Level; Demoted those answered DEBUG.
	Lines, Demoted atomic.Int64
}

// Level counts one line and returns its level.
func (s *Sampler) Level() slog.Level {
	if s == nil {
		return slog.LevelDebug
	}
	s.Lines.Add(1)
	per := s.PerSecond
	if per <= 0 {
		per = 10
	}
	sec := s.Now().Unix()
	s.mu.Lock()
	if sec != s.second {
		s.second, s.used = sec, 0
	}
	s.used++
	info := s.used <= per
	s.mu.Unlock()
	if info {
		return slog.LevelInfo
	}
	s.Demoted.Add(1)
	return slog.LevelDebug
}
