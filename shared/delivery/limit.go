package delivery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/automation-platform/automation/shared/automation"
)

// Limits bound one channel's provider, for every caller of the channel: the dispatcher's
// deliveries and the campaign actions sent on it (docs/configuration.md#channel-limits;
// seed 002's WF09 puts each worker's concurrency and timeout per provider on the shared
// command platform). Zero values take the defaults.
type Limits struct {
	// Concurrency is the most calls (Send and Lookup) in flight at once (default 4).
	Concurrency int
	// RatePerSecond is the most calls started per second: a token bucket of one second's
	// burst, at least 1 (golang.org/x/time/rate, read at the injected clock's instants);
	// 0: unlimited.
	RatePerSecond float64
	// Timeout bounds one call (0: none beyond the caller's context: the send claim's lease,
	// and the channel's own per-request timeouts). A call that reaches it after the request
	// left is the channel's UNKNOWN (or a resend for an idempotent channel), as any timeout.
	Timeout time.Duration
	// AdmitWait is the longest a call waits for a slot or a rate token (default 5 s, and
	// never past the caller's context); past it the call fails with ErrProviderBusy,
	// retryable, and nothing was sent.
	AdmitWait time.Duration
}

// DefaultChannelConcurrency is Limits.Concurrency's default.
const DefaultChannelConcurrency = 4

// ErrProviderBusy: the channel's provider had no free slot or rate token within AdmitWait;
// nothing was sent (marked automation.RetryAfter).
var ErrProviderBusy = errors.New("the channel's provider is at its concurrency or rate limit: nothing was sent")

func (l Limits) withDefaults() Limits {
	if l.Concurrency <= 0 {
		l.Concurrency = DefaultChannelConcurrency
	}
	if l.AdmitWait <= 0 {
		l.AdmitWait = 5 * time.Second
	}
	return l
}

// LimitStats are a limited channel's counters since start.
type LimitStats struct {
	InFlight int   // calls in flight now
	Calls    int64 // calls admitted
	Refused  int64 // calls refused with ErrProviderBusy
	Waited   int64 // calls that waited for a slot or a rate token before they were admitted
}

// Limited is a channel behind its provider's limits. It keeps the wrapped channel's traits
// and, when it has one, its Lookup (also limited).
type Limited interface {
	Channel
	// Unwrap returns the channel behind the limits.
	Unwrap() Channel
	// LimitStats returns the counters.
	LimitStats() LimitStats
	// Limits returns the limits in force (defaults filled in).
	Limits() Limits
}

// Limit returns ch behind l. clock gives the rate's instants; the waits themselves are
// runtime timers. A Looker stays a Looker.
func Limit(ch Channel, l Limits, clock automation.Clock) Limited {
	l = l.withDefaults()
	lc := &limitedChannel{ch: ch, l: l, clock: clock, slots: make(chan struct{}, l.Concurrency)}
	if l.RatePerSecond > 0 {
		lc.limit = rate.NewLimiter(rate.Limit(l.RatePerSecond), max(int(math.Floor(l.RatePerSecond)), 1))
	}
	if lk, ok := ch.(Looker); ok {
		return &limitedLooker{limitedChannel: lc, lk: lk}
	}
	return lc
}

type limitedChannel struct {
	ch    Channel
	l     Limits
	clock automation.Clock
	slots chan struct{}
	limit *rate.Limiter

	mu    sync.Mutex
	stats LimitStats
}

func (c *limitedChannel) Traits() Traits                   { return c.ch.Traits() }
func (c *limitedChannel) ValidateRecipient(a string) error { return c.ch.ValidateRecipient(a) }
func (c *limitedChannel) Unwrap() Channel                  { return c.ch }
func (c *limitedChannel) Limits() Limits                   { return c.l }

func (c *limitedChannel) LimitStats() LimitStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.InFlight = len(c.slots)
	return s
}

// Send implements Channel: admitted, then bounded by Timeout.
func (c *limitedChannel) Send(ctx context.Context, m Message) (string, error) {
	release, err := c.admit(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.ch.Send(ctx, m)
}

func (c *limitedChannel) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.l.Timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.l.Timeout)
}

// admit takes a concurrency slot, then a rate token, waiting at most AdmitWait (and never
// past ctx). A refusal is automation.RetryAfter(ErrProviderBusy): nothing was sent.
func (c *limitedChannel) admit(ctx context.Context) (release func(), err error) {
	timer := time.NewTimer(c.l.AdmitWait)
	defer timer.Stop()
	waited := false
	select {
	case c.slots <- struct{}{}:
	default:
		waited = true
		select {
		case c.slots <- struct{}{}:
		case <-timer.C:
			return nil, c.refuse(time.Second, "no free slot of %d within %s", c.l.Concurrency, c.l.AdmitWait)
		case <-ctx.Done():
			return nil, c.refuse(time.Second, "no free slot of %d before the caller gave up", c.l.Concurrency)
		}
	}
	release = func() { <-c.slots }
	if c.limit != nil {
		now := c.clock.Now()
		res := c.limit.ReserveN(now, 1)
		wait := res.DelayFrom(now)
		if !res.OK() || wait > c.l.AdmitWait {
			res.CancelAt(now)
			release()
			return nil, c.refuse(max(wait, time.Millisecond), "over %v calls a second", c.l.RatePerSecond)
		}
		if wait > 0 {
			waited = true
			rt := time.NewTimer(wait)
			select {
			case <-rt.C:
			case <-ctx.Done():
				rt.Stop()
				res.CancelAt(now)
				release()
				return nil, c.refuse(wait, "over %v calls a second, and the caller gave up", c.l.RatePerSecond)
			}
		}
	}
	c.mu.Lock()
	c.stats.Calls++
	if waited {
		c.stats.Waited++
	}
	c.mu.Unlock()
	return release, nil
}

func (c *limitedChannel) refuse(after time.Duration, format string, args ...any) error {
	c.mu.Lock()
	c.stats.Refused++
	c.mu.Unlock()
	return automation.RetryAfter(after, fmt.Errorf("%w (%s)", ErrProviderBusy, fmt.Sprintf(format, args...)))
}

type limitedLooker struct {
	*limitedChannel
	lk Looker
}

// Lookup implements Looker: admitted and bounded like Send (it is a call to the provider).
func (c *limitedLooker) Lookup(ctx context.Context, m Message) (LookupStatus, string, error) {
	release, err := c.admit(ctx)
	if err != nil {
		return LookupUnknown, "", err
	}
	defer release()
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.lk.Lookup(ctx, m)
}

var (
	_ Limited = (*limitedChannel)(nil)
	_ Looker  = (*limitedLooker)(nil)
)
