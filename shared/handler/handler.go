package handler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
)

// Mode is how DueWorkPoller executes claimed rows.
type Mode string

// Modes.
const (
	Inline Mode = "inline" // execute in the poller with bounded concurrency
	Fanout Mode = "fanout" // one due-work message per claimed row, for DueWorkExecutor
)

// Deps are the services the functions call.
type Deps struct {
	Store  store.SchedulerStore
	Events *events.Router
	// Gateway runs domain-events messages through the event gateway (docs/gateway.md#domain-events);
	// nil: straight to Events. Noti turns noti messages into deliveries (NotiDelivery).
	Gateway *gateway.Service
	Noti    *gateway.NotiDelivery
	// Attributes applies tracking messages (TrackingProcessor, docs/attributes.md);
	// AttributeFlusher folds hot counters' deltas on the OutboxRelay timer; AttributePurger
	// deletes processed-event ids older than the dedupe window on the same timer, at most
	// hourly (docs/attributes.md#retention). Nil: not run.
	Attributes       *attribute.Service
	AttributeFlusher *attribute.Flusher
	AttributePurger  *attribute.ProcessedPurger
	Poller           *scheduler.Poller
	Relay            *delivery.Relay
	Dispatcher       *delivery.Dispatcher
	Projector        *delivery.Projector
	Publisher        bus.Publisher // due-work fan-out
	Trace            trace.Writer  // dead-letter diagnostics; may be nil
	// OnDeadLetter, when set, is called for each message dead-lettered with its record (after
	// the record was written): the embedded runtime keeps it in the in-process bus's
	// dead-letter list, so GET /api/support/dead-letters lists it and a requeue delivers it
	// again (docs/operations.md#dead-letters).
	OnDeadLetter func(ctx context.Context, function string, msg funchost.ServiceBusMessage, reason error)
	Clock        automation.Clock
	Mode         Mode
	// RelayAfterPoll: an inline DueWorkPoller run that completed rows relays the outbox
	// right after its transactions committed (the commit path), so its deliveries do not
	// wait for the OutboxRelay timer, which stays as the safety net (config
	// AUTOMATION_RELAY_AFTER_POLL; the low traffic profile lengthens that timer).
	RelayAfterPoll bool
	// RelayBudget bounds the relay's drain in one OutboxRelay invocation, and in one relay
	// after a poll (delivery.Relay.Drain; 0: delivery.DefaultDrainBudget). Config
	// AUTOMATION_RELAY_BUDGET_MS.
	RelayBudget time.Duration
	// DrainBatches: an inline DueWorkPoller run drains up to this many batches with one batch
	// ahead (scheduler.Poller.Drain) when above 1; 0 or 1 runs one batch (RunOnce). Config
	// AUTOMATION_DUEWORK_DRAIN_BATCHES.
	DrainBatches int
	Log          *slog.Logger
	// Campaigns, when set, rides the OutboxRelay timer: the campaign worker's sweep and the
	// outbox retention purge (CampaignDeps.SweepCampaigns).
	Campaigns *CampaignDeps
	// BatchDeadline bounds how long a "cardinality": "many" invocation keeps starting work
	// (batchInvocation): no chunk of the batch starts once it has passed since the
	// invocation began, by Clock. 0 means topology.BatchDeadline (half the entities' lock
	// duration); set it well under topology.LockDuration (config
	// AUTOMATION_BATCH_DEADLINE_SECONDS).
	BatchDeadline time.Duration
	// SampleMetrics, when set, rides the OutboxRelay timer too: it records the console's
	// metrics history, sampling at most once a minute and purging past the retention
	// (support.Sampler.RunOnce); its answer goes into the timer's result as "metricsHistory".
	SampleMetrics func(context.Context) (any, error)
}

// Register adds every function to r.
func Register(r *funchost.Router, d Deps) {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	r.Register(topology.DomainEventHandler, logged(d.domainEvent))
	r.Register(topology.DueWorkPoller, logged(d.dueWorkPoller))
	r.Register(topology.DueWorkExecutor, logged(d.dueWorkExecutor))
	r.Register(topology.NotificationDispatch, logged(d.notificationDispatch))
	r.Register(topology.OutboxRelay, logged(d.outboxRelay))
	r.Register(topology.DeliveryFactProjection, logged(d.deliveryFactProjection))
	r.Register(topology.NotiDelivery, logged(d.notiDelivery))
	r.Register(topology.TrackingProcessor, logged(d.trackingProcessor))
}

// trackingProcessor: the tracking route's fat payloads are applied to their entities'
// attributes, a batch at a time in one transaction (attribute.Service.HandleBatch; each
// message as alone it would be, in the session's order). TrackingProcessor is declared
// "cardinality": "many" on its session-enabled subscription, so the host hands it up to
// topology.MaxMessageBatchSize messages of one session at once, and the batch is answered by
// notificationDispatch's rule (batchInvocation): a permanent error (bad payload, an
// instruction that does not fit the stored value) is dead-lettered with its reason and
// nothing of it written, without failing its batch-mates; any other error fails the batch,
// and its batch-mates already applied come again as Duplicates (their processed-event rows).
func (d Deps) trackingProcessor(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	if d.Attributes == nil {
		return funchost.Result{}, errors.New("TrackingProcessor is not configured")
	}
	return d.batchInvocation(ctx, inv, topology.TrackingTopic, "tracking", func(ctx context.Context, msgs []bus.Message) []error {
		bodies, parents := tracedBodiesOf(msgs)
		_, errs := d.Attributes.HandleBatchTraced(ctx, bodies, parents)
		for i, err := range errs {
			if err != nil && automation.IsInvalid(err) && !automation.IsPermanent(err) {
				errs[i] = automation.Permanent(err) // bad input is dead-lettered, never retried
			}
		}
		return errs
	})
}

// notiDelivery: the noti route's message becomes immediate deliveries keyed by the event id.
func (d Deps) notiDelivery(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	msg, err := inv.ServiceBus("message")
	if err != nil {
		return funchost.Result{}, d.deadLetter(ctx, inv, nil, err)
	}
	if d.Noti == nil {
		return funchost.Result{}, errors.New("NotiDelivery is not configured")
	}
	switch err := d.Noti.Handle(ctx, msg.Body); {
	case err == nil:
		return ok(map[string]any{"messageId": msg.MessageID})
	case automation.IsInvalid(err):
		return funchost.Result{}, d.deadLetter(ctx, inv, msg, err)
	default:
		return funchost.Result{}, err
	}
}

// logged puts the function name and invocation id in the context, so every line the
// services log for this invocation carries them (logctx).
func logged(h funchost.Handler) funchost.Handler {
	return func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		return h(logctx.With(ctx, logctx.Function, inv.FunctionName, logctx.InvocationID, inv.InvocationID), inv)
	}
}

func ok(summary any, logs ...string) (funchost.Result, error) {
	return funchost.Result{ReturnValue: summary, Logs: logs}, nil
}

// domainEvent: ① run the trigger providers for one CloudEvent.
func (d Deps) domainEvent(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	msg, err := inv.ServiceBus("message")
	if err != nil {
		return funchost.Result{}, d.deadLetter(ctx, inv, nil, err)
	}
	var ev events.Event
	source := func(ctx context.Context, raw []byte) error {
		var err error
		if ev, err = events.Parse(raw); err != nil {
			return err
		}
		return d.Events.Dispatch(ctx, ev)
	}
	raw := events.DecodeServiceBusMessage(msg.ApplicationProperties, msg.ContentType, msg.Body)
	ctx, seen := events.WithOutcome(ctx)
	duplicate := false
	if d.Gateway != nil {
		var res gateway.Result
		res, err = d.Gateway.Consume(ctx, raw, source)
		if ev.ID == "" {
			ev.ID, ev.BusinessUnitID = res.ID, res.BusinessUnit()
		}
		duplicate = res.Status == gateway.StatusDuplicate
	} else if err = raw.Err; err == nil {
		err = source(ctx, raw.JSON)
	}
	switch {
	case err == nil:
		// outcome "duplicate": the same source and id were processed before and nothing
		// changed (the local events route and `publish -local` answer it as such).
		outcome := EventProcessed
		if duplicate || seen.Duplicate() {
			outcome = EventDuplicate
		}
		// One line per message: DEBUG (a production rate would flood INFO); the invocation's
		// answer carries the outcome to the host's own metrics.
		d.Log.DebugContext(ctx, "domain event "+outcome, "step", "event", "function", inv.FunctionName, "invocationId", inv.InvocationID, "sourceEventId", ev.ID, "businessUnitId", ev.BusinessUnitID)
		return ok(map[string]any{"eventId": ev.ID, "outcome": outcome})
	case automation.IsInvalid(err):
		return funchost.Result{}, d.deadLetter(ctx, inv, msg, err)
	default:
		return funchost.Result{}, err
	}
}

// The outcome of a DomainEventHandler invocation that succeeded (its ReturnValue's
// "outcome"): processed, or duplicate when the event's source and id were processed before.
const (
	EventProcessed = "processed"
	EventDuplicate = "duplicate"
)

// DueWorkMessage is the body of a due-work message: one claimed row and its claim token.
type DueWorkMessage struct {
	SchedulerKey string `json:"schedulerKey"`
	Token        int64  `json:"token"`
}

// dueWorkPoller: ② rescue, claim a bounded batch, execute inline or fan out.
func (d Deps) dueWorkPoller(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	if _, err := inv.Timer("timer"); err != nil {
		return funchost.Result{}, automation.Permanent(err)
	}
	if d.Mode != Fanout {
		var res scheduler.Result
		var err error
		if d.DrainBatches > 1 {
			res, err = d.Poller.Drain(ctx, d.DrainBatches, nil)
		} else {
			res, err = d.Poller.RunOnce(ctx)
		}
		if err != nil {
			return funchost.Result{}, err
		}
		level := slog.LevelInfo
		if res.Claimed == 0 && res.Rescued == 0 {
			level = slog.LevelDebug
		}
		d.Log.Log(ctx, level, "due-work poll", "function", inv.FunctionName, "invocationId", inv.InvocationID, "step", "poll",
			"rescued", res.Rescued, "claimed", res.Claimed, "completed", res.Completed, "deactivated", res.Deactivated,
			"retrying", res.Retrying, "held", res.Held, "leaseLost", res.LeaseLost)
		if d.RelayAfterPoll && res.Completed > 0 {
			d.relayAfterPoll(ctx, inv)
		}
		return ok(res)
	}
	res, rows, err := d.Poller.Claim(ctx)
	if err != nil {
		return funchost.Result{}, err
	}
	for i, row := range rows {
		body, _ := json.Marshal(DueWorkMessage{SchedulerKey: row.SchedulerKey, Token: row.Version})
		m := bus.Message{ID: fmt.Sprintf("%s-v%d", row.Guid, row.Version), Destination: topology.DueWorkQueue, Body: body}
		if err := d.Publisher.Publish(ctx, m); err != nil {
			// The unpublished rows stay claimed; stale-lease rescue returns them to Pending.
			return funchost.Result{}, fmt.Errorf("fan out %d of %d claimed rows: %w", i, len(rows), err)
		}
	}
	d.Log.InfoContext(ctx, "due-work poll", "function", inv.FunctionName, "invocationId", inv.InvocationID, "step", "fan-out",
		"rescued", res.Rescued, "claimed", len(rows))
	return ok(map[string]any{"rescued": res.Rescued, "claimed": len(rows), "fannedOut": len(rows)})
}

// dueWorkExecutor: ② execute one claimed row from a due-work message.
func (d Deps) dueWorkExecutor(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	msg, err := inv.ServiceBus("message")
	if err != nil {
		return funchost.Result{}, d.deadLetter(ctx, inv, nil, err)
	}
	var m DueWorkMessage
	if err := strictjson.Decode(msg.Body, &m); err != nil || m.SchedulerKey == "" || m.Token <= 0 {
		return funchost.Result{}, d.deadLetter(ctx, inv, msg, fmt.Errorf("due-work message: want {\"schedulerKey\",\"token\"}: %v", err))
	}
	row, err := d.Store.SchedulerGetByKey(ctx, m.SchedulerKey)
	if errors.Is(err, store.ErrNotFound) {
		return funchost.Result{}, d.deadLetter(ctx, inv, msg, fmt.Errorf("due-work message: no row %q", m.SchedulerKey))
	}
	if err != nil {
		return funchost.Result{}, err
	}
	if row.Status != automation.StatusProcessing || row.Version != m.Token {
		// Redelivered after the row moved on (completed, rescued or re-claimed): the
		// current owner decides; nothing to do here.
		return ok(map[string]any{"schedulerKey": m.SchedulerKey, "outcome": "Stale"})
	}
	o, err := d.Poller.Execute(ctx, row)
	if err != nil {
		return funchost.Result{}, err
	}
	return ok(map[string]any{"schedulerKey": m.SchedulerKey, "outcome": o})
}

// notificationDispatch: ③ send the deliveries of a batch behind their send claims, in two
// transactions per batch (Dispatcher.HandleBatch). NotificationDispatch is declared
// "cardinality": "many", so the host hands it up to topology.MaxMessageBatchSize messages at
// once (an invocation in the single-message shape is a batch of one).
//
// The host settles the whole batch by the invocation's answer, so the answer follows one
// rule (docs/functions-protocol.md#service-bus-batches):
//   - 200 when every message of the batch is settled for good: sent, nothing to do (its job
//     already finished, waiting for the sweep's retry, or awaiting resolution), or
//     dead-lettered with its diagnostics record (a message that does not decode, a malformed
//     body, an unknown delivery key) exactly as one message alone would be;
//   - non-2xx when any message must come again (a store error, another sender's live claim,
//     a crash between a send and its record, a record that failed): the host abandons every
//     message of the batch and each comes again. A batch-mate already sent is then a no-op:
//     its send claim finds the job Sent (or its Version moved on), so failing a batch loses
//     nothing and sends nothing twice; its only cost is that batch-mate's DeliveryCount.
//
// A message that can never succeed is dead-lettered and never fails its batch, so it cannot
// hold its batch-mates back.
func (d Deps) notificationDispatch(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	return d.batchInvocation(ctx, inv, topology.NotificationDispatchQueue, "dispatch", d.Dispatcher.HandleBatch)
}

// BatchChunk is how many messages of a batch invocation batchInvocation hands to the service
// at once: the deadline is checked before each chunk, so a batch of
// topology.MaxMessageBatchSize (100) is four chunks. For the functions that grow their
// chunks (growChunk) it is the first chunk's size and every later chunk's least.
const BatchChunk = 25

// growChunk is the size of the next chunk of a growing batch invocation: as many messages
// as the chunks so far (done messages in took) handled in half the time left before the
// deadline (left), at least BatchChunk. A batch whose first chunk took 20 ms of a 30 s
// deadline takes the rest in one chunk; a slow one (each chunk near the deadline) keeps
// chunks of BatchChunk, so no chunk is projected to run past the deadline's half of the
// lock (topology.BatchDeadline) by more than a BatchChunk chunk already could.
//
// A grown chunk is at most topology.MaxMessageBatchSize (100, host.json's batch), however
// large a batch AUTOMATION_CONSUMER_BATCH lets the embedded bus hand over: a dispatch chunk
// is one send claim, and a crash in the middle leaves its claims in doubt, so the claims a
// crash can leave for a person stay bounded by 100 (docs/performance.md, "Dispatch, per
// batch": what a batch costs when the process dies).
func growChunk(took time.Duration, done int, left time.Duration) int {
	if done <= 0 || left <= 0 {
		return BatchChunk
	}
	if took <= 0 {
		return topology.MaxMessageBatchSize // no time measured (a clock that stands still)
	}
	n := float64(left/2) / (float64(took) / float64(done))
	return max(BatchChunk, int(min(n, topology.MaxMessageBatchSize)))
}

// ErrBatchDeadline is the error of a message of a batch whose chunk was not started because
// the invocation's deadline (Deps.BatchDeadline) had passed; it is marked RetryAfter: the
// batch fails and the message comes again.
var ErrBatchDeadline = errors.New("the batch's deadline passed before this message was started; it comes again")

// batchInvocation runs a "cardinality": "many" Service Bus invocation: it decodes the batch
// (a message that does not decode is dead-lettered), hands the messages to handle
// BatchChunk at a time (each message's error at its place; destination names the bus
// destination of the messages, what the function in the failure answer), and answers by the
// rule of notificationDispatch: 200 when every message is settled for good (done, or
// dead-lettered with its record because its error is Permanent), else non-2xx so the host
// brings the whole batch again (logged at INFO when every failure is a RetryAfter, as
// another sender's live claim is).
//
// Deadline: the host does not renew a batch's locks (maxAutoLockRenewalDuration applies to
// single-message functions only), so once Deps.BatchDeadline has passed since the
// invocation began no further chunk starts (time passed is the Clock's forward movement
// summed between its readings: a Clock stepped back, NTP, does not push the deadline out by
// the step); the first chunk always runs, so every invocation makes progress. The messages not started get ErrBatchDeadline and the batch
// fails while its locks still hold: the host abandons every message, the finished ones come
// again as no-ops (a delivery's send claim finds its job Sent, a fact's revision is already
// applied) and the rest are handled by the next invocation. Nothing is lost, nothing is
// applied twice, and no lock expires under work still going on.
func (d Deps) batchInvocation(ctx context.Context, inv *funchost.Invocation, destination, what string, handle func(context.Context, []bus.Message) []error) (funchost.Result, error) {
	// The dispatch's send claims and the delivery facts' applies are one write transaction
	// per chunk: a chunk after the first may be larger than BatchChunk when the chunks so
	// far were fast (growChunk), so a deep backlog (the 09:00 herd) takes fewer, larger ones.
	grow := destination == topology.NotificationDispatchQueue || destination == topology.DeliveryFactsTopic
	items, err := inv.ServiceBusBatch("message")
	if err != nil {
		// The batch cannot be told apart message by message (a Metadata array not as long
		// as the bodies, bodies that are not an array): no message is at fault, and a
		// permanent answer would make the host complete every one of them with no body
		// kept. A plain failure: the host abandons the batch, the broker brings each
		// message again and, after MaxDeliveryCount, dead-letters each with its body.
		return funchost.Result{}, fmt.Errorf("%s: the batch cannot be decoded message by message, the host brings it again: %v", what, err)
	}
	errs := make([]error, len(items))
	var msgs []bus.Message
	var at []int // items index of msgs[j]
	for i, it := range items {
		if it.Err != nil {
			errs[i] = automation.Permanent(it.Err)
			continue
		}
		// Each message keeps its trace context (its application properties), so that its own
		// work joins its own trace although the batch is one invocation.
		tp, ts := telemetry.FromProperties(it.Message.ApplicationProperties)
		msgs = append(msgs, bus.Message{ID: it.Message.MessageID, Destination: destination, SessionID: it.Message.SessionID,
			Body: it.Message.Body, DeliveryCount: it.Message.DeliveryCount, TraceParent: tp, TraceState: ts})
		at = append(at, i)
	}
	budget := d.BatchDeadline
	if budget <= 0 {
		budget = topology.BatchDeadline
	}
	// elapsed is how far the Clock moved forward since the invocation began, summed reading
	// by reading: a reading earlier than the one before it (the wall clock stepped back, an
	// NTP correction; SystemClock's UTC readings carry no monotonic reading) adds nothing,
	// so the deadline still comes, at most the chunk the step fell in late, and growChunk
	// never sees a negative time taken.
	last := d.Clock.Now()
	var elapsed time.Duration
	for lo, hi := 0, 0; lo < len(msgs); lo = hi {
		now := d.Clock.Now()
		if step := now.Sub(last); step > 0 {
			elapsed += step
		}
		last = now
		if lo > 0 && elapsed >= budget {
			late := automation.RetryAfter(0, ErrBatchDeadline)
			for j := lo; j < len(msgs); j++ {
				errs[at[j]] = late
			}
			d.Log.InfoContext(ctx, "batch deadline passed; the rest of the batch comes again", "function", inv.FunctionName,
				"invocationId", inv.InvocationID, "step", "batch-deadline", "started", lo, "notStarted", len(msgs)-lo, "deadline", budget.String())
			break
		}
		hi = lo + BatchChunk
		if grow && lo > 0 {
			hi = lo + growChunk(elapsed, lo, budget-elapsed)
		}
		hi = min(hi, len(msgs))
		for j, err := range handle(ctx, msgs[lo:hi]) {
			errs[at[lo+j]] = err
		}
	}
	var again []error
	var dead []string // the Logs of the answer, one line per message dead-lettered
	retryAfter := true
	for i, err := range errs {
		if err == nil {
			continue
		}
		if automation.IsPermanent(err) {
			msg := items[i].Message
			if msg.MessageID == "" {
				// Name the record apart from its batch-mates'.
				msg.MessageID = fmt.Sprintf("%s-%d", inv.InvocationID, i)
			}
			if err = d.deadLetter(ctx, inv, msg, err); automation.IsPermanent(err) {
				dead = append(dead, fmt.Sprintf("message %d (%s): %v", i, msg.MessageID, err))
				continue
			}
		}
		// Another sender holding the claim (two serve processes on one SQLite file, two
		// instances) comes back as automation.RetryAfter(delivery.ErrInFlight): the router
		// answers 500 so the host redelivers, and logs it at INFO, not ERROR, when that is
		// all there is.
		retryAfter = retryAfter && automation.IntentOf(err) == automation.IntentRetryAfter
		again = append(again, fmt.Errorf("message %d (%s): %w", i, items[i].Message.MessageID, err))
	}
	if len(again) > 0 {
		if retryAfter {
			return funchost.Result{}, errors.Join(again...)
		}
		// %v: the answer is a plain failure, whatever intent a message's error carries.
		return funchost.Result{}, fmt.Errorf("%s: %d of %d messages must come again, the batch fails: %v", what, len(again), len(items), errors.Join(again...))
	}
	return ok(map[string]any{"messages": len(items), "deadLettered": len(dead)}, dead...)
}

// relayAfterPoll publishes what the poll just committed to the outbox (Relay.Drain within
// RelayBudget). It never fails the poll: the rows are committed, and whatever is not
// published now the OutboxRelay timer publishes later (a concurrent relay may publish a
// message twice with the same MessageId: Service Bus duplicate detection and the send claim
// absorb it).
func (d Deps) relayAfterPoll(ctx context.Context, inv *funchost.Invocation) {
	res, err := d.Relay.Drain(ctx, d.RelayBudget)
	if err != nil {
		d.Log.WarnContext(ctx, "relay after poll failed; the OutboxRelay timer retries", "function", inv.FunctionName,
			"invocationId", inv.InvocationID, "step", "relay-after-poll", "published", res.Published, "errorCode", "RelayFailed", "error", err.Error())
		return
	}
	d.Log.DebugContext(ctx, "relay after poll", "function", inv.FunctionName, "invocationId", inv.InvocationID, "step", "relay-after-poll", "published", res.Published)
}

// outboxRelay: publish what the outbox still holds (the safety net of docs/architecture.md#hand-off).
func (d Deps) outboxRelay(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	if _, err := inv.Timer("timer"); err != nil {
		return funchost.Result{}, automation.Permanent(err)
	}
	// The relay drains: until the outbox is empty (or every row left is leased by the eager
	// publisher or another instance) or RelayBudget is spent, not a fixed number of rounds.
	drained, err := d.Relay.Drain(ctx, d.RelayBudget)
	total := drained.Published
	if err != nil {
		return funchost.Result{}, err
	}
	// The dispatcher's timer-driven half rides the same timer: retries and lookups whose
	// time came, and send claims whose lease expired (bounded by its SweepBatch).
	sweep, err := d.Dispatcher.Sweep(ctx)
	if err != nil {
		return funchost.Result{}, err
	}
	// Hot counters' deltas are folded on the same timer, in bounded batches
	// (docs/attributes.md#hot-counters).
	var flushed attribute.FlushResult
	if d.AttributeFlusher != nil {
		if flushed, err = d.AttributeFlusher.RunOnce(ctx); err != nil {
			return funchost.Result{}, err
		}
	}
	var purged attribute.PurgeResult
	if d.AttributePurger != nil {
		if purged, err = d.AttributePurger.RunOnce(ctx); err != nil {
			return funchost.Result{}, err
		}
	}
	var campaigns map[string]any
	if d.Campaigns != nil && d.Campaigns.Worker != nil {
		if campaigns, err = d.Campaigns.SweepCampaigns(ctx); err != nil {
			return funchost.Result{}, err
		}
	}
	var sampled any
	if d.SampleMetrics != nil {
		if sampled, err = d.SampleMetrics(ctx); err != nil {
			return funchost.Result{}, err
		}
	}
	level := slog.LevelInfo
	if total == 0 && sweep.Claimed == 0 {
		level = slog.LevelDebug
	}
	d.Log.Log(ctx, level, "outbox relay", "function", inv.FunctionName, "invocationId", inv.InvocationID, "step", "relay", "published", total,
		"swept", sweep.Claimed, "sent", sweep.Sent, "retry", sweep.Retry, "unknown", sweep.Unknown, "failed", sweep.Failed)
	out := map[string]any{"published": total, "sweep": sweep, "attributeFlush": flushed}
	if d.AttributePurger != nil {
		out["attributePurge"] = purged
	}
	if campaigns != nil {
		out["campaigns"] = campaigns
	}
	if sampled != nil {
		out["metricsHistory"] = sampled
	}
	return ok(out)
}

// deliveryFactProjection: apply a batch of delivery facts to the reporting projection in one
// transaction (Projector.HandleBatch). DeliveryFactProjection is declared "cardinality":
// "many", as NotificationDispatch is, and answers by the same rule (batchInvocation): a
// malformed fact is dead-lettered and never fails its batch; a store failure fails the
// batch, and each fact comes again (applying a fact twice is harmless: the projection keeps
// the highest revision per command).
func (d Deps) deliveryFactProjection(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
	return d.batchInvocation(ctx, inv, topology.DeliveryFactsTopic, "delivery facts", d.Projector.HandleBatch)
}

// maxDeadLetterBody bounds the body copy kept in a dead-letter blob.
const maxDeadLetterBody = 64 << 10

// deadLetter records a message that can never succeed: a diagnostics blob
// "deadletter/{function}/{messageId or body hash}.json" (reason and a bounded copy of the
// body) and an AutomationJob trace row (Outcome DeadLettered, SchedulerKey
// "deadletter:{function}:{messageId}"); it logs it and returns a Permanent error so the host
// completes the message instead of retrying it.
func (d Deps) deadLetter(ctx context.Context, inv *funchost.Invocation, msg *funchost.ServiceBusMessage, reason error) error {
	id := inv.InvocationID
	var body []byte
	if msg == nil && id == "" {
		// No message and no invocation id: name the record by the request content.
		sum := sha256.Sum256(inv.Request.Data["message"])
		id = "req-" + hex.EncodeToString(sum[:8])
	}
	if msg != nil {
		body = msg.Body
		id = msg.MessageID
		if id == "" {
			sum := sha256.Sum256(msg.Body)
			id = "sha256-" + hex.EncodeToString(sum[:12])
		}
	}
	if len(body) > maxDeadLetterBody {
		body = body[:maxDeadLetterBody]
	}
	if id == "" {
		id = "no-id"
	}
	name := trace.DeadLetterBlobName(inv.FunctionName, id)
	if d.Trace != nil {
		now := d.Clock.Now()
		rec, _ := json.MarshalIndent(map[string]any{
			"function": inv.FunctionName, "invocationId": inv.InvocationID, "messageId": id,
			"reason": reason.Error(), "recordedOn": now.Format(time.RFC3339Nano), "body": string(body),
		}, "", "  ")
		if err := d.Trace.PutBlob(ctx, name, rec); err != nil {
			// Without the record, let the broker keep the message (it dead-letters it itself).
			return fmt.Errorf("dead-letter record %s: %w (reason: %v)", name, err, reason)
		}
		attempt := 1
		if msg != nil && msg.DeliveryCount > 0 {
			attempt = msg.DeliveryCount
		}
		sum := sha256.Sum256([]byte(inv.FunctionName + "\x00" + id))
		msgText := reason.Error()
		if len(msgText) > 256 {
			msgText = msgText[:256]
		}
		if err := d.Trace.WriteJob(ctx, trace.JobRecord{
			SchedulerKey: "deadletter:" + inv.FunctionName + ":" + id, RowGuid: "dl-" + hex.EncodeToString(sum[:16]),
			BusinessUnitID: "none", AutomationType: "Message", Attempt: attempt, Version: 1,
			Outcome: trace.OutcomeDeadLettered, ReasonCode: "InvalidMessage", ErrorCode: string(automation.CodeOf(reason)),
			Message: msgText, StartedOn: now, FinishedOn: now, TraceBlobName: name,
		}); err != nil {
			return fmt.Errorf("dead-letter trace row %s: %w (reason: %v)", name, err, reason)
		}
	}
	if msg != nil && d.OnDeadLetter != nil {
		m := *msg
		m.MessageID = id
		d.OnDeadLetter(ctx, inv.FunctionName, m, reason)
	}
	d.Log.ErrorContext(ctx, "message dead-lettered", "step", "dead-letter", "function", inv.FunctionName, "invocationId", inv.InvocationID, "messageId", id, "errorCode", string(automation.CodeOf(reason)), "error", reason.Error(), "blob", name)
	return automation.Permanent(fmt.Errorf("dead-lettered as %s: %w", name, reason))
}
