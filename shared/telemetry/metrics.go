package telemetry

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The product's metrics (docs/operations.md#opentelemetry-metrics). Every label is bounded: an enum of
// the product (a status, an outcome), a name from configuration (a provider, a destination
// of the topology, a registered event type), or a business unit that exists (the gateway
// counts an unknown unit under ""). No customer, event or command id is ever a label.
// TestMetricNamesUnitsAndLabels pins this table.
const (
	MetricIngestEvents      = "automation.ingest.events"
	MetricAttributeApplies  = "automation.attribute.applies"
	MetricAttributeTriggers = "automation.attribute.triggers"
	MetricCampaignCommands  = "automation.campaign.commands"
	MetricProviderDuration  = "automation.provider.duration"
	MetricOutboxPublished   = "automation.outbox.published"
	MetricOutboxLag         = "automation.outbox.lag"
)

// Metric labels.
const (
	LabelBusinessUnit = attribute.Key("automation.business_unit")
	LabelEventType    = attribute.Key("automation.event_type")
	LabelStatus       = attribute.Key("automation.status")
	LabelOutcome      = attribute.Key("automation.outcome")
	LabelProvider     = attribute.Key("automation.provider")
	LabelDestination  = attribute.Key("messaging.destination.name")
	LabelChannel      = attribute.Key("automation.channel")
)

// current holds the instruments of the meter provider the last Setup installed (nil: metrics
// off, and every recording site returns after one atomic load, building no attributes).
// Not the OTel global's delegation: that binds instruments to the first provider ever set.
var current atomic.Pointer[instruments]

// MetricsEnabled reports whether metrics are recorded in this process.
func MetricsEnabled() bool { return current.Load() != nil }

type instruments struct {
	ingest, applies, triggers, commands, published metric.Int64Counter
	providerDuration, outboxLag                    metric.Float64Histogram
	dueClaimed, dueOutcomes, deliveries            metric.Int64Counter

	// The pre-built label sets of each labelled instrument (labelSets), in the order of
	// its recording function's arguments.
	ingestSets, appliesSets, commandsSets, publishedSets, providerSets, lagSets, dueOutcomeSets, deliverySets *labelSets
}

func newInstruments(m metric.Meter) *instruments {
	i := &instruments{
		ingestSets:     newLabelSets(LabelBusinessUnit, LabelEventType, LabelStatus),
		appliesSets:    newLabelSets(LabelOutcome),
		commandsSets:   newLabelSets(LabelStatus, LabelProvider),
		publishedSets:  newLabelSets(LabelDestination, LabelOutcome),
		providerSets:   newLabelSets(LabelProvider, LabelOutcome),
		lagSets:        newLabelSets(LabelDestination),
		dueOutcomeSets: newLabelSets(LabelOutcome),
		deliverySets:   newLabelSets(LabelChannel, LabelStatus),
	}
	// Each instrument's name, unit (UCUM: "s", "{event}") and description; an error (an
	// invalid name or unit) leaves the SDK's no-op instrument, so recording never fails.
	for _, c := range []struct {
		to               *metric.Int64Counter
		name, unit, desc string
	}{
		{&i.ingest, MetricIngestEvents, "{event}", "Events the gateway answered, by business unit, registered event type and status (accepted, duplicate, rejected)."},
		{&i.applies, MetricAttributeApplies, "{event}", "Tracking events the attribute engine handled, by outcome (applied, duplicate, refused, failed)."},
		{&i.triggers, MetricAttributeTriggers, "{event}", "Trigger events the attribute engine emitted."},
		{&i.commands, MetricCampaignCommands, "{command}", "Campaign command outcomes recorded, by status (SUCCEEDED, FAILED, UNKNOWN, WAITING_BUDGET, QUEUED, CANCELLED, ...) and provider."},
		{&i.published, MetricOutboxPublished, "{message}", "Outbox messages the relay published, by destination and outcome (ok, failed)."},
		{&i.dueClaimed, MetricDueClaimed, "{row}", "Due scheduler rows the poller claimed."},
		{&i.dueOutcomes, MetricDueOutcomes, "{row}", "Claimed scheduler rows' recorded outcomes (completions), by outcome (Completed, Deactivated, Retrying, Held, LeaseLost)."},
		{&i.deliveries, MetricDeliveryOutcomes, "{delivery}", "Delivery outcomes recorded, by channel (a configured one) and status (Sent, Failed, Unknown, Queued for a retry)."},
	} {
		*c.to, _ = m.Int64Counter(c.name, metric.WithUnit(c.unit), metric.WithDescription(c.desc))
	}
	for _, h := range []struct {
		to         *metric.Float64Histogram
		name, desc string
	}{
		{&i.providerDuration, MetricProviderDuration, "Campaign provider call latency, by provider and outcome (ok, failed, unknown)."},
		{&i.outboxLag, MetricOutboxLag, "Time from an outbox row's commit to its publish, by destination."},
	} {
		*h.to, _ = m.Float64Histogram(h.name, metric.WithUnit("s"), metric.WithDescription(h.desc))
	}
	return i
}

// CountDueClaimed counts n due rows claimed by one poll.
func CountDueClaimed(ctx context.Context, n int) {
	inst := current.Load()
	if inst == nil || n <= 0 {
		return
	}
	inst.dueClaimed.Add(ctx, int64(n))
}

// CountDueOutcome counts one claimed row's recorded outcome (an enum of the scheduler).
func CountDueOutcome(ctx context.Context, outcome string) { CountDueOutcomes(ctx, outcome, 1) }

// CountDueOutcomes counts n claimed rows' recorded outcome (a batch's rows counted at once).
func CountDueOutcomes(ctx context.Context, outcome string, n int) {
	inst := current.Load()
	if inst == nil || n <= 0 {
		return
	}
	inst.dueOutcomes.Add(ctx, int64(n), inst.dueOutcomeSets.opts(labelValues{outcome}).add...)
}

// CountDelivery counts one recorded delivery outcome; channel is a configured channel ("" otherwise).
func CountDelivery(ctx context.Context, channel, status string) {
	inst := current.Load()
	if inst == nil {
		return
	}
	inst.deliveries.Add(ctx, 1, inst.deliverySets.opts(labelValues{channel, status}).add...)
}

// CountIngest counts one gateway answer; bu is a unit that exists ("" otherwise), typ a
// registered type ("" otherwise).
func CountIngest(ctx context.Context, bu, typ, status string) {
	inst := current.Load()
	if inst == nil {
		return
	}
	inst.ingest.Add(ctx, 1, inst.ingestSets.opts(labelValues{bu, typ, status}).add...)
}

// CountAttributeApply counts one tracking event's outcome and the triggers it emitted.
func CountAttributeApply(ctx context.Context, outcome string, triggers int) {
	inst := current.Load()
	if inst == nil {
		return
	}
	inst.applies.Add(ctx, 1, inst.appliesSets.opts(labelValues{outcome}).add...)
	if triggers > 0 {
		inst.triggers.Add(ctx, int64(triggers))
	}
}

// CountCommand counts one recorded campaign command outcome; provider is a configured one.
func CountCommand(ctx context.Context, status, provider string) {
	inst := current.Load()
	if inst == nil {
		return
	}
	inst.commands.Add(ctx, 1, inst.commandsSets.opts(labelValues{status, provider}).add...)
}

// RecordProviderCall records one provider call's latency and outcome (ok, failed, unknown).
func RecordProviderCall(ctx context.Context, provider, outcome string, d time.Duration) {
	inst := current.Load()
	if inst == nil {
		return
	}
	inst.providerDuration.Record(ctx, d.Seconds(), inst.providerSets.opts(labelValues{provider, outcome}).record...)
}

// RecordPublish records one outbox message published to destination (a topology name):
// outcome ok with the lag since its row's commit, or failed.
func RecordPublish(ctx context.Context, destination string, ok bool, lag time.Duration) {
	if ok {
		RecordPublished(ctx, destination, 1, false, lag)
	} else {
		RecordPublished(ctx, destination, 0, true, lag)
	}
}

// RecordPublished records one outbox row's publish to destination (a topology name): ok
// messages published (an envelope's items), one failed when failed, and, when ok > 0, the
// row's lag from its commit to its publish (one observation per row: its items share it).
func RecordPublished(ctx context.Context, destination string, ok int, failed bool, lag time.Duration) {
	inst := current.Load()
	if inst == nil {
		return
	}
	if ok > 0 {
		inst.published.Add(ctx, int64(ok), inst.publishedSets.opts(labelValues{destination, "ok"}).add...)
		inst.outboxLag.Record(ctx, max(lag, 0).Seconds(), inst.lagSets.opts(labelValues{destination}).record...)
	}
	if failed {
		inst.published.Add(ctx, 1, inst.publishedSets.opts(labelValues{destination, "failed"}).add...)
	}
}
