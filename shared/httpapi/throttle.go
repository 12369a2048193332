package httpapi

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/automation-platform/automation/shared/automation"
)

// Throttle defaults (issue 37: "300 wrong tokens in 4 s, then the right one works").
const (
	// DefaultThrottleBurst failures pass at once.
	DefaultThrottleBurst = 5
	// DefaultThrottleRate is the first refill: one more failure every 2 s.
	DefaultThrottleRate = rate.Limit(0.5)
	// DefaultThrottleFloor is the slowest refill the delay grows to: one a minute.
	DefaultThrottleFloor = rate.Limit(1.0 / 60)
	// DefaultThrottleKeys bounds the keys tracked at once.
	DefaultThrottleKeys = 10000
)

// Throttle slows repeated failures per key (a client address signing in, an API key's
// prefix) with a growing delay: each key has a token bucket (golang.org/x/time/rate) of
// Burst failures refilled at Rate; each time a key's bucket runs dry its rate halves, down to
// Floor, so a storm waits longer and longer; a bucket that has refilled whole starts again at
// Rate. Only failures are counted, and a success does not forgive them (a caller holding one
// right credential could otherwise reset its count between guesses of another): a bucket
// refills with time alone. Blocked is asked before a credential is checked, so a client
// that keeps failing is refused (429 with Retry-After) until its delay has passed, and then its right
// credential works. Time comes from Clock. At most MaxKeys keys are tracked: when full, keys
// whose buckets have refilled are forgotten first, then any one. Safe for concurrent use.
type Throttle struct {
	Burst   int
	Rate    rate.Limit
	Floor   rate.Limit
	MaxKeys int
	Clock   automation.Clock

	mu sync.Mutex
	m  map[string]*rate.Limiter
}

// NewThrottle returns a Throttle with the defaults and clock.
func NewThrottle(clock automation.Clock) *Throttle {
	return &Throttle{Burst: DefaultThrottleBurst, Rate: DefaultThrottleRate, Floor: DefaultThrottleFloor,
		MaxKeys: DefaultThrottleKeys, Clock: clock}
}

// Blocked reports whether key must wait, and how long, before its next attempt.
func (t *Throttle) Blocked(key string) (time.Duration, bool) {
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.m[key]
	if l == nil {
		return 0, false
	}
	now := t.Clock.Now()
	if tok := l.TokensAt(now); tok < 1 {
		wait := time.Duration((1 - tok) / float64(l.Limit()) * float64(time.Second))
		return max(wait, time.Second), true
	}
	return 0, false
}

// Failed counts one failure of key; the key's rate halves when its bucket runs dry.
func (t *Throttle) Failed(key string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Clock.Now()
	l := t.m[key]
	if l == nil {
		if t.m == nil {
			t.m = map[string]*rate.Limiter{}
		}
		t.evict(now)
		l = rate.NewLimiter(t.Rate, t.Burst)
		l.SetBurstAt(now, t.Burst)
		t.m[key] = l
	} else if l.TokensAt(now) >= float64(t.Burst) {
		l.SetLimitAt(now, t.Rate) // calm long enough to refill: the storm's delay is over
	}
	l.AllowN(now, 1)
	if l.TokensAt(now) < 1 {
		l.SetLimitAt(now, max(l.Limit()/2, t.Floor))
	}
}

// evict makes room for one more key (t.mu held).
func (t *Throttle) evict(now time.Time) {
	if len(t.m) < max(t.MaxKeys, 1) {
		return
	}
	for k, l := range t.m {
		if l.TokensAt(now) >= float64(l.Burst()) {
			delete(t.m, k)
		}
	}
	for k := range t.m {
		if len(t.m) < max(t.MaxKeys, 1) {
			return
		}
		delete(t.m, k)
	}
}

// Throttled is the error of a blocked key: 429 with Retry-After: wait.
func Throttled(wait time.Duration, what string) error {
	return TooMany(wait, "too many failed "+what+"; wait and try again (Retry-After)")
}

// TooMany is the error of a caller over its own quota: 429 with Retry-After: wait, and
// message as the problem's detail.
func TooMany(wait time.Duration, message string) error {
	return automation.RetryAfter(wait, &automation.Error{Code: automation.CodeTooManyRequests, Message: message})
}
