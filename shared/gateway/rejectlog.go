package gateway

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// RejectionsLoggedPerMinute is how many rejections of one event type Service logs a minute
// (INFO, with the type, pointer and reason); the next one of that minute logs once that the
// rest are not logged, so a flood of bad events cannot flood the log. The counts stay
// complete in Metrics.
const RejectionsLoggedPerMinute = 10

// maxRejectionKeys bounds the types the limiter tracks at once; an unregistered type always
// counts under "" (as in Metrics), so only registered types take keys.
const maxRejectionKeys = 1000

// rejectLimiter counts the rejections logged per type in the current minute (UTC, the
// injected clock's).
type rejectLimiter struct {
	mu     sync.Mutex
	minute time.Time
	counts map[string]int
}

// allow reports whether a rejection of key may be logged at now, and whether it is the
// first one over the limit (then a "not logged any more" line is written instead).
func (l *rejectLimiter) allow(key string, now time.Time) (log, over bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := now.UTC().Truncate(time.Minute)
	if !m.Equal(l.minute) || l.counts == nil {
		l.minute, l.counts = m, map[string]int{}
	}
	if _, ok := l.counts[key]; !ok && len(l.counts) >= maxRejectionKeys {
		key = ""
	}
	l.counts[key]++
	n := l.counts[key]
	return n <= RejectionsLoggedPerMinute, n == RejectionsLoggedPerMinute+1
}

// logRejection logs one rejected event at INFO (Service.Log), bounded per type a minute.
func (s *Service) logRejection(ctx context.Context, r Result) {
	if s.Log == nil || r.Status != StatusRejected {
		return
	}
	key := r.Type
	if r.RegistryVersion == 0 {
		key = "" // unregistered or unreadable types share one budget: they are not labels anyone chose
	}
	var now time.Time
	if s.Clock != nil {
		now = s.Clock.Now()
	}
	log, over := s.rejections.allow(key, now)
	switch {
	case log:
		s.Log.InfoContext(ctx, "gateway: event rejected", "eventId", r.ID, "type", r.Type, "pointer", r.Pointer, "reason", r.Reason,
			slog.String("businessUnitId", r.businessUnit))
	case over:
		s.Log.InfoContext(ctx, "gateway: more rejections of this type this minute are not logged (counted in the metrics)",
			"type", key, "limit", RejectionsLoggedPerMinute)
	}
}
