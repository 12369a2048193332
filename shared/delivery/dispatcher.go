package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
	"github.com/automation-platform/automation/shared/telemetry"
)

// ErrInFlight means another sender holds a live send claim on the delivery key; the
// message is redelivered later rather than dropped. Handle returns it marked
// automation.RetryAfter(lease): the claim ends by then at the latest.
var ErrInFlight = errors.New("delivery: another sender holds the send claim")

// DispatchStore is what the Dispatcher needs from SQL.
type DispatchStore interface {
	NotificationClaim(ctx context.Context, p store.NotificationClaimParams) (store.NotificationClaimResult, error)
	NotificationClaimDue(ctx context.Context, p store.NotificationClaimDueParams) ([]store.NotificationClaimResult, error)
	NotificationFinish(ctx context.Context, p store.NotificationFinishParams) error
	NotificationClaimMany(ctx context.Context, p store.NotificationClaimManyParams) ([]store.NotificationClaimResult, error)
	NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error)
}

// dispatchKey decodes a dispatch message's body strictly (one value, no unknown field:
// strictjson.Decode) and returns its delivery key; a malformed body is an
// automation.Permanent error.
func dispatchKey(m bus.Message) (string, error) {
	var body DispatchMessage
	if err := strictjson.Decode(m.Body, &body); err != nil || body.DeliveryKey == "" {
		return "", automation.Permanent(fmt.Errorf("dispatch message %s: malformed body", m.ID))
	}
	return body.DeliveryKey, nil
}

// Resolution says what happens next to a delivery that was not sent.
type Resolution string

// Resolutions.
const (
	ResolutionNone   Resolution = ""       // sent, or failed for good
	ResolutionRetry  Resolution = "retry"  // sent again at NextAttemptOn (same idempotency key)
	ResolutionLookup Resolution = "lookup" // the channel's lookup asks the provider at NextAttemptOn
	ResolutionManual Resolution = "manual" // the manual-resolution queue
	ResolutionHold   Resolution = "hold"   // retries exhausted: Failed on support hold
	ResolutionWait   Resolution = "wait"   // quiet hours or the channel's limits: sent at NextAttemptOn, not an attempt
)

// Outcome is what one dispatch attempt recorded (for logs, metrics and the replay output).
type Outcome struct {
	Job           store.NotificationJob // as claimed
	Status        store.NotificationStatus
	Resolution    Resolution
	NextAttemptOn *time.Time
	Content       *Content
	Error         string
	InDoubt       bool // the attempt took over a claim whose previous attempt may have sent
	At            time.Time
}

// Dispatcher renders and sends queued deliveries (NotificationDispatch, docs/architecture.md#dispatch).
type Dispatcher struct {
	Store     DispatchStore
	Templates *Templates // nil: no templates (channels that need content fail)
	// Blobs reads the files payloads ask to attach (nil: such deliveries fail).
	Blobs    BlobReader
	Channels map[string]Channel
	Clock    automation.Clock
	// Lease is the send-claim lease (default 2 min); longer than any channel timeout. A
	// channel call gets a context that ends with the lease, and a claim whose lease ran out
	// before the call is not used to call the channel at all.
	Lease time.Duration
	// Backoff is the retry ladder of transient failures, UNKNOWN outcomes on idempotent
	// channels and lookups (default scheduler.DefaultBackoff, 5 min → 15 min → 1 h; set Rand
	// for jitter). Exhausted: transient → Failed on hold; unknown → manual resolution.
	Backoff scheduler.Backoff
	// SweepBatch bounds the jobs one Sweep claims (default 100, at most store.MaxBatch).
	SweepBatch int
	// QueuedGrace is how long a new delivery waits for its dispatch message before the sweep
	// starts it itself (default 10 min): a message lost for good (dead-lettered while SQL was
	// unavailable) must not leave the delivery Queued forever. Negative: never.
	QueuedGrace time.Duration
	Log         *slog.Logger
	// OnOutcome, when set, is called after each recorded outcome (synchronously).
	OnOutcome func(Outcome)
	// Gate, when set, is asked before each send whether the recipient's preferences or
	// quiet hours hold the delivery (docs/channels.md#recipient-preferences): a delivery the
	// recipient opted out of ends Skipped with the reason; one inside quiet hours waits
	// until they end. nil: every delivery is sent.
	Gate Gate
	// Hooks are fault-injection points for the deterministic simulator (shared/sim); nil in
	// production.
	Hooks *DispatchHooks
	// ChannelConcurrency bounds the channel calls one HandleBatch or ProcessBatch makes at
	// once to each channel (default 4). Every claim of a batch starts its lease at once, so a
	// batch should stay under Lease × ChannelConcurrency ÷ (the channel's slowest call): a
	// job whose lease ran out before its call is not sent on that claim but goes back on the
	// retry ladder.
	ChannelConcurrency int
	// InOrder runs a batch's sends one at a time, across all its channels, in the batch's
	// order, each outcome recorded before the next send starts: the outcomes of a batch then
	// come in the order its messages came, as one by one. The replay simulator's
	// deterministic mode; off, sends overlap (ChannelConcurrency per channel).
	InOrder bool

	rec *recorder // the group commit every batch shares (recorder); made on first use, under recMu
}

// DispatchHooks are the dispatcher's named fault points. A non-nil error stops the attempt
// there as a crash would: nothing after the point is written and Process returns the error
// (the claim then expires and the next attempt is in doubt). In a batch (ProcessBatch) the
// crash stops the whole batch: no outcome of the batch is recorded and no further send of
// it starts.
type DispatchHooks struct {
	// BeforeGate runs once the job is claimed, before anything of its attempt (the gate,
	// a lookup, a resend): a crash there is a claim that died before its gate (issue 38;
	// the simulator's late-opt-out fault).
	BeforeGate func(ctx context.Context, job store.NotificationJob, inDoubt bool) error
	// AfterSend runs once the channel call returned (sendErr is its error, nil when the
	// provider acknowledged) and before the outcome is recorded.
	AfterSend func(ctx context.Context, job store.NotificationJob, sendErr error) error
}

// Handle is the bus handler for DispatchQueue. A redelivered message for a job already
// finished, waiting for its retry time or awaiting resolution is completed without sending;
// a malformed body or an unknown delivery key is dead-lettered (it can never succeed); a
// live claim held by another sender returns ErrInFlight (redeliver later).
func (d *Dispatcher) Handle(ctx context.Context, m bus.Message) error {
	key, err := dispatchKey(m)
	if err != nil {
		return err
	}
	res, err := d.Store.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: key, Now: d.Clock.Now(), Lease: d.lease()})
	if errors.Is(err, store.ErrNotFound) {
		return automation.Permanent(fmt.Errorf("dispatch message %s: no NotificationJob %s", m.ID, key))
	}
	if err != nil {
		return err
	}
	if !res.Claimed {
		if res.Job.Status == store.NotificationSending {
			return automation.RetryAfter(d.lease(), ErrInFlight)
		}
		return nil // Sent, Failed, Unknown, or Queued for a later retry (the sweep's)
	}
	_, err = d.Process(ctx, res)
	return err
}

// SweepResult counts one Sweep.
type SweepResult struct {
	Claimed int `json:"claimed"`
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	Retry   int `json:"retry"`
	Unknown int `json:"unknown"`
	Skipped int `json:"skipped"`
}

// Sweep claims the jobs whose retry or lookup time came, the send claims whose lease
// expired and the new deliveries whose dispatch message has not come within QueuedGrace (up
// to SweepBatch) and processes them. It is the dispatcher's timer-driven half:
// dispatch messages start deliveries, the sweep finishes what needs a second attempt.
// Each job is claimed when its turn comes, so its lease covers its own send only, not the
// sends before it in the batch (a claim that expired unsent would be taken over by another
// sweeper while this one still meant to send it).
func (d *Dispatcher) Sweep(ctx context.Context) (SweepResult, error) {
	batch := d.SweepBatch
	if batch <= 0 {
		batch = 100
	}
	batch = min(batch, store.MaxBatch)
	var sr SweepResult
	var errs []error
	for sr.Claimed < batch {
		now := d.Clock.Now()
		p := store.NotificationClaimDueParams{Now: now, Lease: d.lease(), Limit: 1}
		if g := d.queuedGrace(); g > 0 {
			p.QueuedBefore = now.Add(-g)
		}
		claims, err := d.Store.NotificationClaimDue(ctx, p)
		if err != nil {
			return sr, errors.Join(append(errs, err)...)
		}
		if len(claims) == 0 {
			break
		}
		c := claims[0]
		sr.Claimed++
		o, err := d.Process(ctx, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch o.Status {
		case store.NotificationSent:
			sr.Sent++
		case store.NotificationFailed:
			sr.Failed++
		case store.NotificationQueued:
			sr.Retry++
		case store.NotificationUnknown:
			sr.Unknown++
		case store.NotificationSkipped:
			sr.Skipped++
		}
	}
	return sr, errors.Join(errs...)
}

func (d *Dispatcher) lease() time.Duration {
	if d.Lease > 0 {
		return d.Lease
	}
	return 2 * time.Minute
}

func (d *Dispatcher) queuedGrace() time.Duration {
	if d.QueuedGrace == 0 {
		return 10 * time.Minute
	}
	return d.QueuedGrace
}

func (d *Dispatcher) backoff() scheduler.Backoff {
	return d.Backoff.OrDefault()
}

// Process runs one claimed job: look up or refuse an in-doubt claim, validate the
// recipient, render, send, and record the outcome (with its fact). It returns an error only
// when the outcome could not be recorded (the claim then expires and the next attempt is
// in doubt); a claim lost to another sender is not an error.
func (d *Dispatcher) Process(ctx context.Context, c store.NotificationClaimResult) (Outcome, error) {
	o, rec, err := d.attempt(ctx, c, nil, nil)
	if err != nil || rec == nil {
		return o, err
	}
	return d.finish(ctx, o, *rec)
}

// attempt runs one claimed job up to its outcome without recording it: rec is what to
// record (nil: nothing, an in-doubt claim that expired before its lookup). err is a fault
// hook's crash: nothing of the attempt is to be recorded. sc, when not nil, is the batch's
// template scope. send, when not nil, is set to the context of the attempt's
// "delivery.send" span (left zero with telemetry off or the span unsampled): the group
// commit that records the outcome links to it.
func (d *Dispatcher) attempt(ctx context.Context, c store.NotificationClaimResult, sc *templateScope, send *trace.SpanContext) (o Outcome, rec *store.NotificationFinishParams, err error) {
	if telemetry.Enabled() {
		var span trace.Span
		ctx, span = telemetry.Start(sendContext(ctx, c.Job.DeliveryKey), "delivery.send "+c.Job.Channel, trace.SpanKindClient)
		if send != nil && span.IsRecording() {
			*send = span.SpanContext()
		}
		if span.IsRecording() {
			span.SetAttributes(telemetry.DeliveryKey.String(c.Job.DeliveryKey), telemetry.SchedulerKey.String(c.Job.SchedulerKey),
				telemetry.Channel.String(c.Job.Channel), telemetry.BusinessUnitID.String(c.Job.BusinessUnitID), attribute.Bool("automation.in_doubt", c.InDoubt))
		}
		defer func() {
			if span.IsRecording() && rec != nil {
				span.SetAttributes(telemetry.Status.String(string(rec.Status)))
			}
			telemetry.End(span, err, automation.CodeString(err))
		}()
	}
	job := c.Job
	now := d.Clock.Now()
	o = Outcome{Job: job, InDoubt: c.InDoubt, At: now}
	msg := Message{DeliveryKey: job.DeliveryKey, SchedulerKey: job.SchedulerKey, BusinessUnitID: job.BusinessUnitID,
		Channel: job.Channel, Recipient: job.Recipient, Template: job.Template, PayloadJSON: job.PayloadJSON, Payload: rawJSON(job.PayloadJSON), SentOn: now,
		CreatedOn: job.CreatedOn}
	ch, ok := d.Channels[job.Channel]
	if !ok {
		return d.failed(ctx, o, fmt.Errorf("unknown channel %q", job.Channel))
	}
	tr := ch.Traits()
	if d.Hooks != nil && d.Hooks.BeforeGate != nil {
		if err := d.Hooks.BeforeGate(ctx, job, c.InDoubt); err != nil {
			return o, nil, fmt.Errorf("dispatch %s: before the gate: %w", job.DeliveryKey, err)
		}
	}
	if c.InDoubt && d.attemptsExhausted(job, now) {
		// Every earlier attempt failed or its claim expired (docs/architecture.md#failure-backoff-and-rescue: an expired lease counts as
		// a failed attempt): a sender that dies on this delivery each time is not sent again.
		// An opt-out at or before the first claim still proves none of them sent.
		return d.skippedOrUnknown(ctx, o, tr, job, now, fmt.Sprintf("%d attempts without an outcome or with a retry (the sender may crash on this delivery); the last claim expired", job.AttemptCount-1))
	}
	if c.InDoubt && tr.Idempotent {
		if o, rec, done := d.gateInDoubt(ctx, o, job, now); done {
			return o, rec, nil
		}
	}
	if c.InDoubt && !tr.Idempotent {
		looker, canLook := ch.(Looker)
		if !canLook {
			return d.skippedOrUnknown(ctx, o, tr, job, now, "the previous attempt's outcome is unknown (claim expired) and the channel can neither deduplicate nor look it up")
		}
		callCtx, cancel, live := d.callContext(ctx, job)
		if !live {
			return d.expired(ctx, o, c)
		}
		st, ref, err := looker.Lookup(callCtx, msg)
		cancel()
		switch {
		case err == nil && st == LookupDelivered:
			return d.sent(ctx, o, ref, nil)
		case err == nil && st == LookupNotDelivered:
			// Not delivered: sending now is the first delivery, so the gate decides it.
			if o, rec, done := d.gate(ctx, o, job, now, &msg); done {
				return o, rec, nil
			}
		case errors.Is(err, ErrProviderBusy):
			// The channel's limits refused the lookup: nothing was asked, so the lookup
			// waits without moving the ladder.
			return d.busy(o, store.NotificationUnknown, ResolutionLookup, err)
		default:
			why := "lookup: the provider cannot tell yet"
			if err != nil {
				why = "lookup: " + err.Error()
			}
			return d.unknown(ctx, o, tr, ch, why)
		}
	}
	if !c.InDoubt {
		var done bool
		if o, rec, done = d.gate(ctx, o, job, now, &msg); done {
			return o, rec, nil
		}
	}
	if err := ch.ValidateRecipient(job.Recipient); err != nil {
		return d.failed(ctx, o, fmt.Errorf("recipient not valid for channel %s: %w", job.Channel, err))
	}
	content, err := d.render(ctx, msg, tr, sc)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && tr.NeedsContent {
			// A configuration error, not the delivery's: the template does not exist for the
			// unit. Saving it fixes it, so the job waits on support hold for a release
			// instead of ending Failed for good (docs/architecture.md#settings-changes).
			return d.configHold(o, fmt.Errorf("configuration: %w; save the template, then release the delivery", err))
		}
		var re *RenderError
		if errors.As(err, &re) || automation.IsInvalid(err) {
			return d.failed(ctx, o, err)
		}
		return d.retry(ctx, o, err) // e.g. the template store was unavailable: nothing was sent
	}
	msg.Content, o.Content = content, content
	atts, err := d.attachments(ctx, job.PayloadJSON, tr)
	if err != nil {
		var ae *attachmentError
		if errors.As(err, &ae) {
			return d.failed(ctx, o, err)
		}
		return d.retry(ctx, o, err) // the blob store was unavailable: nothing was sent
	}
	msg.Attachments = atts
	callCtx, cancel, live := d.callContext(ctx, job)
	if !live {
		return d.expired(ctx, o, c)
	}
	ref, sendErr := ch.Send(callCtx, msg)
	cancel()
	if d.Hooks != nil && d.Hooks.AfterSend != nil {
		if err := d.Hooks.AfterSend(ctx, job, sendErr); err != nil {
			return o, nil, fmt.Errorf("dispatch %s: after send: %w", job.DeliveryKey, err)
		}
	}
	if sendErr == nil {
		return d.sent(ctx, o, ref, content)
	}
	if errors.Is(sendErr, ErrProviderBusy) {
		return d.busy(o, store.NotificationQueued, ResolutionWait, sendErr)
	}
	switch automation.IntentOf(sendErr) {
	case automation.IntentPermanent:
		return d.failed(ctx, o, sendErr)
	case automation.IntentUnknown:
		if tr.Idempotent {
			return d.retry(ctx, o, sendErr)
		}
		return d.unknown(ctx, o, tr, ch, sendErr.Error())
	default:
		return d.retry(ctx, o, sendErr)
	}
}

// gate asks the Gate about job: done is true when the attempt ends here (skipped, waiting
// for quiet hours, or retried because the decision could not be read), with what to record.
// On a send it sets msg's one-click unsubscribe link.
func (d *Dispatcher) gate(ctx context.Context, o Outcome, job store.NotificationJob, now time.Time, msg *Message) (Outcome, *store.NotificationFinishParams, bool) {
	if d.Gate == nil {
		return o, nil, false
	}
	g, err := d.Gate.Check(ctx, job, now)
	switch {
	case err != nil:
		o, rec, _ := d.retry(ctx, o, fmt.Errorf("preferences and quiet hours not read: %w", err))
		return o, rec, true
	case g.Skip:
		o.Status, o.Error = store.NotificationSkipped, g.Reason
		return o, &store.NotificationFinishParams{Status: store.NotificationSkipped, Error: g.Reason}, true
	case g.Wait && g.Until.After(now):
		until := g.Until.UTC()
		o.Status, o.Error, o.Resolution, o.NextAttemptOn = store.NotificationQueued, g.Reason, ResolutionWait, &until
		return o, &store.NotificationFinishParams{Status: store.NotificationQueued, Error: g.Reason, NextAttemptOn: &until, Wait: true}, true
	}
	msg.ListUnsubscribe = g.ListUnsubscribe
	return o, nil, false
}

// gateInDoubt asks the Gate about an in-doubt claim on an idempotent channel (resent with
// the same idempotency key, without a lookup): done is true when the attempt ends here.
// The same rule (optedOutBeforeFirstClaim) decides an in-doubt claim on a channel that can
// neither deduplicate nor look up (email over SMTP, FCM push): Skipped when it applies,
// else UNKNOWN for a person as before (never resent, and a preference read that fails
// leaves it UNKNOWN too: a retry would make the next claim a clean send).
//
// The rule: an opt-out recorded at or before the job's first claim (g.Since not after
// FirstClaimedOn, store.FirstClaim) ends it Skipped; a later opt-out, or quiet hours, leave
// the resend as it is. The source of the rule: an earlier claim may have ended before its
// gate (another send of its batch crashed, its lease ran out first: sim seed 9405), so the
// resend may be the job's first message, and only an attempt that passed the gate can have
// sent. Every attempt's gate read comes after its claim committed, and every claim of the
// job is at or after the first, so an opt-out recorded before the first claim was seen by
// every gate: no attempt sent, and Skipped is exact. An opt-out recorded after the first
// claim may postdate a send that passed its gate and arrived; the resend then repeats it
// and the provider deduplicates it (it may also be the first message, when the earlier
// claim died before its gate: that case cannot be told apart without a write at the gate,
// and it is left resent, as the opt-out came after the send began).
//
// The boundary. Both instants are Clock readings in UTC (the opt-out service's at the
// change, the claimer's at the claim; never the database's time), compared as stored (to the
// millisecond). The same instant counts as before (Skipped): the two cannot be ordered, and
// Skipped is the side that never reaches an opted-out recipient (should the earlier attempt
// have arrived, the resend would only have been deduplicated; the record then says Skipped
// for a message that arrived, which the LastError's opt-out instant explains). A lease
// takeover keeps FirstClaimedOn (it is set once per run of attempts; claims that ended in a
// wait sent nothing and do not count). A job without FirstClaimedOn (claimed before
// migration 0071, or a store that does not keep it) falls back to CreatedOn, the earliest
// instant a first claim can have had. Clocks of two instances that disagree shift the
// boundary by their skew.
//
// A preference read that fails retries the delivery (nothing is sent; the next claim is a
// clean one and asks the gate).
func (d *Dispatcher) gateInDoubt(ctx context.Context, o Outcome, job store.NotificationJob, now time.Time) (Outcome, *store.NotificationFinishParams, bool) {
	reason, skip, err := d.optedOutBeforeFirstClaim(ctx, job, now)
	switch {
	case err != nil:
		o, rec, _ := d.retry(ctx, o, fmt.Errorf("preferences and quiet hours not read: %w", err))
		return o, rec, true
	case skip:
		o.Status, o.Error = store.NotificationSkipped, reason
		return o, &store.NotificationFinishParams{Status: store.NotificationSkipped, Error: reason}, true
	}
	return o, nil, false
}

// skippedOrUnknown ends an in-doubt claim that may not be sent again (no lookup and no
// deduplication, or its attempts exhausted): Skipped when the first-claim rule proves no
// attempt sent (optedOutBeforeFirstClaim), else UNKNOWN with why for a person. A gate that
// cannot be read leaves it UNKNOWN too, never retried: the next claim would be a clean one
// and send.
func (d *Dispatcher) skippedOrUnknown(ctx context.Context, o Outcome, tr Traits, job store.NotificationJob, now time.Time, why string) (Outcome, *store.NotificationFinishParams, error) {
	reason, skip, err := d.optedOutBeforeFirstClaim(ctx, job, now)
	switch {
	case err != nil:
		why += "; preferences not read: " + err.Error()
	case skip:
		o.Status, o.Error = store.NotificationSkipped, reason
		return pending(o, store.NotificationFinishParams{Status: store.NotificationSkipped, Error: reason})
	}
	return d.unknown(ctx, o, tr, nil, why)
}

// optedOutBeforeFirstClaim asks the Gate whether the in-doubt claim of job falls under the
// first-claim rule (gateInDoubt): skip is true when it ends the job Skipped, with the
// opt-out's reason; false when there is no Gate, no opt-out, or one recorded after the
// first claim. err is a decision that could not be read; the caller decides what that
// means for its channel.
func (d *Dispatcher) optedOutBeforeFirstClaim(ctx context.Context, job store.NotificationJob, now time.Time) (reason string, skip bool, err error) {
	if d.Gate == nil {
		return "", false, nil
	}
	g, err := d.Gate.Check(ctx, job, now)
	if err != nil {
		return "", false, err
	}
	if g.Skip && !g.Since.IsZero() && !g.Since.After(firstClaim(job)) {
		return g.Reason, true, nil
	}
	return "", false, nil
}

// firstClaim is the job's first claim (FirstClaimedOn), or its CreatedOn when it has none.
func firstClaim(job store.NotificationJob) time.Time {
	if job.FirstClaimedOn != nil {
		return *job.FirstClaimedOn
	}
	return job.CreatedOn
}

// attemptsExhausted reports whether the claimed job's earlier attempts (AttemptCount-1: each
// ended in a scheduled retry or lookup, or its claim expired) used up the backoff ladder: the
// same bound a job whose failures were all recorded reaches (1 + len(Steps) attempts).
func (d *Dispatcher) attemptsExhausted(job store.NotificationJob, now time.Time) bool {
	if job.AttemptCount < 2 {
		return false
	}
	_, hold := d.backoff().Next(now, job.AttemptCount-2, false)
	return hold
}

// callContext bounds a channel call by what is left of the claim's lease (by the Clock),
// so a slow provider is given up on before another sender may take the claim over. live is
// false when the lease already ran out: the channel must not be called on this claim.
func (d *Dispatcher) callContext(ctx context.Context, job store.NotificationJob) (context.Context, context.CancelFunc, bool) {
	if job.ProcessingLeaseExpiresOn == nil {
		return ctx, func() {}, true
	}
	left := job.ProcessingLeaseExpiresOn.Sub(d.Clock.Now())
	if left <= 0 {
		return ctx, func() {}, false
	}
	cctx, cancel := context.WithTimeout(ctx, left)
	return cctx, cancel, true
}

// errClaimExpired: the claim's lease ran out before the channel was called.
var errClaimExpired = errors.New("the send claim expired before the channel was called: nothing was sent")

// expired handles a claim whose lease ran out before the channel was called (nothing was
// sent on it). A clean claim goes back on the retry ladder; an in-doubt one is left as it
// is, Sending with an expired lease, for the next claimer to take over still in doubt.
func (d *Dispatcher) expired(ctx context.Context, o Outcome, c store.NotificationClaimResult) (Outcome, *store.NotificationFinishParams, error) {
	if c.InDoubt {
		o.Status, o.Error = store.NotificationSending, errClaimExpired.Error()
		if d.Log != nil {
			d.Log.WarnContext(ctx, "delivery claim expired before the lookup", "deliveryKey", o.Job.DeliveryKey, "step", "dispatch")
		}
		return o, nil, nil
	}
	return d.retry(ctx, o, errClaimExpired)
}

// render returns the content for msg: nil when the template does not exist and the
// channel needs none.
func (d *Dispatcher) render(ctx context.Context, msg Message, tr Traits, sc *templateScope) (*Content, error) {
	if d.Templates == nil {
		if tr.NeedsContent {
			return nil, fmt.Errorf("template %q: no template store: %w", msg.Template, store.ErrNotFound)
		}
		return nil, nil
	}
	var tpl *Compiled
	var err error
	if sc != nil {
		tpl, err = sc.get(ctx, d.Templates, msg.Template, msg.BusinessUnitID)
	} else {
		tpl, err = d.Templates.Get(ctx, msg.Template, msg.BusinessUnitID)
	}
	if errors.Is(err, store.ErrNotFound) && !tr.NeedsContent {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := RenderData(msg)
	if err != nil {
		return nil, automation.Invalid("payload", "%v", err)
	}
	if !tr.Accepts(tpl.Kind) {
		return nil, automation.Invalid("template", "template %q v%d is a %s template; channel %s sends %s", tpl.Key, tpl.Version, tpl.Kind, msg.Channel, kindsOf(tr))
	}
	c, err := tpl.Render(data)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func (d *Dispatcher) sent(ctx context.Context, o Outcome, ref string, c *Content) (Outcome, *store.NotificationFinishParams, error) {
	var tv int64
	if c != nil {
		tv = c.TemplateVersion
	}
	o.Status = store.NotificationSent
	return pending(o, store.NotificationFinishParams{Status: store.NotificationSent, ProviderReference: ref, TemplateVersion: tv})
}

func (d *Dispatcher) failed(ctx context.Context, o Outcome, err error) (Outcome, *store.NotificationFinishParams, error) {
	o.Status, o.Error = store.NotificationFailed, err.Error()
	return pending(o, store.NotificationFinishParams{Status: store.NotificationFailed, Error: err.Error()})
}

// configHold records a job that failed on configuration (a missing template) Failed on
// support hold with its reason: support releases it once the configuration is fixed, as
// it releases a job whose retries ran out.
func (d *Dispatcher) configHold(o Outcome, err error) (Outcome, *store.NotificationFinishParams, error) {
	o.Status, o.Error, o.Resolution = store.NotificationFailed, err.Error(), ResolutionHold
	return pending(o, store.NotificationFinishParams{Status: store.NotificationFailed, Error: o.Error, Hold: true})
}

// retry schedules the next attempt on the backoff ladder, or holds the job when the ladder
// is exhausted (an UNKNOWN on an idempotent channel then goes to manual resolution).
func (d *Dispatcher) retry(ctx context.Context, o Outcome, err error) (Outcome, *store.NotificationFinishParams, error) {
	o.Error = err.Error()
	next, hold := d.backoff().Next(d.Clock.Now(), o.Job.RetryCount, false)
	if hold {
		if automation.IntentOf(err) == automation.IntentUnknown {
			o.Status, o.Resolution = store.NotificationUnknown, ResolutionManual
			return pending(o, store.NotificationFinishParams{Status: store.NotificationUnknown, Error: o.Error})
		}
		o.Status, o.Resolution = store.NotificationFailed, ResolutionHold
		return pending(o, store.NotificationFinishParams{Status: store.NotificationFailed, Error: o.Error, Hold: true})
	}
	o.Status, o.Resolution, o.NextAttemptOn = store.NotificationQueued, ResolutionRetry, &next
	return pending(o, store.NotificationFinishParams{Status: store.NotificationQueued, Error: o.Error, NextAttemptOn: &next})
}

// unknown records an UNKNOWN outcome: a lookup at the next backoff step when the channel
// can look up (and the ladder is not exhausted), else the manual-resolution queue.
func (d *Dispatcher) unknown(ctx context.Context, o Outcome, _ Traits, ch Channel, why string) (Outcome, *store.NotificationFinishParams, error) {
	o.Status, o.Error, o.Resolution = store.NotificationUnknown, why, ResolutionManual
	p := store.NotificationFinishParams{Status: store.NotificationUnknown, Error: why}
	if _, canLook := ch.(Looker); canLook {
		if next, hold := d.backoff().Next(d.Clock.Now(), o.Job.RetryCount, false); !hold {
			o.Resolution, o.NextAttemptOn, p.NextAttemptOn = ResolutionLookup, &next, &next
		}
	}
	return pending(o, p)
}

// busy records a call the channel's limits refused (ErrProviderBusy: nothing reached the
// provider) as a wait, not an attempt: due again after the refusal's Retry-After (at least
// a second), with RetryCount and AttemptCount unchanged (store.NotificationFinishParams.Wait),
// so a busy provider never uses up a delivery's backoff ladder. status is Queued for a send,
// Unknown for an in-doubt claim's lookup (it stays in doubt and is looked up then).
func (d *Dispatcher) busy(o Outcome, status store.NotificationStatus, res Resolution, err error) (Outcome, *store.NotificationFinishParams, error) {
	after, _ := automation.RetryAfterOf(err)
	until := d.Clock.Now().UTC().Add(max(after, time.Second))
	o.Status, o.Error, o.Resolution, o.NextAttemptOn = status, err.Error(), res, &until
	return pending(o, store.NotificationFinishParams{Status: status, Error: o.Error, NextAttemptOn: &until, Wait: true})
}

// pending returns an outcome and what to record for it (ID, Token and Now are set when it
// is recorded).
func pending(o Outcome, p store.NotificationFinishParams) (Outcome, *store.NotificationFinishParams, error) {
	return o, &p, nil
}

func (d *Dispatcher) finish(ctx context.Context, o Outcome, p store.NotificationFinishParams) (Outcome, error) {
	o.At = d.Clock.Now()
	p.ID, p.Token, p.Now = o.Job.ID, o.Job.Version, o.At
	err := d.Store.NotificationFinish(ctx, p)
	if errors.Is(err, store.ErrLeaseLost) {
		// Another sender took over after our lease expired; its claim was in doubt, so it
		// did not send blindly. It records the outcome.
		return o, nil
	}
	if err != nil {
		return o, fmt.Errorf("dispatch %s: record %s: %w", o.Job.DeliveryKey, o.Status, err)
	}
	d.log(ctx, o)
	if telemetry.MetricsEnabled() {
		channel := o.Job.Channel
		if _, ok := d.Channels[channel]; !ok {
			channel = "" // a label only from the configured channels
		}
		telemetry.CountDelivery(ctx, channel, string(o.Status))
	}
	if d.OnOutcome != nil {
		d.OnOutcome(o)
	}
	return o, nil
}

func (d *Dispatcher) log(ctx context.Context, o Outcome) {
	if d.Log == nil {
		return
	}
	// A Sent delivery is the hot path: one line each at production rates is a log flood
	// (issue 39), so it logs at DEBUG and is counted in the deliveries metric instead.
	// Everything else (skipped, waiting, retried) stays at INFO; failures and UNKNOWNs WARN.
	level := slog.LevelInfo
	switch o.Status {
	case store.NotificationSent:
		level = slog.LevelDebug
	case store.NotificationFailed, store.NotificationUnknown:
		level = slog.LevelWarn
	}
	attrs := []any{"deliveryKey", o.Job.DeliveryKey, "commandId", o.Job.DeliveryKey, "schedulerKey", o.Job.SchedulerKey,
		"businessUnitId", o.Job.BusinessUnitID, "channel", o.Job.Channel, "recipient", o.Job.Recipient, "step", "dispatch",
		"status", string(o.Status), "attempt", o.Job.AttemptCount}
	if o.Resolution != ResolutionNone {
		attrs = append(attrs, "resolution", string(o.Resolution))
	}
	if o.NextAttemptOn != nil {
		attrs = append(attrs, "nextAttemptOn", o.NextAttemptOn.UTC().Format(time.RFC3339))
	}
	msg, code := outcomeWords(o)
	if o.Error != "" {
		// errorCode: a stable code per outcome kind (DeliveryFailed, DeliveryUnknown,
		// DeliveryRetryScheduled, DeliverySkipped, DeliveryQuietHours, DeliveryProviderBusy)
		// so alerts can match without parsing the error text.
		if code == "" {
			code = "Delivery" + string(o.Status)
		}
		attrs = append(attrs, "error", o.Error, "errorCode", code)
	}
	// The recipient is personal data: the log handler masks it (shared/logmask).
	if msg == "" {
		msg = "delivery " + strings.ToLower(string(o.Status))
	}
	d.Log.Log(ctx, level, msg, attrs...)
}

// outcomeWords are the log message and errorCode of a wait (for the channel's limits or for
// quiet hours) or a scheduled retry; "" for any other outcome, which says its status.
func outcomeWords(o Outcome) (msg, code string) {
	switch {
	case busyWait(o):
		return "delivery waiting for the channel's limits", "DeliveryProviderBusy"
	case o.Resolution == ResolutionWait:
		return "delivery waiting for quiet hours", "DeliveryQuietHours"
	case o.Status == store.NotificationQueued:
		return "delivery retry scheduled", "DeliveryRetryScheduled"
	}
	return "", ""
}

// busyWait reports whether o is a wait for the channel's limits (busy), not for quiet hours.
func busyWait(o Outcome) bool {
	return o.NextAttemptOn != nil && strings.Contains(o.Error, ErrProviderBusy.Error()) &&
		(o.Resolution == ResolutionWait || o.Resolution == ResolutionLookup)
}

func rawJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return nil
}

// kindsOf names the template kinds a channel's traits accept, for messages.
func kindsOf(tr Traits) string {
	if tr.TemplateKinds == nil {
		return KindMessage + " templates"
	}
	return strings.Join(tr.TemplateKinds, " or ") + " templates"
}
