package support

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
)

// Metrics are the pipeline's health figures (docs/operations.md#metrics), cheap enough to poll every
// minute: each comes from one bounded SQL query over an index that holds just the rows it
// counts (sql/*/queries/support.sql). A count equal to the cap means "at least" and is named
// in Capped.
type Metrics struct {
	AsOf time.Time `json:"asOf"`
	// BusinessUnits is "*" or the ids the figures cover.
	BusinessUnits []string `json:"businessUnits"`
	// PendingDueNow: Pending, not on hold, ScheduledOn and NextRetryOn passed.
	PendingDueNow int `json:"pendingDueNow"`
	// OldestDueOn / OldestDueAgeSeconds: the earliest instant one of those became due — its
	// NextRetryOn when a backoff or a paced release put it after its ScheduledOn — and how
	// long ago that was (how far behind the poller is). Over the first MetricsCap due rows.
	OldestDueOn         *time.Time `json:"oldestDueOn,omitempty"`
	OldestDueAgeSeconds *int64     `json:"oldestDueAgeSeconds,omitempty"`
	Processing          int        `json:"processing"`
	// ExpiredLeases: Processing rows whose lease ran out (the next poll rescues them).
	ExpiredLeases int `json:"expiredLeases"`
	// OnHold / OnHoldByReason: rows on support hold, by FailureReasonCode.
	OnHold         int            `json:"onHold"`
	OnHoldByReason map[string]int `json:"onHoldByReason"`
	Failed         int            `json:"failed"`
	// DeactivatedLast24h / …ByReason: rows deactivated in the 24 hours before AsOf.
	DeactivatedLast24h         int            `json:"deactivatedLast24h"`
	DeactivatedByReasonLast24h map[string]int `json:"deactivatedByReasonLast24h"`
	// OutboxUnsent / OutboxOldest…: outbox messages not yet published. The outbox carries no
	// business unit, so these are platform-wide and only shown to callers that see every
	// business unit (nil otherwise).
	OutboxUnsent           *int       `json:"outboxUnsent,omitempty"`
	OutboxOldestOn         *time.Time `json:"outboxOldestOn,omitempty"`
	OutboxOldestAgeSeconds *int64     `json:"outboxOldestAgeSeconds,omitempty"`
	// UnknownDeliveries: NotificationJob rows whose outcome is UNKNOWN (Status "Unknown",
	// docs/architecture.md#unknown-outcomes): awaiting manual resolution or a provider lookup.
	UnknownDeliveries int `json:"unknownDeliveries"`
	// ReservationsHeld / OldestHeldAgeSeconds: budget reservations HELD (money set aside for
	// a command whose charge has not settled, docs/budgets.md) and the oldest one's age.
	ReservationsHeld     int    `json:"reservationsHeld"`
	OldestHeldAgeSeconds *int64 `json:"oldestHeldAgeSeconds,omitempty"`
	// FeesByStatus: fee transfers per status (PENDING, SUCCEEDED, FAILED, UNKNOWN), each
	// capped (a capped status is named "feesByStatus.{status}" in Capped).
	FeesByStatus map[string]int `json:"feesByStatus"`
	// Capped lists the figures that reached the cap (their true value is at least that).
	Capped []string `json:"capped,omitempty"`
	Cap    int      `json:"cap"`
}

// Metrics computes the figures for the business units the scope sees, or for one of them
// (businessUnitID; CodeNotFound when outside the scope).
func (s *Service) Metrics(ctx context.Context, sc automation.Scope, businessUnitID string) (Metrics, error) {
	if businessUnitID != "" {
		if err := s.knownUnit(ctx, sc, businessUnitID); err != nil {
			return Metrics{}, err
		}
		sc = unitOnly(businessUnitID)
	}
	u := sc.Units()
	if u == nil {
		u = []string{}
	}
	now := utc(s.clock.Now())
	m, err := s.store.SupportMetrics(ctx, store.SupportMetricsParams{Now: now, Since: now.Add(-24 * time.Hour), Scope: sc, Cap: s.cfg.MetricsCap})
	if err != nil {
		return Metrics{}, err
	}
	out := Metrics{AsOf: now, BusinessUnits: u, PendingDueNow: m.PendingDue, OldestDueOn: m.OldestDueOn,
		Processing: m.Processing, ExpiredLeases: m.ExpiredLeases, OnHoldByReason: nonNil(m.HeldByReason), Failed: m.Failed,
		DeactivatedByReasonLast24h: nonNil(m.DeactivatedByReason), UnknownDeliveries: m.UnknownDeliveries, Cap: s.cfg.MetricsCap}
	if sc.All() {
		out.BusinessUnits = []string{"*"}
	}
	age := func(t *time.Time) *int64 {
		if t == nil {
			return nil
		}
		a := int64(now.Sub(*t) / time.Second)
		return &a
	}
	out.OldestDueAgeSeconds = age(m.OldestDueOn)
	out.ReservationsHeld, out.OldestHeldAgeSeconds, out.FeesByStatus = m.ReservationsHeld, age(m.OldestHeldOn), nonNil(m.FeesByStatus)
	for _, n := range out.OnHoldByReason {
		out.OnHold += n
	}
	for _, n := range out.DeactivatedByReasonLast24h {
		out.DeactivatedLast24h += n
	}
	if sc.All() {
		n := m.OutboxUnsent
		out.OutboxUnsent, out.OutboxOldestOn, out.OutboxOldestAgeSeconds = &n, m.OutboxOldestOn, age(m.OutboxOldestOn)
	}
	capped := map[string]bool{
		"pendingDueNow": m.PendingDue >= s.cfg.MetricsCap, "processing": m.Processing >= s.cfg.MetricsCap,
		"expiredLeases": m.ExpiredLeases >= s.cfg.MetricsCap, "onHold": out.OnHold >= s.cfg.MetricsCap,
		"failed": m.Failed >= s.cfg.MetricsCap, "deactivatedLast24h": out.DeactivatedLast24h >= s.cfg.MetricsCap,
		"outboxUnsent": sc.All() && m.OutboxUnsent >= s.cfg.MetricsCap, "unknownDeliveries": m.UnknownDeliveries >= s.cfg.MetricsCap,
		"reservationsHeld": m.ReservationsHeld >= s.cfg.MetricsCap,
	}
	for st, n := range out.FeesByStatus {
		capped["feesByStatus."+st] = n >= s.cfg.MetricsCap
	}
	for k, v := range capped {
		if v {
			out.Capped = append(out.Capped, k)
		}
	}
	sort.Strings(out.Capped)
	return out, nil
}

func nonNil(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// Throughput is the deliveries that reached Sent, Failed or UNKNOWN per minute over the last
// hours (the console's chart): one entry per minute of [Since, AsOf), zeros included, oldest
// first. A delivery counts in the minute of its last change (NotificationJob.UpdatedOn).
type Throughput struct {
	AsOf    time.Time          `json:"asOf"`
	Since   time.Time          `json:"since"`
	Minutes []ThroughputMinute `json:"minutes"`
	// Totals over the window.
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
	// ByChannel is the totals per channel, by channel name, from the same read as Minutes
	// (they add up to the totals); deliveries only (Throughput), omitted by the other flows.
	ByChannel []ChannelCount `json:"byChannel,omitempty"`
}

// ChannelCount is one channel's deliveries that reached Sent, Failed or UNKNOWN over a
// Throughput's window.
type ChannelCount struct {
	Channel string `json:"channel"`
	Sent    int    `json:"sent"`
	Failed  int    `json:"failed"`
	Unknown int    `json:"unknown"`
}

// ThroughputMinute is one minute's counts (Minute is its start, UTC).
type ThroughputMinute struct {
	Minute  time.Time `json:"minute"`
	Sent    int       `json:"sent"`
	Failed  int       `json:"failed"`
	Unknown int       `json:"unknown"`
}

// MaxThroughputHours bounds Throughput's window (store.MaxThroughputWindow).
const MaxThroughputHours = int(store.MaxThroughputWindow / time.Hour)

// Throughput counts deliveries per minute over the last hours (1..MaxThroughputHours) for
// the business units the scope sees, or for one of them, and their totals per channel
// (ByChannel) from the same read. Errors: CodeInvalidInput for hours out of range,
// CodeNotFound for a business unit outside the scope.
func (s *Service) Throughput(ctx context.Context, sc automation.Scope, businessUnitID string, hours int) (Throughput, error) {
	return s.perMinute(ctx, sc, businessUnitID, hours, func(p store.SupportThroughputParams) ([]minuteCount, error) {
		bs, err := s.store.SupportThroughput(ctx, p)
		out := make([]minuteCount, len(bs))
		for i, b := range bs {
			out[i] = minuteCount{b.Minute, columnOf(string(b.Status), string(store.NotificationSent), string(store.NotificationFailed), string(store.NotificationUnknown)), b.Count, b.Channel}
		}
		return out, err
	})
}

// TriggerThroughput is the attribute engine's trigger events per minute over the last hours
// (the overview's chart, docs/console.md#overview), in the shape of Throughput: Sent counts
// the triggers fired. Read from the persisted counters (MetricsCount, flow
// metricscount.FlowTrigger) as IngestThroughput reads the gateway's. Errors as
// CommandThroughput's.
func (s *Service) TriggerThroughput(ctx context.Context, sc automation.Scope, businessUnitID string, hours int) (Throughput, error) {
	return s.countThroughput(ctx, sc, businessUnitID, hours, metricscount.FlowTrigger, metricscount.OutcomeFired, "", "")
}

// ReportThroughput is the report runs per minute over the last hours (the overview's
// chart), in the shape of Throughput: Sent counts runs delivered, Failed runs refused
// (on hold), Unknown runs skipped (deactivated). Read from the persisted counters
// (MetricsCount, flow metricscount.FlowReport). Errors as CommandThroughput's.
func (s *Service) ReportThroughput(ctx context.Context, sc automation.Scope, businessUnitID string, hours int) (Throughput, error) {
	return s.countThroughput(ctx, sc, businessUnitID, hours, metricscount.FlowReport, metricscount.OutcomeDelivered, metricscount.OutcomeFailed, metricscount.OutcomeSkipped)
}

// countThroughput reads one flow of the persisted counters per minute, its outcomes sent,
// failed and unknown in the Throughput columns of those names ("" for a column the flow
// does not have).
func (s *Service) countThroughput(ctx context.Context, sc automation.Scope, businessUnitID string, hours int, flow, sent, failed, unknown string) (Throughput, error) {
	return s.perMinute(ctx, sc, businessUnitID, hours, func(p store.SupportThroughputParams) ([]minuteCount, error) {
		bs, err := s.store.MetricsCountSeries(ctx, store.MetricsCountParams{Flow: flow, Since: p.Since, Until: p.Until, Scope: p.Scope})
		out := make([]minuteCount, len(bs))
		for i, b := range bs {
			col := columnOther
			if b.Outcome != "" {
				col = columnOf(b.Outcome, sent, failed, unknown)
			}
			out[i] = minuteCount{Minute: b.Minute, Column: col, Count: b.Count}
		}
		return out, err
	})
}

// CommandThroughput is the campaign commands that reached SUCCEEDED, FAILED or UNKNOWN per
// minute over the last hours (the console's chart beside the deliveries', docs/console.md#overview),
// in the shape of Throughput: Sent counts SUCCEEDED. Read from CampaignCommand itself, so it
// survives restarts and agrees across instances (issue 35: "Sent: 0" after three campaign
// messages, which are commands, not NotificationJob rows).
func (s *Service) CommandThroughput(ctx context.Context, sc automation.Scope, businessUnitID string, hours int) (Throughput, error) {
	return s.perMinute(ctx, sc, businessUnitID, hours, func(p store.SupportThroughputParams) ([]minuteCount, error) {
		bs, err := s.store.SupportCommandThroughput(ctx, p)
		out := make([]minuteCount, len(bs))
		for i, b := range bs {
			out[i] = minuteCount{Minute: b.Minute, Column: columnOf(string(b.Status), string(store.CommandSucceeded), string(store.CommandFailed), string(store.CommandUnknown)), Count: b.Count}
		}
		return out, err
	})
}

// IngestThroughput is the event gateway's ingest results per minute over the last hours (the
// console's overview chart, docs/console.md#overview), in the shape of Throughput: Sent
// counts accepted events, Failed rejected ones, Unknown duplicates. Read from the persisted
// counters (MetricsCount, flow store.FlowIngest) the metrics sampler adds each process's
// counts to once a minute, so it survives restarts and adds up across instances (issue 35:
// "Event metrics reset when the process restarts"); the minute is the one the counts were
// persisted in (at most a minute after the events). Errors as CommandThroughput's.
func (s *Service) IngestThroughput(ctx context.Context, sc automation.Scope, businessUnitID string, hours int) (Throughput, error) {
	return s.countThroughput(ctx, sc, businessUnitID, hours, store.FlowIngest, "accepted", "rejected", "duplicate")
}

// minuteCount is one bucket of a per-minute series: its minute, the Throughput column it
// counts in, the count, and its channel (deliveries only: Throughput.ByChannel).
type minuteCount struct {
	Minute  time.Time
	Column  column
	Count   int
	Channel string
}

// column is the Throughput column a bucket counts in.
type column int

const (
	columnOther   column = iota // counted in no column (a running command, a skipped delivery)
	columnSent                  // Sent: Sent, SUCCEEDED, accepted
	columnFailed                // Failed: Failed, FAILED, rejected
	columnUnknown               // Unknown: Unknown, UNKNOWN, duplicate
)

// columnOf maps a flow's status to its column, given the flow's names for the three.
func columnOf(status, sent, failed, unknown string) column {
	switch status {
	case sent:
		return columnSent
	case failed:
		return columnFailed
	case unknown:
		return columnUnknown
	}
	return columnOther
}

// perMinute is the one body of Throughput, CommandThroughput and IngestThroughput: it checks
// hours (1..MaxThroughputHours) and the business unit against the scope, reads the window
// [since, until) that ends with the current minute through read, and lays the buckets out
// one entry per minute (zeros included) with the totals. Errors: CodeInvalidInput for hours
// out of range, CodeNotFound for a business unit outside the scope, read's error.
func (s *Service) perMinute(ctx context.Context, sc automation.Scope, businessUnitID string, hours int,
	read func(store.SupportThroughputParams) ([]minuteCount, error)) (Throughput, error) {
	if hours < 1 || hours > MaxThroughputHours {
		return Throughput{}, automation.Invalid("hours", "must be 1 to %d, got %d", MaxThroughputHours, hours)
	}
	if businessUnitID != "" {
		if !sc.Allows(businessUnitID) {
			return Throughput{}, notFound("business unit " + businessUnitID)
		}
		sc = unitOnly(businessUnitID)
	}
	now := utc(s.clock.Now())
	until := now.Truncate(time.Minute).Add(time.Minute) // the current minute so far
	since := until.Add(-time.Duration(hours) * time.Hour)
	bs, err := read(store.SupportThroughputParams{Since: since, Until: until, Scope: sc})
	if err != nil {
		return Throughput{}, err
	}
	out := Throughput{AsOf: now, Since: since, Minutes: make([]ThroughputMinute, 0, hours*60)}
	idx := map[int64]int{}
	for m := since; m.Before(until); m = m.Add(time.Minute) {
		idx[m.Unix()] = len(out.Minutes)
		out.Minutes = append(out.Minutes, ThroughputMinute{Minute: m})
	}
	channels := map[string]*ChannelCount{}
	for _, b := range bs {
		i, ok := idx[b.Minute.UTC().Truncate(time.Minute).Unix()]
		if !ok || b.Column == columnOther {
			continue
		}
		var ch *ChannelCount
		if b.Channel != "" {
			if ch = channels[b.Channel]; ch == nil {
				ch = &ChannelCount{Channel: b.Channel}
				channels[b.Channel] = ch
			}
		} else {
			ch = &ChannelCount{} // a flow without channels: counted in the totals only
		}
		switch b.Column {
		case columnSent:
			out.Minutes[i].Sent += b.Count
			out.Sent += b.Count
			ch.Sent += b.Count
		case columnFailed:
			out.Minutes[i].Failed += b.Count
			out.Failed += b.Count
			ch.Failed += b.Count
		case columnUnknown:
			out.Minutes[i].Unknown += b.Count
			out.Unknown += b.Count
			ch.Unknown += b.Count
		}
	}
	for _, ch := range channels {
		out.ByChannel = append(out.ByChannel, *ch)
	}
	slices.SortFunc(out.ByChannel, func(a, b ChannelCount) int { return strings.Compare(a.Channel, b.Channel) })
	return out, nil
}

// knownUnit is CodeNotFound for a business unit outside sc, and for one that does not exist:
// an unknown unit is a 404 like one outside the scope, not an empty page or zeros that read
// as "nothing is wrong" (issue 33). Else the store's error, or nil.
func (s *Service) knownUnit(ctx context.Context, sc automation.Scope, businessUnitID string) error {
	if !sc.Allows(businessUnitID) {
		return notFound("business unit " + businessUnitID)
	}
	if _, err := s.store.BusinessUnitGetRecord(ctx, businessUnitID); errors.Is(err, store.ErrNotFound) {
		return notFound("business unit " + businessUnitID)
	} else if err != nil {
		return err
	}
	return nil
}

// unitOnly is the scope of one business unit; "*" or an id with spaces names no business
// unit, so sees nothing.
func unitOnly(businessUnitID string) automation.Scope {
	if sc := automation.BusinessUnits(businessUnitID); sc.String() == businessUnitID {
		return sc
	}
	return automation.Scope{}
}
