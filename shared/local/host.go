package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/topology"
)

// ncrontab parses the Functions 6-field NCRONTAB format: second minute hour day month
// day-of-week (UTC here, as WEBSITE_TIME_ZONE is not used).
var ncrontab = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule validates a 6-field NCRONTAB expression.
func ParseSchedule(expr string) (cron.Schedule, error) {
	s, err := ncrontab.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("NCRONTAB %q: %w", expr, err)
	}
	return s, nil
}

type timer struct {
	def      funchost.FunctionDef
	schedule cron.Schedule
	next     time.Time
	last     time.Time
}

// Host drives the functions of one runtime locally.
type Host struct {
	handler http.Handler
	bus     *bus.Memory
	clock   automation.Clock
	log     *slog.Logger

	// wake (Wake) cuts Run's wait short: something was published for the consumers;
	// workers are the wake channels of the per-destination consumers (SetConcurrency).
	wake    chan struct{}
	workers []chan struct{}
	conc    map[string]int

	mu     sync.Mutex
	timers []*timer
	byDest map[string]funchost.FunctionDef // Service Bus functions by queue/topic
	http   []string                        // HTTP functions, "/api/{route} ({Name})", sorted
}

// HTTPFunctions lists the HTTP functions the router serves on serve's listener, each as
// "/api/{route} ({FunctionName})", sorted; start-up logs them as "serving HTTP functions".
func (h *Host) HTTPFunctions() []string { return append([]string(nil), h.http...) }

// NewHost wires defs (from funchost.LoadFunctionFolders) to h (the funchost router) and b.
// lookup resolves %Setting% references in schedules and queue names. It fails on a schedule
// that does not parse or a trigger type the local host cannot run.
func NewHost(h http.Handler, b *bus.Memory, defs []funchost.FunctionDef, lookup func(string) (string, bool), clock automation.Clock, log *slog.Logger) (*Host, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host := &Host{handler: h, bus: b, clock: clock, log: log, byDest: map[string]funchost.FunctionDef{}, wake: make(chan struct{}, 1)}
	now := clock.Now()
	for _, def := range defs {
		if def.Disabled {
			continue
		}
		switch def.Trigger.Type {
		case funchost.TriggerTimer:
			expr, err := funchost.ResolveSetting(def.Trigger.Schedule, lookup)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", def.Name, err)
			}
			s, err := ParseSchedule(expr)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", def.Name, err)
			}
			host.timers = append(host.timers, &timer{def: def, schedule: s, next: s.Next(now)})
		case funchost.TriggerServiceBus:
			dest := def.Trigger.QueueName
			if dest == "" {
				dest = def.Trigger.TopicName
			}
			dest, err := funchost.ResolveSetting(dest, lookup)
			if err != nil || dest == "" {
				return nil, fmt.Errorf("%s: no queue or topic: %v", def.Name, err)
			}
			if def.Trigger.Cardinality == funchost.CardinalityMany {
				b.SubscribeBatch(dest, topology.MaxMessageBatchSize, host.deliverBatchTo(def))
			} else {
				b.Subscribe(dest, host.deliverTo(def))
			}
			host.byDest[dest] = def
		case funchost.TriggerHTTP:
			// Served by the router itself on serve's listener (/api/{route}): nothing to run.
			host.http = append(host.http, "/api/"+def.Trigger.Route+" ("+def.Name+")")
		default:
			log.Warn("trigger type the local host cannot run: function not run locally", "function", def.Name, "type", def.Trigger.Type)
		}
	}
	if len(host.http) > 0 {
		sort.Strings(host.http)
		log.Info("serving HTTP functions", "count", len(host.http), "routes", host.http)
	}
	sort.Slice(host.timers, func(i, j int) bool { return host.timers[i].def.Name < host.timers[j].def.Name })
	return host, nil
}

// Invoke POSTs an invocation payload to /{function} through the router and returns the
// HTTP status and body.
func (h *Host) Invoke(ctx context.Context, function string, payload any) (int, []byte, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return 0, nil, err
	}
	return h.post(ctx, function, body)
}

// inProcess is the router's in-process entry (funchost.Router.Invoke): an invocation handed
// over already decoded, with the reply ServeHTTP would write.
type inProcess interface {
	Invoke(ctx context.Context, name, invocationID string, req *funchost.InvocationRequest) (int, []byte)
}

// invoke runs function with the binding values data and the metadata md, each value as the
// Functions host encodes it (json.Marshal of md's values: the host's metadata scalars are
// JSON strings, which the callers quote once more). With the router as handler the
// invocation is handed over decoded (inProcess: no HTTP round trip, no encoding and decoding
// of the whole body, about a tenth of the CPU of a W6 login, docs/performance.md); with any
// other handler it is POSTed as Invoke does. The handler sees the same Data and Metadata
// either way (TestHostHandsOverWhatItWouldPost).
func (h *Host) invoke(ctx context.Context, function string, data map[string]json.RawMessage, md map[string]any) (int, []byte, error) {
	meta := make(map[string]json.RawMessage, len(md))
	for k, v := range md {
		raw, err := json.Marshal(v)
		if err != nil {
			return 0, nil, fmt.Errorf("local host: metadata %s: %w", k, err)
		}
		meta[k] = raw
	}
	if d, ok := h.handler.(inProcess); ok {
		code, body := d.Invoke(ctx, function, uuid.NewString(), &funchost.InvocationRequest{Data: data, Metadata: meta})
		return code, body, nil
	}
	body, err := json.Marshal(funchost.InvocationRequest{Data: data, Metadata: meta})
	if err != nil {
		return 0, nil, err
	}
	return h.post(ctx, function, body)
}

// post POSTs an invocation body to /{function} through the handler.
func (h *Host) post(ctx context.Context, function string, body []byte) (int, []byte, error) {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/"+function, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(funchost.InvocationIDHeader, uuid.NewString())
	req.Header.Set("User-Agent", "automation-local-host")
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), nil
}

func sysMetadata(function string, now time.Time) map[string]any {
	return map[string]any{"sys": map[string]any{"MethodName": function, "UtcNow": now.Format(time.RFC3339Nano), "RandGuid": ""}}
}

// FireTimer invokes a timer function now, with the payload the host sends.
func (h *Host) FireTimer(ctx context.Context, name string) (int, []byte, error) {
	h.mu.Lock()
	var t *timer
	for _, x := range h.timers {
		if x.def.Name == name {
			t = x
		}
	}
	h.mu.Unlock()
	if t == nil {
		return 0, nil, fmt.Errorf("local host: no timer function %q", name)
	}
	return h.fire(ctx, t)
}

func (h *Host) fire(ctx context.Context, t *timer) (int, []byte, error) {
	now := h.clock.Now()
	status := map[string]any{"Next": t.schedule.Next(now).Format(time.RFC3339Nano), "LastUpdated": now.Format(time.RFC3339Nano)}
	if !t.last.IsZero() {
		status["Last"] = t.last.Format(time.RFC3339Nano)
	}
	t.last = now
	payload := map[string]any{
		"Data":     map[string]any{t.def.Trigger.Name: map[string]any{"Schedule": map[string]any{"AdjustForDST": true}, "ScheduleStatus": status, "IsPastDue": false}},
		"Metadata": sysMetadata(t.def.Name, now),
	}
	code, body, err := h.Invoke(ctx, t.def.Name, payload)
	if err == nil && code/100 != 2 {
		h.log.Warn("timer function failed", "function", t.def.Name, "status", code, "body", string(body))
	}
	return code, body, err
}

// deliverTo returns the bus handler that invokes def for each message, as the Service Bus
// trigger does: string body JSON-encoded twice, metadata scalars as JSON strings.
func (h *Host) deliverTo(def funchost.FunctionDef) bus.Handler {
	return func(ctx context.Context, m bus.Message) error {
		code, body, err := h.invokeMessage(ctx, def, m)
		if err != nil {
			return err
		}
		if code/100 != 2 {
			return fmt.Errorf("%s answered %d: %s", def.Name, code, bytes.TrimSpace(body))
		}
		return nil
	}
}

func (h *Host) invokeMessage(ctx context.Context, def funchost.FunctionDef, m bus.Message) (int, []byte, error) {
	now := h.clock.Now()
	once, _ := json.Marshal(string(m.Body))
	twice, _ := json.Marshal(string(once))
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	md := sysMetadata(def.Name, now)
	md["MessageId"] = quote(m.ID)
	md["DeliveryCount"] = strconv.Itoa(m.DeliveryCount)
	md["EnqueuedTimeUtc"] = now.Format("2006-01-02T15:04:05")
	md["ContentType"] = quote("application/json")
	if m.SessionID != "" {
		md["SessionId"] = quote(m.SessionID)
	}
	md["ApplicationProperties"] = messageProperties(m)
	return h.invoke(ctx, def.Name, map[string]json.RawMessage{def.Trigger.Name: twice}, md)
}

// messageProperties are the application properties the host hands over with m: its trace
// context as Service Bus carries it (traceparent, Diagnostic-Id, tracestate), else none.
func messageProperties(m bus.Message) map[string]any {
	if p := telemetry.Properties(m.TraceParent, m.TraceState); p != nil {
		return p
	}
	return map[string]any{}
}

// deliverBatchTo returns the bus batch handler that invokes def (declared "cardinality":
// "many") once for the messages the bus hands over together, with the payload the host
// sends for a batch: Data[binding] a JSON string holding the JSON array of the bodies (each
// a string), and each per-message Metadata value as a JSON string holding one array with an
// element per message (MessageIdArray, DeliveryCountArray, EnqueuedTimeUtcArray,
// ContentTypeArray, SessionIdArray, ApplicationPropertiesArray and its alias
// UserPropertiesArray). A non-2xx answer fails the whole batch, as the host abandons every
// message of a failed invocation.
func (h *Host) deliverBatchTo(def funchost.FunctionDef) bus.BatchHandler {
	return func(ctx context.Context, ms []bus.Message) error {
		code, body, err := h.invokeBatch(ctx, def, ms)
		if err != nil {
			return err
		}
		if code/100 != 2 {
			return fmt.Errorf("%s answered %d for a batch of %d: %s", def.Name, code, len(ms), bytes.TrimSpace(body))
		}
		return nil
	}
}

func (h *Host) invokeBatch(ctx context.Context, def funchost.FunctionDef, ms []bus.Message) (int, []byte, error) {
	now := h.clock.Now()
	n := len(ms)
	bodies, ids, counts, enqueued := make([]string, n), make([]string, n), make([]int, n), make([]string, n)
	types, sessions, props := make([]string, n), make([]*string, n), make([]map[string]any, n)
	for i, m := range ms {
		bodies[i], ids[i], counts[i] = string(m.Body), m.ID, m.DeliveryCount
		enqueued[i], types[i], props[i] = now.Format("2006-01-02T15:04:05"), "application/json", messageProperties(m)
		if m.SessionID != "" {
			sessions[i] = &ms[i].SessionID
		}
	}
	// Each array value is serialized into a string, as the host serializes a value that is
	// not an object (JsonConvert.SerializeObject).
	str := func(v any) json.RawMessage {
		inner, _ := json.Marshal(v)
		outer, _ := json.Marshal(string(inner))
		return outer
	}
	md := sysMetadata(def.Name, now)
	md[funchost.MetaMessageIDArray] = str(ids)
	md[funchost.MetaDeliveryCountArray] = str(counts)
	md[funchost.MetaEnqueuedTimeUtcArray] = str(enqueued)
	md[funchost.MetaContentTypeArray] = str(types)
	md[funchost.MetaSessionIDArray] = str(sessions)
	md[funchost.MetaApplicationPropertiesArray] = str(props)
	md[funchost.MetaUserPropertiesArray] = str(props)
	return h.invoke(ctx, def.Name, map[string]json.RawMessage{def.Trigger.Name: str(bodies)}, md)
}

// Deliver invokes the Service Bus function subscribed to destination with m right now,
// bypassing the queue, and returns its HTTP status and body (the caller learns the outcome
// synchronously; nothing is left in memory to lose).
func (h *Host) Deliver(ctx context.Context, destination string, m bus.Message) (int, []byte, error) {
	def, ok := h.byDest[destination]
	if !ok {
		return 0, nil, fmt.Errorf("local host: no function for %q", destination)
	}
	if m.DeliveryCount == 0 {
		m.DeliveryCount = 1
	}
	if def.Trigger.Cardinality == funchost.CardinalityMany {
		return h.invokeBatch(ctx, def, []bus.Message{m})
	}
	return h.invokeMessage(ctx, def, m)
}

// RunDue fires every timer whose next occurrence is due at the clock's now (each at most
// once per call) and then delivers queued messages (at most maxDeliveries).
func (h *Host) RunDue(ctx context.Context, maxDeliveries int) error {
	_, err := h.runDue(ctx, maxDeliveries)
	return err
}

// runDue is RunDue, also returning the deliveries made.
func (h *Host) runDue(ctx context.Context, maxDeliveries int) (int, error) {
	if err := h.fireDue(ctx); err != nil {
		return 0, err
	}
	return h.bus.Drain(ctx, maxDeliveries)
}

// fireDue fires, one after the other, every timer whose next occurrence is due at the
// clock's now (each at most once per call).
func (h *Host) fireDue(ctx context.Context) error {
	now := h.clock.Now()
	h.mu.Lock()
	var due []*timer
	for _, t := range h.timers {
		if !t.next.After(now) {
			due = append(due, t)
			t.next = t.schedule.Next(now)
		}
	}
	h.mu.Unlock()
	for _, t := range due {
		if _, _, err := h.fire(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// Wake makes Run deliver at once instead of at its next interval (the eager publisher calls
// it after publishing). It never blocks: a wake already pending absorbs it.
func (h *Host) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
	h.mu.Lock()
	workers := h.workers
	h.mu.Unlock()
	for _, w := range workers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// SetConcurrency sets how many consumers Run starts per destination beside its own loop
// (destination -> consumers; 1 or less, or a destination not in the map: Run's loop alone).
// Each takes that destination's messages through bus.Memory.DrainDestination, so a
// session's messages still go one at a time and in order (docs/performance.md#consumers).
// Call it before Run; unknown destinations are ignored.
func (h *Host) SetConcurrency(perDestination map[string]int) {
	h.conc = map[string]int{}
	for d, n := range perDestination {
		if _, ok := h.byDest[d]; ok && n > 1 {
			h.conc[d] = min(n, maxConcurrency)
		}
	}
}

// SetBatchSize sets the most messages one invocation of a batch function (cardinality
// "many") takes from its destination (destination -> count, at least 1; a destination not
// in the map keeps topology.MaxMessageBatchSize, host.json's maxMessageBatchSize). A
// destination without a batch function, or unknown, is ignored. Sessions keep their order
// whatever the size (bus.Memory hands over one message per session per batch). Call it
// before Run.
func (h *Host) SetBatchSize(perDestination map[string]int) {
	for d, n := range perDestination {
		def, ok := h.byDest[d]
		if !ok || def.Trigger.Cardinality != funchost.CardinalityMany || n < 1 {
			continue
		}
		h.bus.SubscribeBatch(d, n, h.deliverBatchTo(def))
	}
}

// maxConcurrency bounds the consumers of one destination.
const maxConcurrency = 16

// runStep bounds the deliveries of one Run step, so due timers fire between steps however
// much the bus holds.
const runStep = 1000

// Run delivers and fires due timers until ctx ends. Its loop serves every destination in
// turn (bus.Memory.DrainInTurn: one delivery, a message or a batch, per destination per
// round, so a destination late in publish order is not starved by busier ones), at most runStep
// deliveries a step) every interval of real time, at once when woken (Wake), and again
// without waiting while a step used its whole bound (the bus still holds messages). The
// timers fire on a goroutine of their own, checked every interval, one invocation at a time
// (a timer never overlaps itself or another), so a long timer invocation (a DueWorkPoller
// draining a 09:00 herd, an OutboxRelay draining a backlog) never holds up the consumers:
// the deliveries it queues are sent while it runs, as the Functions host runs a timer
// function beside its Service Bus functions.
func (h *Host) Run(ctx context.Context, interval time.Duration) error {
	tk := time.NewTicker(interval)
	defer tk.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	dests := slices.Sorted(maps.Keys(h.conc))
	h.mu.Lock()
	h.workers = nil
	var chans [][2]any
	for _, d := range dests {
		for range h.conc[d] - 1 { // Run's own loop is the first consumer
			w := make(chan struct{}, 1)
			h.workers = append(h.workers, w)
			chans = append(chans, [2]any{d, w})
		}
	}
	h.mu.Unlock()
	for _, c := range chans {
		d, w := c[0].(string), c[1].(chan struct{})
		wg.Go(func() { h.consume(ctx, d, w, interval) })
	}
	wg.Go(func() { h.fireTimers(ctx, interval) })
	for {
		n, err := h.bus.DrainInTurn(ctx, runStep)
		if err != nil && ctx.Err() == nil {
			h.log.Error("local host step failed", "error", err)
		}
		if n >= runStep && err == nil {
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tk.C:
		case <-h.wake:
		}
	}
}

// fireTimers fires the due timers (fireDue) at once and then every interval, until ctx ends.
func (h *Host) fireTimers(ctx context.Context, interval time.Duration) {
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		if err := h.fireDue(ctx); err != nil && ctx.Err() == nil {
			h.log.Error("local host timer failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
	}
}

// consume is one extra consumer of destination d (SetConcurrency): it drains d's messages,
// runStep at a time, on each wake and every interval, until ctx ends.
func (h *Host) consume(ctx context.Context, d string, wake <-chan struct{}, interval time.Duration) {
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		n, err := h.bus.DrainDestination(ctx, d, runStep)
		if err != nil && ctx.Err() == nil {
			h.log.Error("local host consumer failed", "destination", d, "error", err)
		}
		if n >= runStep && err == nil && ctx.Err() == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		case <-wake:
		}
	}
}
