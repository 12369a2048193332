package campaign

import (
	"go.opentelemetry.io/otel/trace"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/automation-platform/automation/shared/telemetry"
	"log/slog"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// CommandMessage is the body of a topology.CampaignCommandsQueue message (MessageId = the
// command id): "run this command".
type CommandMessage struct {
	CommandID string `json:"commandId"`
}

// ResultMessage is the body of a topology.CampaignResultsQueue message: a command reached a
// terminal status at Revision (MessageId = "{commandId}:result:r{revision}").
type ResultMessage struct {
	CommandID string              `json:"commandId"`
	Revision  int64               `json:"revision"`
	Status    store.CommandStatus `json:"status"`
}

func commandOutbox(c store.CampaignCommand) store.OutboxMessage {
	body, _ := json.Marshal(CommandMessage{CommandID: c.CommandID})
	return store.OutboxMessage{MessageID: c.CommandID, Destination: topology.CampaignCommandsQueue, Body: body}
}

func resultOutbox(commandID string, revision int64, status store.CommandStatus) store.OutboxMessage {
	body, _ := json.Marshal(ResultMessage{CommandID: commandID, Revision: revision, Status: status})
	return store.OutboxMessage{MessageID: fmt.Sprintf("%s:result:r%d", commandID, revision), Destination: topology.CampaignResultsQueue,
		SessionID: commandID, Body: body}
}

// triggerEvent is what the dispatcher reads of a DIRECT-route message: the gateway's fat
// payload (event_id, source_event, customer_id, business_unit_id; docs/gateway.md#fat-payload)
// or, equally, a CloudEvent (id, type, customerid or subject, businessunitid).
type triggerEvent struct {
	EventID        string `json:"event_id"`
	SourceEvent    string `json:"source_event"`
	EventName      string `json:"event_name"` // an attribute engine trigger (docs/attributes.md)
	CustomerIDFat  string `json:"customer_id"`
	BusinessUnit   string `json:"business_unit_id"`
	ID             string `json:"id"`
	Source         string `json:"source"` // the fat payload's and the CloudEvent's alike
	Type           string `json:"type"`
	BusinessUnitID string `json:"businessunitid"`
	CustomerID     string `json:"customerid"`
	Subject        string `json:"subject"`
}

// normalise folds the fat payload's fields (and an attribute trigger's event_name) into the
// CloudEvent ones.
func (e *triggerEvent) normalise() {
	pick := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	pick(&e.ID, e.EventID)
	pick(&e.Type, e.SourceEvent)
	pick(&e.Type, e.EventName)
	pick(&e.BusinessUnitID, e.BusinessUnit)
	pick(&e.CustomerID, e.CustomerIDFat)
}

// Dispatcher starts executions from events and moves chains on from results (WF03).
type Dispatcher struct {
	Store store.CampaignStore
	Clock automation.Clock
	// Zone returns a business unit's time zone for the local day of facts (nil: UTC).
	Zone func(ctx context.Context, businessUnitID string) (*time.Location, error)
	Log  *slog.Logger
}

func (d *Dispatcher) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (d *Dispatcher) localDate(ctx context.Context, bu string, now time.Time) (string, error) {
	loc := time.UTC
	if d.Zone != nil {
		l, err := d.Zone(ctx, bu)
		if err != nil {
			return "", err
		}
		if l != nil {
			loc = l
		}
	}
	return now.In(loc).Format(time.DateOnly), nil
}

func newCommand(e store.CampaignExecution, def Definition, index int) store.CampaignCommand {
	a := def.Actions[index]
	return store.CampaignCommand{CommandID: CommandID(e.ExecutionID, index, a.Key), EffectKey: EffectKey(e.ExecutionID, index, a.Key, a.Type, a.Provider),
		ExecutionID: e.ExecutionID, BusinessUnitID: e.BusinessUnitID, CampaignID: e.CampaignID, RecipientID: e.RecipientID, RunID: e.RunID,
		ActionIndex: index, ActionKey: a.Key, ActionType: a.Type, Provider: a.Provider, LocalDate: e.LocalDate}
}

// HandleEvent starts, for every ACTIVE or PAUSED campaign of the event's business unit
// triggered by its type, the execution for the event's recipient (the customer, else the
// CloudEvent subject):
// execution, first command and its command message in one transaction. A replayed event
// finds its executions and writes nothing. It returns how many executions it created.
// Errors: an event without id, type, business unit or recipient is automation.Permanent
// (dead-lettered); a store error is retried.
func (d *Dispatcher) HandleEvent(ctx context.Context, body []byte) (created int, err error) {
	ctx, span := telemetry.Start(ctx, "campaign.trigger", trace.SpanKindInternal)
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(telemetry.Count.Int(created))
		}
		telemetry.End(span, err, automation.CodeString(err))
	}()
	return d.handleEvent(ctx, span, body)
}

func (d *Dispatcher) handleEvent(ctx context.Context, span trace.Span, body []byte) (int, error) {
	starts, err := d.eventStarts(ctx, span, body)
	created := 0
	for _, st := range starts {
		res, serr := d.Store.CampaignStart(ctx, st.params)
		if serr != nil {
			st.f.commandID = st.params.Command.CommandID
			d.logFailure(ctx, st.f, CodeStoreError, serr)
			return created, serr
		}
		if res.Created {
			created++
		}
	}
	return created, err
}

// eventStart is one execution an event starts, and what a failure log names of it.
type eventStart struct {
	params store.CampaignStartParams
	f      failure
}

// eventStarts reads a DIRECT-route event and returns the executions it starts, one per
// campaign it triggers, in the order of store.CampaignListByTrigger. With an error it
// returns the starts built before it (a store error reading a campaign's time zone), which
// HandleEvent still writes, as it always did; errors are HandleEvent's.
func (d *Dispatcher) eventStarts(ctx context.Context, span trace.Span, body []byte) ([]eventStart, error) {
	var ev triggerEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, automation.Permanent(fmt.Errorf("campaign dispatcher: unreadable event: %w", err))
	}
	ev.normalise()
	if span.IsRecording() {
		span.SetAttributes(telemetry.EventID.String(ev.ID), telemetry.EventType.String(ev.Type), telemetry.BusinessUnitID.String(ev.BusinessUnitID))
	}
	recipient := ev.CustomerID
	if recipient == "" {
		recipient = ev.Subject
	}
	if ev.ID == "" || ev.Type == "" || ev.BusinessUnitID == "" {
		return nil, automation.Permanent(errors.New("campaign dispatcher: the event needs id, type and businessunitid"))
	}
	trig := failure{sourceEventID: ev.ID, businessUnitID: ev.BusinessUnitID, step: StepTrigger}
	camps, err := d.Store.CampaignListByTrigger(ctx, ev.BusinessUnitID, ev.Type)
	if err != nil {
		d.logFailure(ctx, trig, CodeStoreError, err)
		return nil, err
	}
	if len(camps) == 0 {
		return nil, nil // no campaign listens: nothing to do, whoever the event is about
	}
	if recipient == "" {
		return nil, automation.Permanent(fmt.Errorf("campaign dispatcher: event %s triggers campaigns but names no recipient (customerid or subject)", ev.ID))
	}
	now := d.Clock.Now().UTC()
	var starts []eventStart
	for _, c := range camps {
		// The execution's identity takes the event's (source, id) (events.Identity): two
		// producers' events with the same id start two executions.
		exe := ExecutionID(c.BusinessUnitID, c.CampaignID, c.RunID, recipient, events.Identity(ev.Source, ev.ID))
		f := failure{sourceEventID: ev.ID, executionID: exe, campaignID: c.CampaignID, businessUnitID: c.BusinessUnitID, step: StepTrigger}
		var def Definition
		if err := json.Unmarshal([]byte(c.DefinitionJSON), &def); err != nil || len(def.Actions) == 0 {
			if err == nil {
				err = errors.New("no actions")
			}
			d.logFailure(ctx, f, CodeDefinitionUnreadable, err)
			continue
		}
		day, err := d.localDate(ctx, c.BusinessUnitID, now)
		if err != nil {
			d.logFailure(ctx, f, CodeStoreError, err)
			return starts, err
		}
		e := store.CampaignExecution{ExecutionID: exe,
			BusinessUnitID: c.BusinessUnitID, CampaignID: c.CampaignID, RunID: c.RunID, RecipientID: recipient, SourceEventID: ev.ID,
			LocalDate: day, CurrentIndex: 0, DefinitionJSON: c.DefinitionJSON}
		cmd := newCommand(e, def, 0)
		starts = append(starts, eventStart{params: store.CampaignStartParams{Execution: e, Command: cmd, Outbox: []store.OutboxMessage{commandOutbox(cmd)}, Now: now}, f: f})
	}
	return starts, nil
}

// HandleEventBatch is HandleEvent for the messages of one CampaignDispatch batch: each event
// is read and checked as HandleEvent does, and the executions they start are written in one
// transaction (store.CampaignStartMany), in the batch's order. errs[i] is message i's outcome
// (an unreadable one automation.Permanent); created[i] how many executions it created.
// Should the batch's transaction fail, nothing of it was written and each event is started
// alone (HandleEvent's writes), so one the store refuses holds back no other. A batch over
// store.MaxBatch messages is refused whole. traceParents[i] (optional) is message i's W3C
// traceparent: with telemetry on, each event is read in a span of its own message's trace
// and the command it writes carries that trace on, as HandleEvent's would.
func (d *Dispatcher) HandleEventBatch(ctx context.Context, bodies [][]byte, traceParents []string) (created []int, errs []error) {
	created, errs = make([]int, len(bodies)), make([]error, len(bodies))
	ctxs, ok := batchPrelude(ctx, errs, traceParents, "campaign dispatcher", "events")
	if !ok {
		return created, errs
	}
	for i := range bodies {
		var span trace.Span
		ctxs[i], span = telemetry.Start(ctxs[i], "campaign.trigger", trace.SpanKindInternal)
		defer func() {
			if span.IsRecording() {
				span.SetAttributes(telemetry.Count.Int(created[i]))
			}
			telemetry.End(span, errs[i], automation.CodeString(errs[i]))
		}()
	}
	var ps []store.CampaignStartParams
	var fs []failure
	var at []int // bodies index of ps[j]
	for i, b := range bodies {
		starts, err := d.eventStarts(ctxs[i], trace.SpanFromContext(ctxs[i]), b)
		if err != nil {
			// A store read failed (or the event is unreadable): the message comes again (or
			// is dead-lettered) and none of its starts is written now; a start written on a
			// later attempt is the same execution, created once.
			errs[i] = err
			continue
		}
		for _, st := range starts {
			if telemetry.Enabled() {
				tp, _ := telemetry.Inject(ctxs[i])
				for k := range st.params.Outbox {
					st.params.Outbox[k].TraceParent = tp
				}
			}
			ps, fs, at = append(ps, st.params), append(fs, st.f), append(at, i)
		}
	}
	if len(ps) == 0 {
		return created, errs
	}
	if len(ps) <= store.MaxBatch {
		res, err := d.Store.CampaignStartMany(ctx, ps)
		if err == nil {
			for j, r := range res {
				if r.Created {
					created[at[j]]++
				}
			}
			return created, errs
		}
		d.log().WarnContext(ctx, "campaign trigger batch not started in one transaction: each event started alone", logctx.Step, StepTrigger,
			logctx.ErrorCode, CodeStoreError, "count", len(ps), "error", err.Error())
	}
	for j, p := range ps {
		i := at[j]
		if errs[i] != nil {
			continue // an earlier start of the same event failed: the event comes again whole
		}
		res, err := d.Store.CampaignStart(ctxs[i], p)
		if err != nil {
			f := fs[j]
			f.commandID = p.Command.CommandID
			d.logFailure(ctxs[i], f, CodeStoreError, err)
			errs[i] = err
			continue
		}
		if res.Created {
			created[i]++
		}
	}
	return created, errs
}

// HandleResult moves an execution's chain on from a result message: only a terminal result
// carrying the command's current revision, for the action the execution waits on, moves it
// (store.CampaignAdvance); anything else — an unknown command, a stale or duplicate result —
// is dropped and logged, and moves nothing. It reports whether the chain moved.
func (d *Dispatcher) HandleResult(ctx context.Context, body []byte) (bool, error) {
	p, m, f, err := d.resultAdvance(ctx, body)
	if p == nil || err != nil {
		return false, err
	}
	moved, err := d.Store.CampaignAdvance(ctx, *p)
	d.logAdvance(ctx, m, f, moved, err)
	return moved, err
}

// HandleResultBatch is HandleResult for the result messages of one CampaignResults batch:
// each is read and checked as HandleResult does, and the chains they move are moved in one
// transaction (store.CampaignAdvanceMany), in the batch's order. errs[i] is message i's
// outcome (an unreadable one automation.Permanent). Should the batch's transaction fail,
// nothing of it was written and each result is moved alone, so one the store refuses holds
// back no other. A batch over store.MaxBatch messages is refused whole. traceParents[i]
// (optional) is message i's W3C traceparent: with telemetry on, each result is read in a
// span of its own message's trace, and the next command it writes carries that trace on,
// so a chain stays one trace though its results were moved in one batch.
func (d *Dispatcher) HandleResultBatch(ctx context.Context, bodies [][]byte, traceParents []string) []error {
	errs := make([]error, len(bodies))
	ctxs, ok := batchPrelude(ctx, errs, traceParents, "campaign dispatcher", "results")
	if !ok {
		return errs
	}
	for i := range bodies {
		if i < len(traceParents) && traceParents[i] != "" && telemetry.Enabled() {
			var span trace.Span
			ctxs[i], span = telemetry.Start(ctxs[i], "campaign.result", trace.SpanKindInternal)
			defer func() { telemetry.End(span, errs[i], automation.CodeString(errs[i])) }()
		}
	}
	var ps []store.CampaignAdvanceParams
	var ms []ResultMessage
	var fs []failure
	var at []int // bodies index of ps[j]
	for i, b := range bodies {
		p, m, f, err := d.resultAdvance(ctxs[i], b)
		if p == nil || err != nil {
			errs[i] = err
			continue
		}
		if telemetry.Enabled() {
			tp, _ := telemetry.Inject(ctxs[i])
			for k := range p.Outbox {
				p.Outbox[k].TraceParent = tp
			}
		}
		ps, ms, fs, at = append(ps, *p), append(ms, m), append(fs, f), append(at, i)
	}
	if len(ps) == 0 {
		return errs
	}
	moved, err := d.Store.CampaignAdvanceMany(ctx, ps)
	if err == nil {
		for j := range ps {
			d.logAdvance(ctxs[at[j]], ms[j], fs[j], moved[j], nil)
		}
		return errs
	}
	d.log().WarnContext(ctx, "campaign results batch not moved in one transaction: each moved alone", logctx.Step, StepResult,
		logctx.ErrorCode, CodeStoreError, "count", len(ps), "error", err.Error())
	for j, p := range ps {
		ok, err := d.Store.CampaignAdvance(ctxs[at[j]], p)
		d.logAdvance(ctxs[at[j]], ms[j], fs[j], ok, err)
		errs[at[j]] = err
	}
	return errs
}

// resultAdvance reads a result message and returns the advance it asks for; nil params
// (and nil error) when the result is dropped (unknown command, stale or duplicate result;
// logged). Errors: an unreadable message or definition (automation.Permanent), the
// store's reads; each logged with the ids known so far (f, which it also returns for the
// advance's own log).
func (d *Dispatcher) resultAdvance(ctx context.Context, body []byte) (_ *store.CampaignAdvanceParams, m ResultMessage, f failure, _ error) {
	f.step = StepResult
	if err := json.Unmarshal(body, &m); err != nil || m.CommandID == "" {
		if err == nil {
			err = errors.New("no commandId")
		}
		d.logFailure(ctx, f, CodeResultUnreadable, err)
		return nil, m, f, automation.Permanent(fmt.Errorf("campaign dispatcher: unreadable result: %v", err))
	}
	f.commandID = m.CommandID
	c, err := d.Store.CampaignCommandGet(ctx, m.CommandID)
	if errors.Is(err, store.ErrNotFound) {
		d.log().WarnContext(ctx, "campaign result dropped: unknown command", "commandId", m.CommandID, "revision", m.Revision,
			logctx.Step, StepResult, logctx.ErrorCode, CodeUnknownCommand)
		return nil, m, f, nil
	}
	if err != nil {
		d.logFailure(ctx, f, CodeStoreError, err)
		return nil, m, f, err
	}
	f.executionID, f.campaignID, f.businessUnitID, f.step = c.ExecutionID, c.CampaignID, c.BusinessUnitID, StepResult+":"+c.ActionKey
	if !c.Status.Terminal() || m.Revision != c.Revision || m.Status != c.Status {
		d.log().Warn("campaign result dropped: stale", "commandId", m.CommandID, "revision", m.Revision, "currentRevision", c.Revision, "status", c.Status)
		return nil, m, f, nil
	}
	e, err := d.Store.CampaignExecutionGet(ctx, c.ExecutionID)
	if err != nil {
		d.logFailure(ctx, f, CodeStoreError, err)
		return nil, m, f, err
	}
	f.sourceEventID = e.SourceEventID
	var def Definition
	if err := json.Unmarshal([]byte(e.DefinitionJSON), &def); err != nil {
		d.logFailure(ctx, f, CodeDefinitionUnreadable, err)
		return nil, m, f, automation.Permanent(fmt.Errorf("campaign dispatcher: execution %s: definition unreadable: %w", e.ExecutionID, err))
	}
	p := store.CampaignAdvanceParams{CommandID: c.CommandID, Revision: c.Revision, FinalStatus: store.ExecutionCompleted, Now: d.Clock.Now().UTC()}
	if c.Status == store.CommandCancelled {
		p.FinalStatus = store.ExecutionCancelled
	} else if j, ok := def.NextAction(c.ActionIndex, c.Status); ok {
		next := newCommand(e, def, j)
		p.Next = &next
		p.Outbox = []store.OutboxMessage{commandOutbox(next)}
	}
	return &p, m, f, nil
}

// logAdvance logs a result whose advance moved nothing: at INFO when the chain had moved on
// already, at ERROR with the ids when the store refused it (the message is retried).
func (d *Dispatcher) logAdvance(ctx context.Context, m ResultMessage, f failure, moved bool, err error) {
	switch {
	case err != nil:
		d.logFailure(ctx, f, CodeStoreError, err)
	case !moved:
		d.log().InfoContext(ctx, "campaign result dropped: the chain already moved on", "commandId", m.CommandID, "revision", m.Revision)
	}
}

// The dispatcher's steps and error codes in its failure logs (docs/operations.md#log-fields).
const (
	StepTrigger              = "campaign-trigger"
	StepResult               = "campaign-result" // "campaign-result:{actionKey}" once the command is known
	CodeStoreError           = "STORE_ERROR"
	CodeDefinitionUnreadable = "DEFINITION_UNREADABLE"
	CodeResultUnreadable     = "RESULT_UNREADABLE"
	CodeUnknownCommand       = "UNKNOWN_COMMAND"
)

// failure is what the dispatcher knows of the work that failed (docs/operations.md#logs: the ids the seeds ask error logs to carry): every id
// known so far, "" for the others.
type failure struct {
	sourceEventID, executionID, commandID, campaignID, businessUnitID, step string
}

// logFailure logs one failure at ERROR: "campaign dispatcher failed" with sourceEventId,
// executionId, commandId, campaignId, businessUnitId, step, errorCode and error.
func (d *Dispatcher) logFailure(ctx context.Context, f failure, code string, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	d.log().ErrorContext(ctx, "campaign dispatcher failed", logctx.SourceEventID, f.sourceEventID, "executionId", f.executionID,
		"commandId", f.commandID, "campaignId", f.campaignID, logctx.BusinessUnitID, f.businessUnitID,
		logctx.Step, f.step, logctx.ErrorCode, code, "error", msg)
}
