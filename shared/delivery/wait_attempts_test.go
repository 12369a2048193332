package delivery_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// Waits are not attempts: a quiet-hours wait and a wait for the channel's limits
// (delivery.ErrProviderBusy: nothing was sent) leave AttemptCount and RetryCount as they
// were, on the dispatch path (the relay's message) and on the sweep, before and after a real
// failed attempt; only the failed attempt moves the backoff ladder. Each row is one step
// of one delivery's life, in order.
func TestWaitsAreNotAttempts(t *testing.T) {
	t.Parallel()
	e, p, _ := quietEnv(t)
	busy := automation.RetryAfter(3*time.Second, fmt.Errorf("%w (test)", delivery.ErrProviderBusy))
	// storetest.T0 is 2026-10-01T00:00Z = 10:00 in Sydney (AEST, +10), outside the window.
	var key string
	for i, s := range []struct {
		name    string
		fail    error         // what the provider answers on this step
		advance time.Duration // before the step's sweep (the first step dispatches)
		status  store.NotificationStatus
		attempt int
		retry   int
		next    time.Duration // NextAttemptOn after the step's instant (0: none)
		errText string
	}{
		{name: "busy on dispatch", fail: busy, status: store.NotificationQueued, next: 3 * time.Second, errText: "concurrency or rate limit"},
		{name: "quiet hours on the sweep", advance: 13 * time.Hour, status: store.NotificationQueued, next: 9 * time.Hour, errText: "waiting for quiet hours"},
		{name: "a failed attempt moves the ladder", fail: errors.New("connection reset"), advance: 9 * time.Hour, status: store.NotificationQueued,
			attempt: 1, retry: 1, next: time.Nanosecond, errText: "connection reset"},
		{name: "busy on the sweep after it (at the rung's instant)", fail: busy, status: store.NotificationQueued, attempt: 1, retry: 1,
			next: 3 * time.Second, errText: "concurrency or rate limit"},
		{name: "busy again", fail: busy, advance: 3 * time.Second, status: store.NotificationQueued, attempt: 1, retry: 1,
			next: 3 * time.Second, errText: "concurrency or rate limit"},
		{name: "sent", advance: 3 * time.Second, status: store.NotificationSent, attempt: 2, retry: 1},
	} {
		p.mu.Lock()
		p.failWith = s.fail
		p.mu.Unlock()
		if i == 0 {
			key = e.queue(t, map[string]any{}, "email", "linh@example.test")[0]
			e.pump(t)
		} else {
			e.sweep(t, s.advance)
		}
		j := e.job(t, key)
		now := e.clock.Now()
		nextOK := s.next == 0 && j.NextAttemptOn == nil || s.next > 0 && j.NextAttemptOn != nil && !j.NextAttemptOn.Before(now.Add(s.next)) &&
			j.NextAttemptOn.Sub(now) < s.next+time.Minute
		if s.name == "a failed attempt moves the ladder" {
			nextOK = j.NextAttemptOn != nil && j.NextAttemptOn.After(now) // the ladder's first rung, jittered
		}
		if j.Status != s.status || j.AttemptCount != s.attempt || j.RetryCount != s.retry || !nextOK || !strings.Contains(j.LastError, s.errText) {
			t.Fatalf("%s: %s attempt %d retry %d next %v (now %v) %q; want %s attempt %d retry %d next +%v %q", s.name, j.Status, j.AttemptCount,
				j.RetryCount, j.NextAttemptOn, now, j.LastError, s.status, s.attempt, s.retry, s.next, s.errText)
		}
		if s.name == "a failed attempt moves the ladder" {
			e.clock.Set(*j.NextAttemptOn)
		}
	}
	if p.deliveries() != 1 {
		t.Fatalf("provider got %d messages, want 1", p.deliveries())
	}
}
