package quota

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Defaults (docs/security.md#quotas; the settings AUTOMATION_QUOTA_* override them).
const (
	// DefaultStreamsPerUnit is a quarter of the broker's 200 live streams: no unit can hold
	// them all.
	DefaultStreamsPerUnit = 50
	// DefaultStreamsPerRecipient: a member with a few tabs or devices open.
	DefaultStreamsPerRecipient = 3
	// DefaultIngestPerSecond and DefaultIngestBurst bound each API key's (or OIDC principal's) ingest in events (a
	// batch of 500 events counts 500).
	DefaultIngestPerSecond = rate.Limit(1000)
	DefaultIngestBurst     = 5000
	// MinIngestBurst is the smallest burst the settings allow: one full batch (eventsapi's
	// 500 events) must fit, or a full batch would never pass (it is refused with 422).
	MinIngestBurst = 500
	// DefaultMaxTracked bounds the credentials whose ingest rate is tracked at once.
	DefaultMaxTracked = 10000
	// streamRetry is the Retry-After of a refused stream: a stream ends when its client goes.
	streamRetry = 5 * time.Second
)

// Quotas admits requests. Set the fields before use; zero means the default.
type Quotas struct {
	Clock automation.Clock
	// StreamPattern is the live stream route; its unit comes from the businessUnitId query
	// parameter and its recipient from the {recipientId} path value.
	StreamPattern string
	// IngestPatterns are ingest routes that carry one event per request (the local events
	// route): Admit charges one event. Batch routes charge their count with ChargeIngest.
	IngestPatterns []string

	StreamsPerUnit      int
	StreamsPerRecipient int
	IngestPerSecond     rate.Limit // events per second per API key or OIDC principal
	IngestBurst         int        // events at once per API key or OIDC principal (at least MinIngestBurst)
	MaxTracked          int

	mu       sync.Mutex
	units    map[string]int           // live streams per unit
	members  map[[2]string]int        // live streams per (unit, recipient)
	limiters map[string]*rate.Limiter // ingest events per tenant credential (tenantOf)
}

// Admit implements httpapi.Options.Admit.
func (q *Quotas) Admit(r *http.Request, c httpapi.Caller) (func(), error) {
	switch {
	case r.Pattern == q.StreamPattern && q.StreamPattern != "":
		return q.admitStream(r, c)
	case q.ingest(r.Pattern):
		return nil, q.charge(c, 1)
	}
	return nil, nil
}

// ChargeIngest counts events posted by ctx's caller (httpapi.CallerFrom) against its API
// key's ingest quota, all or none: a batch that does not fit is refused whole. Errors: 429
// with Retry-After (the time until the batch fits) when the key's quota is used up.
func (q *Quotas) ChargeIngest(ctx context.Context, events int) error {
	return q.charge(httpapi.CallerFrom(ctx), events)
}

func (q *Quotas) ingest(pattern string) bool {
	for _, p := range q.IngestPatterns {
		if p == pattern {
			return true
		}
	}
	return false
}

func (q *Quotas) admitStream(r *http.Request, c httpapi.Caller) (func(), error) {
	bu, who := r.URL.Query().Get("businessUnitId"), r.PathValue("recipientId")
	if bu == "" || !c.Scope.Allows(bu) {
		return nil, nil // the handler refuses it (422, 404) before any stream opens
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.units == nil {
		q.units, q.members = map[string]int{}, map[[2]string]int{}
	}
	key := [2]string{bu, who}
	switch {
	case q.units[bu] >= pick(q.StreamsPerUnit, DefaultStreamsPerUnit):
		return nil, httpapi.TooMany(streamRetry, "business unit "+bu+" has its most live inbox streams open; try again later")
	case q.members[key] >= pick(q.StreamsPerRecipient, DefaultStreamsPerRecipient):
		return nil, httpapi.TooMany(streamRetry, "this recipient has its most live inbox streams open; close one")
	}
	q.units[bu]++
	q.members[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.units[bu]--; q.units[bu] <= 0 {
				delete(q.units, bu)
			}
			if q.members[key]--; q.members[key] <= 0 {
				delete(q.members, key)
			}
		})
	}, nil
}

// charge counts n events of a tenant's credential: an API key (by its prefix) or another
// named principal (an OIDC application or person, by its name, "oidc:..."). The bootstrap
// token and an API without credentials are the operator's, not a tenant's: not limited here.
func (q *Quotas) charge(c httpapi.Caller, n int) error {
	who := tenantOf(c.Principal)
	if who == "" || n <= 0 {
		return nil
	}
	now := q.Clock.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limiters == nil {
		q.limiters = map[string]*rate.Limiter{}
	}
	l := q.limiters[who]
	if l == nil {
		q.evict(now)
		burst := pick(q.IngestBurst, DefaultIngestBurst)
		l = rate.NewLimiter(pickRate(q.IngestPerSecond, DefaultIngestPerSecond), burst)
		l.SetBurstAt(now, burst)
		q.limiters[who] = l
	}
	if l.AllowN(now, n) {
		return nil
	}
	if n > l.Burst() {
		return automation.Invalid("events", "a batch of %d events is more than this key's ingest burst of %d; send smaller batches", n, l.Burst())
	}
	wait := time.Duration((float64(n) - l.TokensAt(now)) / float64(l.Limit()) * float64(time.Second))
	return httpapi.TooMany(max(wait, time.Second), fmt.Sprintf("this credential's ingest quota (%g events a second) is used up; send the %d events again after Retry-After", float64(l.Limit()), n))
}

// tenantOf is the key an ingest limiter is kept under: the API key's prefix (12 hex
// digits), else the principal's name (which holds a ':', so it never equals a prefix); ""
// for the bootstrap token and no principal.
func tenantOf(p httpapi.Principal) string {
	switch {
	case p.KeyPrefix != "":
		return p.KeyPrefix
	case p.Name == "" || p.Name == httpapi.BootstrapName:
		return ""
	}
	return p.Name
}

// evict makes room for one more limiter (q.mu held): full buckets first, then any.
func (q *Quotas) evict(now time.Time) {
	limit := pick(q.MaxTracked, DefaultMaxTracked)
	if len(q.limiters) < limit {
		return
	}
	for k, l := range q.limiters {
		if l.TokensAt(now) >= float64(l.Burst()) {
			delete(q.limiters, k)
		}
	}
	for k := range q.limiters {
		if len(q.limiters) < limit {
			return
		}
		delete(q.limiters, k)
	}
}

// Streams returns the live streams counted for unit (tests, metrics).
func (q *Quotas) Streams(unit string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.units[unit]
}

func pick(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func pickRate(v, def rate.Limit) rate.Limit {
	if v > 0 {
		return v
	}
	return def
}
