package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// The product's level metrics: observable gauges read from the store on each export or
// scrape, through the same queries as the JSON metrics routes and the console
// (docs/operations.md#opentelemetry-metrics names the query of each). All are platform-wide:
// no label but a fee's status (an enum of the product), so their label sets are bounded by
// construction.
const (
	MetricDuePending         = "automation.due.pending"
	MetricDueOldestAge       = "automation.due.oldest_age"
	MetricDueProcessing      = "automation.due.processing"
	MetricDueExpiredLeases   = "automation.due.expired_leases"
	MetricDeliveryUnknown    = "automation.delivery.unknown"
	MetricCommandsUnknown    = "automation.campaign.commands.unknown"
	MetricCommandsWaiting    = "automation.campaign.commands.waiting"
	MetricReservationsHeld   = "automation.budget.reservations.held"
	MetricReservationsOldest = "automation.budget.reservations.oldest_held_age"
	MetricFees               = "automation.billing.fees"
	MetricOutboxUnsent       = "automation.outbox.unsent"
	MetricOutboxOldestAge    = "automation.outbox.oldest_age"
	MetricDueClaimed         = "automation.due.claimed"
	MetricDueOutcomes        = "automation.due.outcomes"
	MetricDeliveryOutcomes   = "automation.delivery.outcomes"
	defaultGaugeTTL          = 15 * time.Second
	maxGaugeTTL              = 5 * time.Minute
	gaugeReadTimeout         = 10 * time.Second
)

// Levels is one read of the gauges' figures. Counts are capped as the support metrics cap
// them (a count equal to the cap means at least that). An age is in seconds, nil when
// nothing is waiting (the gauge then reports 0).
type Levels struct {
	DuePending, DueProcessing, DueExpiredLeases int
	DueOldestAgeSeconds                         *int64
	DeliveriesUnknown                           int
	CommandsUnknown, CommandsWaiting            int
	ReservationsHeld                            int
	ReservationsOldestHeldAgeSeconds            *int64
	// FeesByStatus: fee transfers by status (PENDING, SUCCEEDED, FAILED, UNKNOWN).
	FeesByStatus           map[string]int
	OutboxUnsent           int
	OutboxOldestAgeSeconds *int64
}

// LevelsReader reads the figures (the composition root wires the store queries).
type LevelsReader func(ctx context.Context) (Levels, error)

// gauges caches the last read for TTL so that an OTLP export and a Prometheus scrape close
// together, or a scraper polling fast, run the queries once. A failed read observes nothing
// (the series go absent rather than report a wrong zero) and is retried at the next
// collection.
type gauges struct {
	read LevelsReader
	now  func() time.Time
	ttl  time.Duration

	mu     sync.Mutex
	at     time.Time
	last   Levels
	loaded bool
	reads  int
}

// RegisterLevels registers the observable gauges on the meter provider Setup installed,
// reading through read at most once per ttl (0: 15 s; at most 5 min) by the clock now.
// With metrics off it does nothing and returns nil. It returns a function that unregisters
// them. Errors: read or now nil.
func (p *Providers) RegisterLevels(read LevelsReader, now func() time.Time, ttl time.Duration) (func() error, error) {
	if read == nil || now == nil {
		return nil, errors.New("telemetry: RegisterLevels needs a reader and a clock")
	}
	if p == nil || p.mp == nil {
		return func() error { return nil }, nil
	}
	if ttl <= 0 {
		ttl = defaultGaugeTTL
	}
	ttl = min(ttl, maxGaugeTTL)
	g := &gauges{read: read, now: now, ttl: ttl}
	m := p.mp.Meter(InstrumentationName)
	count := func(name, unit, desc string) metric.Int64ObservableGauge {
		i, _ := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return i
	}
	age := func(name, desc string) metric.Float64ObservableGauge {
		i, _ := m.Float64ObservableGauge(name, metric.WithUnit("s"), metric.WithDescription(desc))
		return i
	}
	duePending := count(MetricDuePending, "{row}", "Scheduler rows due now (Pending, not on hold, ScheduledOn and NextRetryOn passed): the due-work backlog.")
	dueOldest := age(MetricDueOldestAge, "Age of the oldest due scheduler row (how far behind the poller is); 0 when none is due.")
	dueProcessing := count(MetricDueProcessing, "{row}", "Scheduler rows claimed (Processing).")
	dueExpired := count(MetricDueExpiredLeases, "{row}", "Processing scheduler rows whose lease ran out (the next poll rescues them).")
	delUnknown := count(MetricDeliveryUnknown, "{delivery}", "Deliveries whose outcome is UNKNOWN, awaiting resolution.")
	cmdUnknown := count(MetricCommandsUnknown, "{command}", "Campaign commands whose outcome is UNKNOWN.")
	cmdWaiting := count(MetricCommandsWaiting, "{command}", "Campaign commands WAITING_BUDGET.")
	held := count(MetricReservationsHeld, "{reservation}", "Budget reservations HELD, platform-wide.")
	heldOldest := age(MetricReservationsOldest, "Age of the oldest HELD budget reservation; 0 when none.")
	fees := count(MetricFees, "{fee}", "Fee transfers by status (PENDING, SUCCEEDED, FAILED, UNKNOWN), each capped.")
	unsent := count(MetricOutboxUnsent, "{message}", "Outbox messages not yet published.")
	unsentOldest := age(MetricOutboxOldestAge, "Age of the oldest unpublished outbox row (the broker lag); 0 when none.")
	reg, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		l, ok := g.levels(ctx)
		if !ok {
			return nil
		}
		secs := func(a *int64) float64 {
			if a == nil {
				return 0
			}
			return float64(max(*a, 0))
		}
		o.ObserveInt64(duePending, int64(l.DuePending))
		o.ObserveFloat64(dueOldest, secs(l.DueOldestAgeSeconds))
		o.ObserveInt64(dueProcessing, int64(l.DueProcessing))
		o.ObserveInt64(dueExpired, int64(l.DueExpiredLeases))
		o.ObserveInt64(delUnknown, int64(l.DeliveriesUnknown))
		o.ObserveInt64(cmdUnknown, int64(l.CommandsUnknown))
		o.ObserveInt64(cmdWaiting, int64(l.CommandsWaiting))
		o.ObserveInt64(held, int64(l.ReservationsHeld))
		o.ObserveFloat64(heldOldest, secs(l.ReservationsOldestHeldAgeSeconds))
		for _, st := range FeeStatuses {
			o.ObserveInt64(fees, int64(l.FeesByStatus[st]), metric.WithAttributes(LabelStatus.String(st)))
		}
		o.ObserveInt64(unsent, int64(l.OutboxUnsent))
		o.ObserveFloat64(unsentOldest, secs(l.OutboxOldestAgeSeconds))
		return nil
	}, duePending, dueOldest, dueProcessing, dueExpired, delUnknown, cmdUnknown, cmdWaiting, held, heldOldest, fees, unsent, unsentOldest)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}

// FeeStatuses are the fee statuses automation.billing.fees reports: only these, whatever
// the store holds, so the label set stays bounded.
var FeeStatuses = []string{"PENDING", "SUCCEEDED", "FAILED", "UNKNOWN"}

// levels returns the cached read when younger than the TTL, else reads again (bounded by
// gaugeReadTimeout). ok is false when no read succeeded.
func (g *gauges) levels(ctx context.Context) (Levels, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.loaded && now.Sub(g.at) < g.ttl && !now.Before(g.at) {
		return g.last, true
	}
	rctx, cancel := context.WithTimeout(ctx, gaugeReadTimeout)
	defer cancel()
	g.reads++
	l, err := g.read(rctx)
	if err != nil {
		return Levels{}, false
	}
	g.at, g.last, g.loaded = now, l, true
	return l, true
}
