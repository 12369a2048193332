package automation

import (
	"sync"
	"time"
)

// Clock supplies the current instant. Logic never calls time.Now directly: the clock is
// injected so tests and the replay simulator control time.
type Clock interface {
	// Now returns the current instant; implementations return it in UTC.
	Now() time.Time
}

// SystemClock is the wall clock, in UTC. It is the only place that reads time.Now.
type SystemClock struct{}

// Now returns time.Now in UTC.
func (SystemClock) Now() time.Time { return time.Now().UTC() }

// ManualClock is a clock that only moves when told to. Safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock reading start (converted to UTC).
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start.UTC()} }

// Now returns the clock's current instant (UTC).
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t (UTC). Moving backwards is allowed for tests.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC()
	c.mu.Unlock()
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
