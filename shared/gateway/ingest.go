package gateway

import (
	"go.opentelemetry.io/otel/trace"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/automation-platform/automation/shared/telemetry"
	"log/slog"
	"math/big"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/go-openapi/jsonpointer"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// Bounds of an ingested event (docs/gateway.md#bad-input).
const (
	// MaxEventIDLength bounds an event id (UTF-16 code units). The outbox MessageId is
	// "{events.Identity(source, id)}:{route}" (at most 52 characters, within Service Bus's
	// 128), so this bound is the ledger's and the support tools', not the MessageId's.
	MaxEventIDLength = 100
	// MaxCustomerIDLength: the customer id is the SessionId (at most 128 characters).
	MaxCustomerIDLength = 128
	// DefaultMaxDataBytes bounds data (compact JSON), so a fat payload fits a Service Bus
	// message with room for its instructions.
	DefaultMaxDataBytes = 32 << 10
)

// Result statuses.
const (
	StatusAccepted  = "accepted"
	StatusDuplicate = "duplicate"
	StatusRejected  = "rejected"
)

// Result is what became of one event, in request order. A rejection names the offending
// member as a JSON Pointer into the event (structured form: "/id", "/data/itemId", …).
type Result struct {
	Index   int      `json:"index"`
	ID      string   `json:"id,omitempty"`
	Type    string   `json:"type,omitempty"`
	Status  string   `json:"status"`
	Routes  []string `json:"routes,omitempty"`
	Pointer string   `json:"pointer,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	// RegistryVersion is the version of the event type's definition that routed it.
	RegistryVersion int64 `json:"registryVersion,omitempty"`
	// Filtered: accepted, but its filter conditions route it nowhere.
	Filtered bool `json:"filtered,omitempty"`

	businessUnit string
}

// Routed is one outbox message the gateway wrote (for observers: replay's "routed" lines).
type Routed struct {
	Topic     string
	EventID   string
	SessionID string
}

// Destination returns the bus destination of a route: the route's topic, or domain-events
// for the source route (whose consumer is the reminder path).
func Destination(route string) string {
	switch route {
	case RouteEvents:
		return topology.EventsTopic
	case RouteTracking:
		return topology.TrackingTopic
	case RouteNoti:
		return topology.NotiTopic
	case RouteSource:
		return topology.DomainEventsTopic
	}
	return ""
}

// Service is the ingest path: validate, classify, enrich and accept events
// (docs/gateway.md#ingest). Safe for concurrent use.
type Service struct {
	Store    store.GatewayStore
	Registry *Cache
	Clock    automation.Clock
	Metrics  *Metrics // may be nil
	// Log receives the INFO line of each rejected event (type, pointer, reason), at most
	// RejectionsLoggedPerMinute per event type a minute; may be nil.
	Log *slog.Logger
	// MaxDataBytes bounds data (0: DefaultMaxDataBytes).
	MaxDataBytes int

	rejections rejectLimiter // bounds the rejection lines of Log (logRejection)
}

// prepared is a valid event ready to accept.
type prepared struct {
	ev     store.GatewayEvent
	routes []string
	source bool // the source route is among the routes
	raw    []byte
}

// Ingest checks and accepts a request's events (at most events.MaxBatchEvents) for a
// caller seeing scope, and returns one Result per event in order. All the accepted events
// are written in one transaction (each event's ledger row and outbox rows together), so
// the answer — given after the commit — never reports an event that could be lost. A
// rejected event writes nothing and does not affect the others. Errors: the registry or the
// store failed (nothing accepted; the caller may send the request again: it is idempotent
// by (source, id)).
func (s *Service) Ingest(ctx context.Context, scope automation.Scope, raws []events.Raw) (results []Result, err error) {
	ctx, span := telemetry.Start(ctx, "gateway.ingest", trace.SpanKindInternal)
	defer func() {
		if span.IsRecording() {
			spanResults(span, raws, results)
		}
		telemetry.End(span, err, automation.CodeString(err))
	}()
	return s.ingest(ctx, scope, raws)
}

// spanResults sets the ingest span's attributes: the events' count and, for one event, its
// id, type, unit and status; each event's own CloudEvents traceparent (the
// distributed-tracing extension) becomes a link.
func spanResults(span trace.Span, raws []events.Raw, results []Result) {
	span.SetAttributes(telemetry.Count.Int(len(raws)))
	if len(results) == 1 {
		span.SetAttributes(telemetry.EventID.String(results[0].ID), telemetry.EventType.String(results[0].Type),
			telemetry.Status.String(string(results[0].Status)))
	}
	for _, r := range raws {
		var ext struct {
			TraceParent string `json:"traceparent"`
			TraceState  string `json:"tracestate"`
		}
		if r.Err == nil && bytes.Contains(r.JSON, []byte(`"traceparent"`)) && json.Unmarshal(r.JSON, &ext) == nil {
			if sc := telemetry.SpanContext(ext.TraceParent, ext.TraceState); sc.IsValid() {
				span.AddLink(trace.Link{SpanContext: sc})
			}
		}
	}
}

func (s *Service) ingest(ctx context.Context, scope automation.Scope, raws []events.Raw) ([]Result, error) {
	if len(raws) > events.MaxBatchEvents {
		return nil, &automation.Error{Code: events.CodeContentTooLarge, Field: "body", Message: "a batch holds at most 500 events"}
	}
	reg, err := s.Registry.Current(ctx)
	if err != nil && reg == nil {
		return nil, err
	}
	now := s.Clock.Now().UTC()
	results := make([]Result, len(raws))
	var batch []store.GatewayEvent
	var at []int
	units := s.unitMemo(ctx)
	for i, raw := range raws {
		p, res, err := s.prepareSafely(reg, scope, units, raw, now, false)
		if err != nil {
			return nil, err
		}
		res.Index = i
		results[i] = res
		if p == nil {
			continue
		}
		batch = append(batch, p.ev)
		at = append(at, i)
	}
	if len(batch) > 0 {
		outcomes, err := s.Store.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: now, Events: batch})
		if err != nil {
			return nil, err
		}
		for j, o := range outcomes {
			r := &results[at[j]]
			switch o {
			case store.GatewayDuplicate:
				r.Status, r.Routes, r.Filtered = StatusDuplicate, nil, false
			case store.GatewayMessageIDTaken:
				// Only a collision of events.Identity (160 bits) gets here: never in practice.
				r.Status, r.Routes, r.Filtered = StatusRejected, nil, false
				r.Pointer, r.Reason = "/id", "the outbox MessageId derived from (source, id) is taken by another event"
			}
		}
	}
	for _, r := range results {
		s.Metrics.count(r)
		s.logRejection(ctx, r)
	}
	return results, nil
}

// SourceFunc runs the reminder path (the source route) for one event in structured form.
type SourceFunc func(ctx context.Context, raw []byte) error

// Consume runs one event arriving on the domain-events topic through the same gateway code
// (docs/gateway.md#domain-events): its non-source routes are accepted like Ingest's (a
// redelivery is a duplicate and writes nothing), and its source route runs source inline
// (the reminder path, which dedupes by event id itself). An event whose type is not in the
// registry is a SOURCE event: the reminder path's traffic before the registry existed,
// validated by that path exactly as before (events.Parse). Errors: a
// rejection is automation.Invalid naming the pointer (the caller dead-letters it); other
// errors are retryable.
func (s *Service) Consume(ctx context.Context, raw events.Raw, source SourceFunc) (Result, error) {
	reg, err := s.Registry.Current(ctx)
	if err != nil && reg == nil {
		return Result{}, err
	}
	if raw.Err != nil {
		return Result{Status: StatusRejected}, raw.Err
	}
	env, perr := events.ParseEnvelope(raw.JSON)
	if perr != nil || reg.Len() == 0 || !registered(reg, env.Type) {
		// Not a registered type: the reminder path's own traffic, validated by it as before.
		if err := source(ctx, raw.JSON); err != nil {
			return Result{ID: env.ID, Type: env.Type, Status: StatusRejected}, err
		}
		return Result{ID: env.ID, Type: env.Type, Status: StatusAccepted, Routes: []string{RouteSource}}, nil
	}
	now := s.Clock.Now().UTC()
	p, res, err := s.prepareSafely(reg, automation.AllBusinessUnits(), s.unitMemo(ctx), raw, now, true)
	if err != nil {
		return res, err
	}
	if p == nil {
		s.Metrics.count(res)
		s.logRejection(ctx, res)
		return res, automation.Invalid(strings.TrimPrefix(res.Pointer, "/"), "%s", res.Reason)
	}
	if len(p.ev.Outbox) > 0 {
		outcomes, err := s.Store.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: now, Events: []store.GatewayEvent{p.ev}})
		if err != nil {
			return res, err
		}
		switch outcomes[0] {
		case store.GatewayDuplicate:
			res.Status = StatusDuplicate
		case store.GatewayMessageIDTaken:
			res.Status, res.Pointer, res.Reason = StatusRejected, "/id", "the outbox MessageId derived from (source, id) is taken by another event"
			s.Metrics.count(res)
			s.logRejection(ctx, res)
			return res, automation.Invalid("id", "%s", res.Reason)
		}
	}
	if p.source {
		if err := source(ctx, p.raw); err != nil {
			return res, err
		}
	}
	s.Metrics.count(res)
	return res, nil
}

func reject(res Result, pointer, format string, args ...any) (*prepared, Result) {
	res.Status, res.Pointer, res.Reason = StatusRejected, pointer, fmt.Sprintf(format, args...)
	res.Routes = nil
	return nil, res
}

func pointerOfInvalid(err error) (string, string) {
	var ae *automation.Error
	if errors.As(err, &ae) {
		if ae.Field == "" || ae.Field == "event" {
			return "", ae.Message
		}
		return pointerOf(ae.Field), ae.Message
	}
	return "", err.Error()
}

// utf16Len is the length of s in UTF-16 code units (Service Bus counts them), without
// allocating.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if utf16.RuneLen(r) == 2 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// unitMemo answers whether a business unit exists, asking the store once per unit for one
// request (its memo holds at most a batch's units: events.MaxBatchEvents). Errors: the
// store's (transient: the request fails as a whole, nothing accepted).
func (s *Service) unitMemo(ctx context.Context) func(bu string) (bool, error) {
	memo := map[string]bool{}
	return func(bu string) (bool, error) {
		if known, ok := memo[bu]; ok {
			return known, nil
		}
		_, err := s.Store.BusinessUnitGet(ctx, bu)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		memo[bu] = err == nil
		return err == nil, nil
	}
}

// prepareSafely is prepare behind a recover: a panic while checking one event (a schema
// library's, say) rejects that event alone, and the rest of its request goes on (docs/gateway.md#bad-input).
func (s *Service) prepareSafely(reg *Registry, scope automation.Scope, units func(string) (bool, error), raw events.Raw, now time.Time, viaBus bool) (p *prepared, res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			if raw.Err == nil {
				if env, err := events.ParseEnvelope(raw.JSON); err == nil {
					res.ID, res.Type = env.ID, env.Type
				}
			}
			if s.Log != nil {
				s.Log.Error("gateway: panic while checking an event; the event is rejected, the rest of its request goes on",
					"eventId", res.ID, "type", res.Type, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
			p, err = nil, nil
			res = Result{ID: res.ID, Type: res.Type, Status: StatusRejected,
				Reason: "this event could not be checked (an internal error, logged for the operators); it was not accepted and may be sent again after a fix"}
		}
	}()
	return s.prepare(reg, scope, units, raw, now, viaBus)
}

// prepare checks one event and builds its ledger row and outbox rows. viaBus: the event
// came from domain-events, so the source route runs inline instead of being written.
// Errors: the store's, looking the business unit up (nothing is rejected for it).
func (s *Service) prepare(reg *Registry, scope automation.Scope, units func(string) (bool, error), raw events.Raw, now time.Time, viaBus bool) (*prepared, Result, error) {
	if raw.Err != nil {
		p, msg := pointerOfInvalid(raw.Err)
		return rejectOnly(Result{}, p, "%s", msg)
	}
	env, err := events.ParseEnvelope(raw.JSON)
	if err != nil {
		p, msg := pointerOfInvalid(err)
		return rejectOnly(Result{}, p, "%s", msg)
	}
	return s.prepareEnvelope(reg, scope, units, raw.JSON, env, now, viaBus)
}

func rejectOnly(res Result, pointer, format string, args ...any) (*prepared, Result, error) {
	p, r := reject(res, pointer, format, args...)
	return p, r, nil
}

// hasControl reports a control character (C0, DEL, C1) in s.
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// prepareEnvelope is prepare for an event whose envelope was parsed already (raw is its
// structured JSON), so no event is parsed twice. The checks are every rule a later stage
// would refuse the event by (docs/gateway.md#bad-input): the unit exists and is in scope,
// the time bound (attribute.CheckEventTime), the registered type and its schema, the
// engine's instruction check (attribute.CheckInstruction) on the resolved instructions.
func (s *Service) prepareEnvelope(reg *Registry, scope automation.Scope, units func(string) (bool, error), raw []byte, env events.Envelope, now time.Time, viaBus bool) (*prepared, Result, error) {
	res := Result{}
	var err error
	res.ID, res.Type = env.ID, env.Type
	if utf16Len(env.ID) > MaxEventIDLength {
		return rejectOnly(res, "/id", "is longer than %d characters", MaxEventIDLength)
	}
	if hasControl(env.ID) {
		return rejectOnly(res, "/id", "must not contain control characters (NUL, tab, newline, …): it becomes a broker MessageId")
	}
	bu, _ := env.Extensions["businessunitid"].(string)
	if bu == "" || !tokenRE.MatchString(bu) {
		return rejectOnly(res, "/businessunitid", "extension is required: a token of letters, digits and ._~@+/-")
	}
	if !scope.Allows(bu) {
		return rejectOnly(res, "/businessunitid", "business unit %q not found", bu)
	}
	known, err := units(bu)
	if err != nil {
		return nil, res, err
	}
	if !known {
		return rejectOnly(res, "/businessunitid", "business unit %q not found", bu)
	}
	// Only a unit that exists and is in scope labels the metrics (their map stays bounded).
	res.businessUnit = bu
	def, ok := reg.Lookup(env.Type)
	if !ok {
		if why := reg.LeftOut(env.Type); why != "" {
			return rejectOnly(res, "/type", "the definition of event type %q is not in force: %s", env.Type, why)
		}
		return rejectOnly(res, "/type", "event type %q is not registered", env.Type)
	}
	res.RegistryVersion = def.Version
	// After the type is known, so a registered type's rejection counts under its type.
	if !env.Time.IsZero() {
		if err := attribute.CheckEventTime("time", env.Time, now); err != nil {
			_, msg := pointerOfInvalid(err)
			return rejectOnly(res, "/time", "%s", msg)
		}
	}
	customer := env.Extensions["customerid"]
	if customer == nil {
		customer = env.Extensions["entityguid"]
	}
	cid, _ := customer.(string)
	if cid == "" || !tokenRE.MatchString(cid) || utf16Len(cid) > MaxCustomerIDLength {
		return rejectOnly(res, "/customerid", "extension customerid (or the entity's entityguid) is required: a token of at most %d characters", MaxCustomerIDLength)
	}
	maxData := s.MaxDataBytes
	if maxData <= 0 {
		maxData = DefaultMaxDataBytes
	}
	if len(env.Data) > maxData {
		return rejectOnly(res, "/data", "is %d bytes, over the limit of %d", len(env.Data), maxData)
	}
	var inst any
	if env.Data != nil {
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(env.Data)); err != nil {
			return rejectOnly(res, "/data", "is not valid JSON")
		}
	}
	if ptr, reason, bad := absurdNumber(inst); bad {
		return rejectOnly(res, "/data"+ptr, "%s", reason)
	}
	if err := def.schema.Validate(inst); err != nil {
		p, msg := firstViolation(err)
		return rejectOnly(res, "/data"+p, "does not match the registered schema (version %d): %s", def.Version, msg)
	}
	routes := def.Routes
	if slices.Contains(routes, RouteSource) {
		if _, err := events.Parse(raw); err != nil {
			p, msg := pointerOfInvalid(err)
			return rejectOnly(res, p, "a source event is an entity snapshot: %s", msg)
		}
	}
	if !passes(def.Filters, inst) {
		res.Status, res.Filtered = StatusAccepted, true
		routes = nil
	}
	// Every internal identity derives from (source, id), CloudEvents' identity of an event
	// (docs/gateway.md#event-identity): two producers may both send id "1".
	key := events.Identity(env.Source, env.ID)
	pr := &prepared{raw: raw, ev: store.GatewayEvent{Source: env.Source, ID: env.ID, Type: env.Type, BusinessUnitID: bu,
		CustomerID: cid, RegistryVersion: def.Version, Routes: strings.Join(routes, ",")}}
	ts := env.Time
	if ts.IsZero() {
		ts = now
	}
	base := Payload{Origin: attribute.Origin{EventID: env.ID, Source: env.Source, SourceEvent: env.Type, CustomerID: cid, BusinessUnitID: bu,
		Timestamp: ts.UTC().Format(time.RFC3339Nano)}, RegistryVersion: def.Version, Data: env.Data}
	for _, route := range routes {
		if route == RouteSource {
			pr.source = true
			if viaBus {
				continue
			}
			entity, _ := env.Extensions["entityguid"].(string)
			pr.ev.Outbox = append(pr.ev.Outbox, store.OutboxMessage{MessageID: key + ":" + route, Destination: Destination(route),
				SessionID: entity, Body: raw})
			continue
		}
		body := base
		body.Route = route
		switch route {
		case RouteTracking:
			ins, ptr, err := instructionsFor(def.Counter, cid, inst)
			if err != nil {
				return rejectOnly(res, ptr, "%v", err)
			}
			body.Instructions = ins
		case RouteNoti:
			n, ptr, err := notificationFor(def.Notification, inst)
			if err != nil {
				return rejectOnly(res, ptr, "%v", err)
			}
			body.Notification = n
		}
		b, err := json.Marshal(body)
		if err != nil {
			return rejectOnly(res, "", "%v", err)
		}
		pr.ev.Outbox = append(pr.ev.Outbox, store.OutboxMessage{MessageID: key + ":" + route, Destination: Destination(route),
			SessionID: cid, Body: b})
	}
	pr.routes = routes
	res.Status, res.Routes = StatusAccepted, routes
	return pr, res, nil
}

// lookup resolves a JSON Pointer into data; ok false when a member is absent.
func lookup(doc any, ptr string) (any, bool) {
	p, err := jsonpointer.New(ptr)
	if err != nil {
		return nil, false
	}
	v, _, err := p.Get(doc)
	if err != nil {
		return nil, false
	}
	return v, true
}

// passes evaluates the filter conditions: all must hold.
func passes(conds []Condition, data any) bool {
	for _, c := range conds {
		v, ok := lookup(data, c.Pointer)
		var hold bool
		switch c.Op {
		case "exists":
			hold = ok
		case "notExists":
			hold = !ok
		case "equals":
			hold = ok && same(v, c.Value)
		case "notEquals":
			hold = !ok || !same(v, c.Value)
		case "in", "notIn":
			in := ok && slices.ContainsFunc(c.Values, func(x any) bool { return same(v, x) })
			hold = in == (c.Op == "in")
		}
		if !hold {
			return false
		}
	}
	return true
}

// same compares two JSON scalars; numbers by value (1 equals 1.0).
func same(a, b any) bool {
	na, aNum := number(a)
	nb, bNum := number(b)
	if aNum || bNum {
		return aNum && bNum && na.Cmp(nb) == 0
	}
	return a == b
}

func number(v any) (*big.Rat, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case float64:
		s = fmt.Sprint(x)
	case int, int64:
		s = fmt.Sprint(x)
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// scalarText is a data value as an id or list item: a string, or a number's text.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case json.Number:
		return string(x), true
	}
	return "", false
}

func registered(reg *Registry, typ string) bool {
	_, ok := reg.Lookup(typ)
	return ok
}

// BusinessUnit is the event's business unit ("" when it could not be read).
func (r Result) BusinessUnit() string { return r.businessUnit }
