package attribute

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/automation-platform/automation/shared/telemetry"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// Store is what the engine needs: the attribute tables and the business units' zones.
type Store interface {
	store.AttributeStore
	BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error)
}

// Payload is the part of the gateway's fat payload (docs/gateway.md#fat-payload) the engine
// reads from the tracking topic.
type Payload struct {
	Origin
	Instructions []Instruction `json:"instructions"`
}

// Origin is the event a fat payload (docs/gateway.md#fat-payload) comes from: the members
// every gateway route's payload opens with, written by the gateway (gateway.Payload embeds
// it) and read by the engine, so the two cannot drift apart.
type Origin struct {
	EventID string `json:"event_id"`
	// Source is the event's CloudEvents source: (source, event_id) is the event's identity
	// (events.Identity), from which the processed-event id and the trigger ids derive.
	Source         string `json:"source"`
	SourceEvent    string `json:"source_event"`
	CustomerID     string `json:"customer_id"`
	BusinessUnitID string `json:"business_unit_id"`
	Timestamp      string `json:"timestamp"` // the event's time, else when it was accepted (RFC 3339, UTC)
}

// TriggerEvent is the event a crossing sends to the events topic, in seed 003's shape
// (docs/attributes.md#exactly-once). EventID is deterministic (TriggerID), so a redelivered
// or replayed source event never triggers twice.
type TriggerEvent struct {
	EventID        string          `json:"event_id"`
	EventName      string          `json:"event_name"`
	CustomerID     string          `json:"customer_id"`
	BusinessUnitID string          `json:"business_unit_id"`
	Timestamp      string          `json:"timestamp"` // the source event's time (RFC 3339, UTC)
	Metadata       TriggerMetadata `json:"metadata"`
}

// TriggerMetadata says where a trigger comes from.
type TriggerMetadata struct {
	SourceSystem           string      `json:"source_system"` // "attribute-service"
	TriggerAttribute       string      `json:"trigger_attribute"`
	EntityType             string      `json:"entity_type"`
	EntityID               string      `json:"entity_id"`
	ThresholdReached       json.Number `json:"threshold_reached"`
	MeasuredValue          json.Number `json:"measured_value"`
	OriginalTriggerEventID string      `json:"original_trigger_event_id"`
	// OriginalTriggerEventSource is that event's CloudEvents source: with the id, its
	// identity (events.Identity), from which EventID derives.
	OriginalTriggerEventSource string `json:"original_trigger_event_source,omitempty"`
}

// Change is one attribute value an event wrote.
type Change struct {
	EntityType string `json:"entityType"`
	EntityID   string `json:"entityId"`
	Code       string `json:"attribute"`
	Type       string `json:"type"`
	Value      string `json:"value"`
	Period     string `json:"period,omitempty"`
	Hot        bool   `json:"hot,omitempty"` // a delta appended (Value is the delta)
}

// Result is what one tracking message did.
type Result struct {
	EventID  string                      `json:"eventId"`
	Outcome  store.AttributeApplyOutcome `json:"outcome"`
	Attempts int                         `json:"attempts"`
	Changes  []Change                    `json:"changes,omitempty"`
	Triggers []TriggerEvent              `json:"triggers,omitempty"`
	Capped   int                         `json:"capped,omitempty"` // crossings a cap refused
}

// DefaultMaxAttempts bounds the optimistic retries of one event (ErrLeaseLost: another
// event of the same entity committed between this one's read and write).
const DefaultMaxAttempts = 8

// MaxFutureSkew bounds how far ahead of the clock an event's time may be. An event from the
// future would move LastEventOn, a streak's period and a timer there, and every real event
// after it would count as late: the entity's lists, streaks and timers frozen until then.
const MaxFutureSkew = 24 * time.Hour

// Service is the attribute engine: it applies a tracking payload's instructions to their
// entities in one transaction (docs/attributes.md#exactly-once).
type Service struct {
	Store       Store
	Clock       automation.Clock
	MaxAttempts int // 0: DefaultMaxAttempts
	// OnApplied, when set, observes each applied or duplicate event after its commit;
	// OnRefused each event refused with a permanent error (nothing written).
	OnApplied func(Result)
	OnRefused func(eventID string, err error)
	// Triggers, when set, counts each trigger event an applied event wrote (after its
	// commit; a duplicate writes none), by business unit and trigger event name, for the
	// console's overview (metricscount.FlowTrigger, persisted by the metrics sampler).
	Triggers *metricscount.Counts
	// Hooks are fault-injection points for the deterministic simulator (shared/sim); nil in
	// production.
	Hooks *Hooks
}

// Hooks are the engine's named fault points. A non-nil error stops the event there as a
// crash would: its transaction rolls back and Handle returns the error.
type Hooks struct {
	// AfterUpdate runs inside the event's transaction between the attribute update (rows
	// and hot-counter deltas written) and the outbox write of its trigger events.
	AfterUpdate func(ctx context.Context, eventID string) error
}

// The bounds of the identifiers an event names, in bytes of UTF-8 (len): each is the
// character length of the column that stores it (AttributeValue, AttributeProcessedEvent,
// AttributeDelta: nvarchar(200) EntityId, AttributeCode, EventId and nvarchar(50)
// EntityType; sql/*/migrations/0011_attributes.sql). A string of n UTF-8 bytes has at most n
// UTF-16 code units, so a value within its bound always fits its nvarchar column, and the
// keys built of these columns fit SQL Server's key limits (migration 0031; the schema lint
// sql/mssql/schemalint_test.go checks both, TestAttributeBoundsFitTheKeys). The business
// unit id is bounded by the business unit it must name (nvarchar(100)).
const (
	MaxEntityIDLen      = 200
	MaxEntityTypeLen    = 50
	MaxAttributeCodeLen = 200 // a cap's code, CapPrefix + its budget, included
	MaxEventIDLen       = 200
)

// ParsePayload reads and checks a tracking message. Errors: automation.Invalid naming the
// member (a permanent error: the message is dead-lettered).
func ParsePayload(body []byte) (Payload, time.Time, error) {
	var p Payload
	if err := json.Unmarshal(body, &p); err != nil {
		return p, time.Time{}, automation.Invalid("payload", "not a tracking payload: %v", err)
	}
	switch {
	case p.EventID == "":
		return p, time.Time{}, automation.Invalid("event_id", "is required")
	case len(p.EventID) > MaxEventIDLen:
		return p, time.Time{}, automation.Invalid("event_id", "is at most %d bytes", MaxEventIDLen)
	case p.BusinessUnitID == "":
		return p, time.Time{}, automation.Invalid("business_unit_id", "is required")
	case len(p.Instructions) == 0:
		return p, time.Time{}, automation.Invalid("instructions", "a tracking payload carries at least one instruction")
	case len(p.Instructions) > 100:
		return p, time.Time{}, automation.Invalid("instructions", "at most 100, got %d", len(p.Instructions))
	}
	at, err := time.Parse(time.RFC3339Nano, p.Timestamp)
	if err != nil {
		return p, time.Time{}, automation.Invalid("timestamp", "must be an RFC 3339 instant, got %q", p.Timestamp)
	}
	for i, in := range p.Instructions {
		if in.TargetEntityID == "" || in.EntityType == "" || in.AttributeCode == "" {
			return p, time.Time{}, automation.Invalid(fmt.Sprintf("instructions[%d]", i), "target_entity_id, entity_type and attribute_code are required")
		}
		if ie := CheckInstruction(in); ie != nil {
			return p, time.Time{}, automation.Invalid(fmt.Sprintf("instructions[%d]%s", i, memberPath(ie.Member)), "%s", ie.Reason)
		}
	}
	return p, at.UTC(), nil
}

// TriggerID is a trigger's deterministic id: a hash of the source event's identity
// (events.Identity of its source and id), the entity, the attribute and the threshold value,
// each part length-prefixed so no character in a part can make two tuples collide
// ("attr-gen-" + 24 hex digits).
func TriggerID(sourceEventKey string, e store.AttributeEntity, code string, threshold decimal.Decimal) string {
	h := sha256.New()
	var n [8]byte
	for _, part := range [...]string{sourceEventKey, e.BusinessUnitID, e.EntityType, e.EntityID, code, threshold.String()} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return "attr-gen-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// Key is the event's identity: events.Identity(Source, EventID). The processed-event ledger
// (store.AttributeApplyParams.EventID) and trigger ids use it, so two sources' events with
// the same id are two events.
func (p Payload) Key() string { return events.Identity(p.Source, p.EventID) }

// Handle applies one tracking message. The outcome is Duplicate when the event was applied
// before (nothing written). Errors: a permanent automation.Invalid for bad input — an
// unreadable payload, an unknown business unit or zone, an instruction that does not fit
// the stored value (naming the attribute) — with nothing written; store.ErrValueTooLarge
// when the database refused a value as too large for its schema (also permanent and
// InvalidInput: dead-lettered with the database's reason, reported to OnRefused); any other
// store error (transient: the message is redelivered); ErrLeaseLost after MaxAttempts.
func (s *Service) Handle(ctx context.Context, body []byte) (Result, error) {
	p, res, err := s.handle(ctx, body)
	if err != nil && s.OnRefused != nil && automation.IsInvalid(err) {
		s.OnRefused(p.EventID, err)
	}
	if err == nil {
		s.countTriggers(res)
		if s.OnApplied != nil {
			s.OnApplied(res)
		}
	}
	countApply(ctx, res, err)
	return res, err
}

// HandleBatch is Handle for several tracking messages at once (the messages a bus hands
// over together, at most store.MaxBatch), with one write transaction for all of them
// (store.AttributeApplyBatch) instead of one each. results[i] and errs[i] are what Handle
// would have returned for bodies[i], and the rows, processed events and outbox rows written
// are the same as Handle's on each message in order: the events are applied in the order
// given (a session's order, docs/attributes.md#batches), each seeing the writes of the ones
// before it, and an event already processed (by an earlier event of the batch too) is a
// Duplicate.
//
// Poison isolation: a message refused before its transaction (bad payload, unknown business
// unit) gets its error and is left out of the batch; when the batch's transaction fails (an
// instruction that does not fit the stored value, ErrLeaseLost, a store error, a fault
// hook), nothing of it is written and every message of it is applied again one at a time
// (Handle's retries included), so one bad message fails only itself. OnApplied and OnRefused
// are called once the batch is done, in message order. More than store.MaxBatch messages is
// an error for every message.
func (s *Service) HandleBatch(ctx context.Context, bodies [][]byte) ([]Result, []error) {
	return s.HandleBatchTraced(ctx, bodies, nil)
}

// HandleBatchTraced is HandleBatch with the W3C traceparent of each message
// (traceParents[i] of bodies[i]; nil or "" for none): with telemetry on, each event is
// applied in an "attribute.apply" span in its own message's trace, and the trigger events it
// emits are written to the outbox in that trace, although the batch shares one transaction.
func (s *Service) HandleBatchTraced(ctx context.Context, bodies [][]byte, traceParents []string) ([]Result, []error) {
	results, errs := make([]Result, len(bodies)), make([]error, len(bodies))
	if telemetry.Enabled() {
		spans := make([]trace.Span, len(bodies))
		ctxs := make([]context.Context, len(bodies))
		for i := range bodies {
			tp := ""
			if i < len(traceParents) {
				tp = traceParents[i]
			}
			ctxs[i], spans[i] = telemetry.Start(telemetry.Extract(ctx, tp, ""), "attribute.apply", trace.SpanKindInternal)
		}
		defer func() {
			for i, sp := range spans {
				if sp.IsRecording() {
					sp.SetAttributes(telemetry.EventID.String(results[i].EventID), telemetry.Count.Int(len(results[i].Triggers)),
						attribute.Int("automation.changes", len(results[i].Changes)))
				}
				telemetry.End(sp, errs[i], automation.CodeString(errs[i]))
			}
		}()
		ctx = withEventContexts(ctx, ctxs)
	}
	if len(bodies) > store.MaxBatch {
		err := fmt.Errorf("attribute: a batch of %d tracking messages, at most %d", len(bodies), store.MaxBatch)
		for i := range errs {
			errs[i] = err
		}
		return results, errs
	}
	evs := make([]*event, len(bodies))
	var ready []*event
	units := map[string]store.BusinessUnit{}
	for i, b := range bodies {
		evs[i], errs[i] = s.prepare(eventContext(ctx, i), b, units)
		if errs[i] == nil {
			ready = append(ready, evs[i])
		}
	}
	switch {
	case len(ready) == 1:
		ready[0].err = s.apply(ctx, ready[0])
	case len(ready) > 1:
		now := s.Clock.Now()
		ps := make([]store.AttributeApplyParams, len(ready))
		for i, ev := range ready {
			ps[i] = s.params(ev, now)
		}
		outs, err := s.Store.AttributeApplyBatch(ctx, ps)
		if err == nil {
			for i, ev := range ready {
				ev.settle(outs[i], 1)
			}
			break
		}
		// Nothing of the batch was written: each message alone, in order.
		for _, ev := range ready {
			ev.err = s.apply(ctx, ev)
		}
	}
	for i, ev := range evs {
		if errs[i] == nil {
			errs[i] = ev.err
			results[i] = *ev.res
		}
		if errs[i] == nil {
			s.countTriggers(results[i])
		}
		switch {
		case errs[i] != nil && s.OnRefused != nil && automation.IsInvalid(errs[i]):
			s.OnRefused(ev.p.EventID, errs[i])
		case errs[i] == nil && s.OnApplied != nil:
			s.OnApplied(results[i])
		}
		countApply(ctx, results[i], errs[i])
	}
	return results, errs
}

// event is one tracking message ready to apply: its payload, its entities and the Decide of
// its AttributeApply, which leaves what the event did in res.
type event struct {
	p        Payload
	entities []store.AttributeEntity
	decide   func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error)
	res      *Result
	err      error // what applying it returned (HandleBatch)
}

// params is ev's AttributeApply at now (the simulator's AfterUpdate hook included); the
// processed-event id is the event's identity, (source, id) (Payload.Key).
func (s *Service) params(ev *event, now time.Time) store.AttributeApplyParams {
	var afterWrite func(context.Context) error
	if s.Hooks != nil && s.Hooks.AfterUpdate != nil {
		afterWrite = func(ctx context.Context) error { return s.Hooks.AfterUpdate(ctx, ev.p.EventID) }
	}
	return store.AttributeApplyParams{Now: now, EventID: ev.p.Key(), Entities: ev.entities, Decide: ev.decide, AfterWrite: afterWrite}
}

func (s *Service) handle(ctx context.Context, body []byte) (p Payload, res Result, err error) {
	if telemetry.Enabled() {
		var span trace.Span
		ctx, span = telemetry.Start(ctx, "attribute.apply", trace.SpanKindInternal)
		defer func() {
			if span.IsRecording() {
				span.SetAttributes(telemetry.EventID.String(p.EventID), telemetry.BusinessUnitID.String(p.BusinessUnitID),
					telemetry.Count.Int(len(res.Triggers)), attribute.Int("automation.changes", len(res.Changes)))
			}
			telemetry.End(span, err, automation.CodeString(err))
		}()
	}
	ev, err := s.prepare(ctx, body, nil)
	if err != nil {
		return ev.p, Result{}, err
	}
	err = s.apply(ctx, ev)
	return ev.p, *ev.res, err
}

// prepare reads and checks one tracking message and builds its event (nothing written).
// units, when not nil, caches the business units looked up (a batch's messages share them).
// Errors: Handle's bad-input errors; the business unit lookup's store error.
func (s *Service) prepare(ctx context.Context, body []byte, units map[string]store.BusinessUnit) (*event, error) {
	p, at, err := ParsePayload(body)
	if err != nil {
		return &event{p: p}, err
	}
	if s.Clock != nil {
		if err := CheckEventTime("timestamp", at, s.Clock.Now()); err != nil {
			return &event{p: p}, err
		}
	}
	bu, cached := units[p.BusinessUnitID]
	if !cached {
		bu, err = s.Store.BusinessUnitGet(ctx, p.BusinessUnitID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return &event{p: p}, automation.Invalid("business_unit_id", "business unit %q is not known", p.BusinessUnitID)
	}
	if err != nil {
		return &event{p: p}, err
	}
	buZone, err := localtime.LoadZone(bu.TimeZoneID)
	if err != nil {
		return &event{p: p}, automation.Invalid("business_unit_id", "business unit %q has an unusable time zone: %v", bu.ID, err)
	}
	if units != nil && !cached && len(units) < store.MaxBatch {
		units[p.BusinessUnitID] = bu
	}
	rules := func(in Instruction) (Rules, error) {
		r := Rules{Zone: buZone, ZoneID: bu.TimeZoneID}
		if in.TimeZone != "" {
			loc, err := localtime.LoadZone(in.TimeZone)
			if err != nil {
				return r, automation.Invalid("attribute "+in.AttributeCode, "unknown time zone %q", in.TimeZone)
			}
			r.Zone, r.ZoneID = loc, in.TimeZone
		}
		wd, err := WeekdayOf(in.WeekStart)
		if err != nil {
			return r, automation.Invalid("attribute "+in.AttributeCode, "%v", err)
		}
		r.WeekStart = wd
		return r, nil
	}
	// Group the instructions by entity, keeping their order within each.
	var entities []store.AttributeEntity
	byEntity := map[store.AttributeEntity][]Instruction{}
	for _, in := range p.Instructions {
		e := store.AttributeEntity{BusinessUnitID: p.BusinessUnitID, EntityType: in.EntityType, EntityID: in.TargetEntityID}
		if _, seen := byEntity[e]; !seen {
			entities = append(entities, e)
		}
		byEntity[e] = append(byEntity[e], in)
	}
	res := &Result{EventID: p.EventID}
	traceParent := ""
	if telemetry.Enabled() {
		traceParent, _ = telemetry.Inject(ctx) // the trigger events join this event's trace
	}
	decide := func(rows map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
		*res = Result{EventID: p.EventID}
		var dec store.AttributeDecision
		for _, e := range entities {
			var cold []Instruction
			for _, in := range byEntity[e] {
				if !in.Hot {
					cold = append(cold, in)
					continue
				}
				micros, err := hotMicros(in)
				if err != nil {
					return dec, err
				}
				dec.Deltas = append(dec.Deltas, store.AttributeDelta{AttributeEntity: e, AttributeCode: in.AttributeCode, Micros: micros})
				res.Changes = append(res.Changes, Change{EntityType: e.EntityType, EntityID: e.EntityID, Code: in.AttributeCode, Type: string(TypeNumber),
					Value: decimal.New(micros, -6).String(), Hot: true})
			}
			if len(cold) == 0 {
				continue
			}
			states := make(map[string]State, len(rows[e]))
			for code, r := range rows[e] {
				st, err := stateOf(r)
				if err != nil {
					return dec, automation.Invalid("attribute "+code, "%v", err)
				}
				states[code] = st
			}
			changed, fired, err := ApplyEntity(states, cold, at, rules)
			if err != nil {
				return dec, err
			}
			for _, code := range SortedCodes(changed) {
				st := changed[code]
				row := rows[e][code] // Version 0 when absent: insert
				row.AttributeEntity, row.AttributeCode = e, code
				row.ValueType, row.ValueText, row.Period, row.PeriodRule, row.LastEventOn = string(st.Type), FormatValue(st), st.Period, st.PeriodRule, st.LastEventOn
				row.OrderKey = ""
				if st.Type == TypeNumber {
					row.OrderKey = OrderKey(st.Number)
				}
				dec.Rows = append(dec.Rows, row)
				res.Changes = append(res.Changes, Change{EntityType: e.EntityType, EntityID: e.EntityID, Code: code, Type: row.ValueType, Value: row.ValueText, Period: row.Period})
			}
			for _, f := range fired {
				if !f.Fired {
					res.Capped++
					continue
				}
				tr := TriggerEvent{EventID: TriggerID(p.Key(), e, f.AttributeCode, f.Value), EventName: f.Threshold.TriggerEvent,
					CustomerID: p.CustomerID, BusinessUnitID: p.BusinessUnitID, Timestamp: at.Format(time.RFC3339Nano),
					Metadata: TriggerMetadata{SourceSystem: "attribute-service", TriggerAttribute: f.AttributeCode, EntityType: e.EntityType,
						EntityID: e.EntityID, ThresholdReached: json.Number(f.Value.String()), MeasuredValue: json.Number(f.Measured.String()),
						OriginalTriggerEventID: p.EventID, OriginalTriggerEventSource: p.Source}}
				if tr.CustomerID == "" {
					tr.CustomerID = e.EntityID
				}
				body, err := json.Marshal(tr)
				if err != nil {
					return dec, err
				}
				dec.Outbox = append(dec.Outbox, store.OutboxMessage{MessageID: tr.EventID + ":" + topology.EventsTopic,
					Destination: topology.EventsTopic, SessionID: tr.CustomerID, Body: body, TraceParent: traceParent})
				res.Triggers = append(res.Triggers, tr)
			}
		}
		return dec, nil
	}
	return &event{p: p, entities: entities, decide: decide, res: res}, nil
}

// apply runs ev's AttributeApply, again on ErrLeaseLost up to MaxAttempts, and completes
// ev.res with the outcome and the attempts.
func (s *Service) apply(ctx context.Context, ev *event) error {
	maxAttempts := s.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	for attempt := 1; ; attempt++ {
		out, err := s.Store.AttributeApply(ctx, s.params(ev, s.Clock.Now()))
		if errors.Is(err, store.ErrLeaseLost) && attempt < maxAttempts && ctx.Err() == nil {
			continue
		}
		if err != nil {
			*ev.res = Result{EventID: ev.p.EventID, Attempts: attempt}
			return err
		}
		ev.settle(out, attempt)
		return nil
	}
}

// settle records the outcome of ev's committed AttributeApply: a duplicate did nothing.
func (ev *event) settle(out store.AttributeApplyOutcome, attempts int) {
	if out == store.AttributeDuplicate {
		*ev.res = Result{EventID: ev.p.EventID}
	}
	ev.res.Outcome, ev.res.Attempts = out, attempts
}

// maxHotMicros bounds one hot increment (and keeps sums of a backlog inside int64).
const maxHotMicros = 1_000_000_000_000_000 // 1e9 units

// hotMicros is a hot instruction's increment in micro-units (negative for DECREMENT).
// Errors: a step that is not a positive exact decimal with at most 6 fraction digits and at
// most 1e9.
func hotMicros(in Instruction) (int64, error) {
	step := decimal.NewFromInt(1)
	if in.Step != "" {
		var err error
		if step, err = parseDecimal(in.AttributeCode, "step", in.Step); err != nil {
			return 0, err
		}
	}
	m := step.Shift(6)
	if !step.IsPositive() || !m.IsInteger() || m.GreaterThan(decimal.NewFromInt(maxHotMicros)) {
		return 0, permanent(in.AttributeCode, "a hot counter's step is a positive decimal of at most 6 fraction digits and at most 1e9, got %s", in.Step)
	}
	if in.Operation == OpDecrement {
		return -m.IntPart(), nil
	}
	return m.IntPart(), nil
}

// stateOf reads a stored row.
func stateOf(r store.AttributeRow) (State, error) {
	st, err := ParseValue(ValueType(r.ValueType), r.ValueText)
	if err != nil {
		return State{}, err
	}
	st.Period, st.PeriodRule, st.LastEventOn = r.Period, r.PeriodRule, r.LastEventOn.UTC()
	return st, nil
}

// orderDigits: OrderKey's integer and fraction widths.
const (
	orderInt  = 24
	orderFrac = 6
)

// OrderKey is a fixed-width text that sorts like the number (the ranking index): "1" and
// 24 + 6 digits for zero and positives, "0" and the nines' complement for negatives;
// magnitudes are clamped below 1e24 and rounded to 6 fraction digits.
func OrderKey(d decimal.Decimal) string {
	limit := decimal.New(1, orderInt).Sub(decimal.New(1, -orderFrac))
	a := d.Abs().Round(orderFrac)
	if a.GreaterThan(limit) {
		a = limit
	}
	digits := a.Shift(orderFrac).StringFixed(0)
	digits = strings.Repeat("0", orderInt+orderFrac-len(digits)) + digits
	if d.Sign() >= 0 {
		return "1" + digits
	}
	b := []byte(digits)
	for i, c := range b {
		b[i] = '9' - (c - '0')
	}
	return "0" + string(b)
}

// Flusher folds hot counters' deltas into their rows (docs/attributes.md#hot-counters).
type Flusher struct {
	Store store.AttributeStore
	Clock automation.Clock
	// Batch deltas per transaction (default 500) and at most MaxBatches per run (default 20):
	// a run's work is bounded; what is left waits for the next run.
	Batch, MaxBatches int
}

// FlushResult counts one run.
type FlushResult struct {
	Batches  int `json:"batches"`
	Deltas   int `json:"deltas"`
	Counters int `json:"counters"`
}

// RunOnce folds batches until one comes back short or MaxBatches ran. Errors: the store's
// (the failing batch is rolled back whole; the deltas stay for the next run).
func (f *Flusher) RunOnce(ctx context.Context) (FlushResult, error) {
	batch, max := f.Batch, f.MaxBatches
	if batch <= 0 {
		batch = 500
	}
	if max <= 0 {
		max = 20
	}
	var out FlushResult
	for out.Batches < max {
		r, err := f.Store.AttributeFlushDeltas(ctx, f.Clock.Now(), batch, Fold)
		if err != nil {
			return out, err
		}
		out.Batches++
		out.Deltas += r.Deltas
		out.Counters += r.Counters
		if r.Deltas < batch {
			break
		}
	}
	return out, nil
}

// Fold adds micros (micro-units) to a counter's stored text ("" = no row yet) and gives the
// new text and its OrderKey.
func Fold(old string, micros int64) (string, string, error) {
	v := decimal.Zero
	if old != "" {
		var err error
		if v, err = decimal.NewFromString(old); err != nil {
			return "", "", fmt.Errorf("hot counter value %q: %w", old, err)
		}
	}
	v = v.Add(decimal.New(micros, -6))
	return v.String(), OrderKey(v), nil
}

// View is an attribute as a reader sees it at an instant (docs/attributes.md#read-api).
type View struct {
	Code        string    `json:"attribute"`
	Type        string    `json:"type"`
	Value       any       `json:"value"` // json.Number, bool, string (instant) or []string
	Period      string    `json:"period,omitempty"`
	LastEventOn time.Time `json:"lastEventOn"`
	UpdatedOn   time.Time `json:"updatedOn"`
	Version     int64     `json:"version"`
	Unfolded    string    `json:"unfolded,omitempty"` // a hot counter's deltas not folded yet (included in value)
}

// Read returns every attribute of entity as seen at asOf: the period rule applied (ReadAt)
// and hot counters' unfolded deltas added. Errors: the store's; a stored value that cannot
// be read.
func Read(ctx context.Context, st store.AttributeStore, e store.AttributeEntity, asOf time.Time) ([]View, error) {
	rows, err := st.AttributeList(ctx, e)
	if err != nil {
		return nil, err
	}
	sums, err := st.AttributeDeltaSums(ctx, e)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(rows)+len(sums))
	seen := map[string]bool{}
	for _, r := range rows {
		s, err := stateOf(r)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", r.AttributeCode, err)
		}
		if s, err = ReadAt(s, asOf); err != nil {
			return nil, fmt.Errorf("attribute %s: %w", r.AttributeCode, err)
		}
		v := View{Code: r.AttributeCode, Type: r.ValueType, Period: s.Period, LastEventOn: r.LastEventOn, UpdatedOn: r.UpdatedOn, Version: r.Version}
		if n, ok := sums[r.AttributeCode]; ok && s.Type == TypeNumber {
			s.Number = s.Number.Add(decimal.New(n, -6))
			v.Unfolded = decimal.New(n, -6).String()
		}
		v.Value = viewValue(s)
		seen[r.AttributeCode] = true
		out = append(out, v)
	}
	for code, n := range sums {
		if !seen[code] {
			out = append(out, View{Code: code, Type: string(TypeNumber), Value: json.Number(decimal.New(n, -6).String()), Unfolded: decimal.New(n, -6).String()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out, nil
}

func viewValue(s State) any {
	switch s.Type {
	case TypeNumber:
		return json.Number(s.Number.String())
	case TypeBoolean:
		return s.Bool
	case TypeInstant:
		return s.Instant.UTC().Format(time.RFC3339Nano)
	case TypeList:
		return append([]string{}, s.List...)
	}
	return nil
}

// eventContexts carries the per-message contexts of HandleBatchTraced to prepare.
type eventContexts struct{}

func withEventContexts(ctx context.Context, ctxs []context.Context) context.Context {
	return context.WithValue(ctx, eventContexts{}, ctxs)
}

// eventContext is the context of message i of a batch: its own trace when
// HandleBatchTraced set one, else ctx.
func eventContext(ctx context.Context, i int) context.Context {
	if ctxs, ok := ctx.Value(eventContexts{}).([]context.Context); ok && i < len(ctxs) {
		return ctxs[i]
	}
	return ctx
}

// countTriggers counts the trigger events of a committed result in s.Triggers (an applied
// event's only: a duplicate wrote none).
func (s *Service) countTriggers(res Result) {
	if s.Triggers == nil || res.Outcome != store.AttributeApplied {
		return
	}
	for _, tr := range res.Triggers {
		s.Triggers.Add(tr.BusinessUnitID, tr.EventName, metricscount.OutcomeFired, 1)
	}
}

// countApply counts one tracking event's outcome for telemetry: the store's outcome
// (Applied, Duplicate), refused (bad input, dead-lettered) or failed (retried).
func countApply(ctx context.Context, res Result, err error) {
	if !telemetry.MetricsEnabled() {
		return
	}
	outcome := string(res.Outcome)
	switch {
	case err != nil && automation.IsInvalid(err):
		outcome = "refused"
	case err != nil:
		outcome = "failed"
	}
	telemetry.CountAttributeApply(ctx, outcome, len(res.Triggers))
}
