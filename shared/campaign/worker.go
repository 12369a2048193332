package campaign

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/telemetry"
	"log/slog"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
)

// Step is what the seams see of the command being run.
type Step struct {
	Command  store.CampaignCommand // as claimed (parameters frozen)
	Campaign store.Campaign
	InDoubt  bool // an earlier attempt may have reached the provider
	// Before is the command's status before this claim (WAITING_BUDGET: it waited for budget).
	Before store.CommandStatus
}

// GuardDecision is a PreCallGuard's answer.
type GuardDecision struct {
	// WaitUntil, when set, sends the command back to QUEUED until then (no attempt counted).
	WaitUntil time.Time
	// Deny, when set, fails the command permanently with this reason.
	Deny string
	// WaitBudget, when set (BUDGET or BALANCE: what ran short), records the command
	// WAITING_BUDGET, due again at WaitUntil (default now + PauseRecheck); no attempt counted.
	// The guard pauses the campaign itself (docs/budgets.md#in-the-worker).
	WaitBudget string
}

// PausedResumer is an optional side of a PreCallGuard: when a command that was
// WAITING_BUDGET, or any command in doubt (s.InDoubt: its last claim may have been of a
// WAITING_BUDGET command, lost in a crash), is claimed while its campaign is PAUSED,
// ResumePaused says whether the
// reason of the pause is gone (a raised budget); then it has resumed the campaign and the
// command goes on to the guard, which checks its budget again.
type PausedResumer interface {
	ResumePaused(ctx context.Context, s Step) (bool, error)
}

// PreCallGuard runs after the claim and the campaign status check, before the provider is
// admitted and called (step 4 of doc.go); e.g. a budget reservation. An error is retried on
// the ladder like a transient provider error.
type PreCallGuard interface {
	BeforeCall(ctx context.Context, s Step) (GuardDecision, error)
}

// ClaimGuard is an optional side of a PreCallGuard: InClaim, asked before a command is
// claimed by id while its campaign reads ACTIVE, returns work to run inside the claim's
// transaction with the claimed command (nil: none), e.g. freezing the command's price there
// rather than in a write transaction of its own (docs/budgets.md, "Frozen price"). Its error
// fails the claim, which is then retried as a failed claim is.
type ClaimGuard interface {
	InClaim(ctx context.Context, c store.CampaignCommand) func(ctx context.Context, tx *sql.Tx, claimed store.CampaignCommand) error
}

// GatedProvider is implemented by providers whose actions reach a person on a delivery
// channel (ChannelProvider: the NOTIFICATION_* actions): GateJob is the delivery the
// Worker's Gate decides, the same shape the dispatcher's gate sees for a reminder.
type GatedProvider interface {
	GateJob(c Call) (store.NotificationJob, error)
}

// PostResultHook runs inside the transaction that records the command's outcome (step 7),
// after the command row is written; an error rolls the record back (the lease then expires
// and the command is claimed again in doubt). e.g. settling a budget reservation.
type PostResultHook func(ctx context.Context, tx *sql.Tx, s Step, recorded store.CampaignCommand) error

// Worker runs commands (WF05, WF09): claim with lease and Version, freeze parameters, check
// the campaign, call the provider outside any transaction, record the outcome with its fact.
// Safe for concurrent use.
type Worker struct {
	Store     store.CampaignStore
	Clock     automation.Clock
	Providers *Providers
	// LatencyClock times provider calls for the per-provider latency figures (default the
	// system clock: a call's latency is wall time, not the business Clock, which a replay
	// or the simulator holds still during the call).
	LatencyClock automation.Clock
	// Lease bounds one claim (default 2 min); a provider call never outlives it.
	Lease time.Duration
	// Backoff is the ladder of transient errors and of UNKNOWN resolution attempts (default
	// scheduler.DefaultBackoff: 5 min → 15 min → 1 h). Exhausted: a transient error is
	// FAILED, an UNKNOWN goes to the manual-resolution queue.
	Backoff scheduler.Backoff
	// PauseRecheck is when a command of a PAUSED campaign is looked at again (default 1 min).
	PauseRecheck time.Duration
	// QueuedGrace: the sweep starts a QUEUED command whose message was lost after this long
	// (default 10 min).
	QueuedGrace time.Duration
	// Parallel bounds the commands a sweep runs at once (default 16).
	Parallel int
	// FinishGather is the longest a command of a HandleBatch batch waits in step 7 for the
	// outcomes of its batch-mates still running, to be written with them in one
	// store.CampaignFinishMany (default DefaultFinishGather; docs/performance.md, "The
	// finishes of a batch together").
	FinishGather time.Duration
	Guard        PreCallGuard // optional
	// Gate, when set, is asked for a command of a GatedProvider on a clean claim, after the
	// campaign status check and before the Guard (so a skipped or waiting action is never
	// charged a fee): the recipient's preferences and quiet hours (shared/preference,
	// docs/channels.md#recipient-preferences). Skip ends the command SKIPPED with the reason;
	// Wait sends it back to QUEUED until the window ends, without counting a retry. A claim
	// in doubt is asked too, but only an opt-out recorded at or before the command's first
	// claim ends it SKIPPED (no earlier attempt can have passed the gate); otherwise its
	// earlier attempt may have passed the gate and arrived, and a resend is the same message
	// (Worker.gate).
	Gate        delivery.Gate
	AfterResult PostResultHook // optional
	// OnRecorded, when set, observes every outcome recorded (after the commit), on the
	// recording goroutine (replay writes its "action" lines from it).
	OnRecorded func(store.CampaignCommand)
	Log        *slog.Logger
	// Hooks are fault-injection points for the deterministic simulator (shared/sim); nil in
	// production.
	Hooks *WorkerHooks
}

// WorkerHooks are the worker's named fault points. A non-nil error stops the command there as
// a crash would: nothing after the point is written and Run returns the error (the claim
// then expires and the next claim is in doubt: resent with the same key, looked up, or
// UNKNOWN).
type WorkerHooks struct {
	// AfterCall runs once the provider call returned (callErr is its error, nil when the
	// provider applied the action) and before the outcome is recorded.
	AfterCall func(ctx context.Context, c store.CampaignCommand, callErr error) error
	// AfterBatchClaim runs once a batch's claim transaction committed (HandleBatch), before
	// any of its commands runs: claimed are the commands it claimed. Its error is every
	// message's of the batch, and no command runs: each stays RUNNING under its lease and is
	// claimed again in doubt once it ends.
	AfterBatchClaim func(ctx context.Context, claimed []store.CampaignCommand) error
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (w *Worker) finishGather() time.Duration {
	if w.FinishGather > 0 {
		return w.FinishGather
	}
	return DefaultFinishGather
}

func (w *Worker) lease() time.Duration {
	if w.Lease > 0 {
		return w.Lease
	}
	return 2 * time.Minute
}

func (w *Worker) backoff() scheduler.Backoff {
	return w.Backoff.OrDefault()
}

// Handle runs the command named by a topology.CampaignCommandsQueue message. An unknown
// command is dropped; a command another worker holds, or already ended, is left alone.
func (w *Worker) Handle(ctx context.Context, body []byte) error {
	var m CommandMessage
	if err := json.Unmarshal(body, &m); err != nil || m.CommandID == "" {
		return automation.Permanent(fmt.Errorf("campaign worker: unreadable command message: %v", err))
	}
	return w.Run(ctx, m.CommandID)
}

// Run runs one command by id (steps 1–7 of doc.go).
func (w *Worker) Run(ctx context.Context, commandID string) error {
	// 1. load
	c, err := w.Store.CampaignCommandGet(ctx, commandID)
	if errors.Is(err, store.ErrNotFound) {
		w.log().Warn("campaign command dropped: unknown", "commandId", commandID)
		return nil
	}
	if err != nil {
		return err
	}
	camp, params, err := w.load(ctx, c)
	if err != nil {
		return err
	}
	// 2. claim (with the guard's in-claim work: the price freeze)
	var inClaim func(context.Context, *sql.Tx, store.CampaignCommand) error
	if cg, ok := w.Guard.(ClaimGuard); ok && camp.Status == store.CampaignActive {
		inClaim = cg.InClaim(ctx, c)
	}
	r, err := w.Store.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: commandID, Now: w.Clock.Now().UTC(), Lease: w.lease(), FreezeParams: params,
		InTx: inClaim})
	if err != nil || !r.Claimed {
		return err
	}
	return w.run(ctx, Step{Command: r.Command, Campaign: camp, InDoubt: r.InDoubt, Before: r.Before})
}

// HandleBatch runs the commands of one CampaignWorker batch (topology.CampaignCommandsQueue
// messages, cardinality many): each is loaded as Run loads it, all are claimed in one
// transaction (store.CampaignClaimMany, each with its guard's in-claim work), and the claimed
// ones run steps 3–7 as Run runs them, at most Parallel at once (default 16; 1: in the
// batch's order), each after reading its campaign again (a batch-mate may have paused or
// stopped it). errs[i] is message i's outcome: an unreadable message is
// automation.Permanent, an unknown command is dropped (nil), a command another worker holds
// or already ended is left alone (nil). Should the batch's claim transaction fail, nothing of
// it was claimed and each command is run alone (Run), so one the store refuses holds back no
// other. A batch over store.MaxBatch messages is refused whole. A crash after the batch's
// claim leaves every command of it RUNNING under its lease: each is claimed again in doubt
// once the lease ends, as after a crash after one claim (doc.go). traceParents[i]
// (optional) is message i's W3C traceparent: with telemetry on, command i is loaded, run and
// recorded in its own message's trace (its "campaign.command" span, its result and facts),
// though the batch is one invocation; the batch's claim is in the invocation's.
func (w *Worker) HandleBatch(ctx context.Context, bodies [][]byte, traceParents []string) []error {
	errs := make([]error, len(bodies))
	ctxs, ok := batchPrelude(ctx, errs, traceParents, "campaign worker", "commands")
	if !ok {
		return errs
	}
	// 1. load
	var ps []store.CampaignClaimParams
	var camps []store.Campaign
	var at []int // bodies index of ps[j]
	now := w.Clock.Now().UTC()
	for i, b := range bodies {
		var m CommandMessage
		if err := json.Unmarshal(b, &m); err != nil || m.CommandID == "" {
			errs[i] = automation.Permanent(fmt.Errorf("campaign worker: unreadable command message: %v", err))
			continue
		}
		c, err := w.Store.CampaignCommandGet(ctxs[i], m.CommandID)
		if errors.Is(err, store.ErrNotFound) {
			w.log().Warn("campaign command dropped: unknown", "commandId", m.CommandID)
			continue
		}
		if err != nil {
			errs[i] = err
			continue
		}
		camp, params, err := w.load(ctxs[i], c)
		if err != nil {
			errs[i] = err
			continue
		}
		var inClaim func(context.Context, *sql.Tx, store.CampaignCommand) error
		if cg, ok := w.Guard.(ClaimGuard); ok && camp.Status == store.CampaignActive {
			inClaim = cg.InClaim(ctxs[i], c)
		}
		ps = append(ps, store.CampaignClaimParams{CommandID: c.CommandID, Now: now, Lease: w.lease(), FreezeParams: params, InTx: inClaim})
		camps, at = append(camps, camp), append(at, i)
	}
	if len(ps) == 0 {
		return errs
	}
	// 2. claim, in one transaction
	res, err := w.Store.CampaignClaimMany(ctx, ps)
	if err != nil {
		w.log().WarnContext(ctx, "campaign command batch not claimed in one transaction: each command run alone", "count", len(ps), "error", err.Error())
		w.parallel(len(ps), func(j int) { errs[at[j]] = w.Run(ctxs[at[j]], ps[j].CommandID) })
		return errs
	}
	if w.Hooks != nil && w.Hooks.AfterBatchClaim != nil {
		var claimed []store.CampaignCommand
		for _, r := range res {
			if r.Claimed {
				claimed = append(claimed, r.Command)
			}
		}
		if herr := w.Hooks.AfterBatchClaim(ctx, claimed); herr != nil {
			for _, i := range at {
				errs[i] = herr
			}
			return errs
		}
	}
	// 3–7 for each command claimed. The campaign is read again first: a batch-mate that ran
	// before may have paused or stopped it (the budget guard pauses a campaign short of
	// budget), and step 3 must see that, as a command claimed alone after it would. The
	// outcomes (step 7) of the commands that run side by side are written together
	// (finishGroup: store.CampaignFinishMany).
	// With Parallel 1 (replay) the commands run one after the other and each is written alone.
	claimed := 0
	for _, r := range res {
		if r.Claimed {
			claimed++
		}
	}
	var g *finishGroup
	if w.Parallel != 1 && claimed > 1 {
		g = newFinishGroup(w.Store, claimed, w.finishGather())
	}
	w.parallel(len(res), func(j int) {
		r := res[j]
		if !r.Claimed {
			return
		}
		cctx := ctxs[at[j]]
		if g != nil {
			defer g.end()
			cctx = withFinishGroup(cctx, g)
		}
		s := Step{Command: r.Command, Campaign: camps[j], InDoubt: r.InDoubt, Before: r.Before}
		camp, _, err := w.load(cctx, r.Command)
		if err != nil {
			// Nothing was called: back on the ladder, not left RUNNING to be claimed in doubt.
			errs[at[j]] = w.transient(cctx, s, err)
			return
		}
		s.Campaign = camp
		errs[at[j]] = w.run(cctx, s)
	})
	return errs
}

// parallel calls fn(0..n-1), at most Parallel at once (default 16); with Parallel 1 in order,
// on the calling goroutine.
func (w *Worker) parallel(n int, fn func(i int)) {
	par := w.Parallel
	if par <= 0 {
		par = 16
	}
	if par == 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// load reads the command's campaign and, when the command has no frozen parameters yet, the
// parameters to freeze: the campaign's current action with the same identity, else the
// execution's snapshot. A campaign that no longer exists reads as STOPPED.
func (w *Worker) load(ctx context.Context, c store.CampaignCommand) (store.Campaign, string, error) {
	camp, err := w.Store.CampaignGet(ctx, c.BusinessUnitID, c.CampaignID)
	if errors.Is(err, store.ErrNotFound) {
		camp = store.Campaign{BusinessUnitID: c.BusinessUnitID, CampaignID: c.CampaignID, Status: store.CampaignStopped}
	} else if err != nil {
		return camp, "", err
	}
	if c.ParamsJSON != "" {
		return camp, "", nil
	}
	find := func(defJSON string) (string, bool) {
		var def Definition
		if json.Unmarshal([]byte(defJSON), &def) != nil {
			return "", false
		}
		for _, a := range def.Actions {
			if a.Key == c.ActionKey && a.Type == c.ActionType && a.Provider == c.Provider {
				if len(a.Params) == 0 {
					return "{}", true
				}
				return string(a.Params), true
			}
		}
		return "", false
	}
	if p, ok := find(camp.DefinitionJSON); ok {
		return camp, p, nil
	}
	e, err := w.Store.CampaignExecutionGet(ctx, c.ExecutionID)
	if err != nil {
		return camp, "", err
	}
	if p, ok := find(e.DefinitionJSON); ok {
		return camp, p, nil
	}
	return camp, "{}", nil
}

// Sweep claims up to limit due commands (retries, lookups, expired leases, lost messages)
// and runs them, at most Parallel at once; it returns how many it claimed.
func (w *Worker) Sweep(ctx context.Context, limit int) (int, error) {
	now := w.Clock.Now().UTC()
	grace := w.QueuedGrace
	if grace <= 0 {
		grace = 10 * time.Minute
	}
	claimed, err := w.Store.CampaignClaimDue(ctx, store.CampaignClaimDueParams{Now: now, Lease: w.lease(), Limit: limit, QueuedBefore: now.Add(-grace)})
	if err != nil {
		return 0, err
	}
	par := w.Parallel
	if par <= 0 {
		par = 16
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, r := range claimed {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := w.runClaimed(ctx, r); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return len(claimed), errors.Join(errs...)
}

func (w *Worker) runClaimed(ctx context.Context, r store.CampaignClaimResult) error {
	c := r.Command
	if c.ParamsJSON == "" {
		// Never claimed before (its message was lost): hand it back and claim it by id, which
		// freezes its parameters.
		now := w.Clock.Now().UTC()
		if _, err := w.finish(ctx, Step{Command: c}, store.CampaignFinishParams{Status: store.CommandQueued, NextAttemptOn: &now}); err != nil {
			return err
		}
		return w.Run(ctx, c.CommandID)
	}
	camp, _, err := w.load(ctx, c)
	if err != nil {
		return err
	}
	return w.run(ctx, Step{Command: c, Campaign: camp, InDoubt: r.InDoubt, Before: r.Before})
}

// run is steps 3–7 for a claimed command, in a "campaign.command" span.
func (w *Worker) run(ctx context.Context, s Step) (err error) {
	ctx, span := telemetry.Start(ctx, "campaign.command", trace.SpanKindInternal)
	if span.IsRecording() {
		c := s.Command
		span.SetAttributes(telemetry.CommandID.String(c.CommandID), telemetry.ExecutionID.String(c.ExecutionID),
			telemetry.CampaignID.String(c.CampaignID), telemetry.BusinessUnitID.String(c.BusinessUnitID),
			telemetry.ActionKey.String(c.ActionKey), telemetry.Provider.String(c.Provider), attribute.Bool("automation.in_doubt", s.InDoubt))
	}
	defer func() { telemetry.End(span, err, automation.CodeString(err)) }()
	return w.runStep(ctx, s)
}

// runStep is run's body.
func (w *Worker) runStep(ctx context.Context, s Step) error {
	now := w.Clock.Now().UTC()
	// 3. campaign status
	wait := w.PauseRecheck
	if wait <= 0 {
		wait = time.Minute
	}
	if s.Campaign.Status == store.CampaignPaused && (s.Before == store.CommandWaitingBudget || s.InDoubt) {
		// A command waiting for budget stays WAITING_BUDGET while its campaign is paused,
		// unless the guard finds the pause's reason gone (the budget was raised). A command
		// claimed in doubt asks too: a crash after the claim of a WAITING_BUDGET command (a
		// batch's claim commits before any of its commands runs) leaves it RUNNING, then
		// UNKNOWN, and were it not to ask, nothing would resume a campaign paused for budget
		// (the guard resumes only for a command it recorded waiting, store.BudgetWaitGet).
		resumed := false
		if pr, ok := w.Guard.(PausedResumer); ok {
			var err error
			if resumed, err = pr.ResumePaused(ctx, s); err != nil {
				return w.transient(ctx, s, w.ownFailure(ctx, s, "budget", err))
			}
		}
		switch {
		case resumed:
			s.Campaign.Status = store.CampaignActive
		case s.Before == store.CommandWaitingBudget:
			return w.waitBudget(ctx, s, now.Add(wait), s.Command.LastError)
		}
		// In doubt and not resumed: requeued below as any command of a paused campaign.
	}
	switch s.Campaign.Status {
	case store.CampaignPaused:
		return w.requeue(ctx, s, now.Add(wait), false, "campaign paused")
	case store.CampaignStopped:
		if !s.InDoubt {
			_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandCancelled, Error: "campaign stopped"})
			return err
		}
		// An earlier attempt may have acted: never cancel it blind, never send it anew.
		_, err := w.resolveInDoubt(ctx, s, false)
		return err
	}
	// 3b. recipient gate (preferences, quiet hours), before any fee is charged
	if done, err := w.gate(ctx, s, now, s.InDoubt); done || err != nil {
		return err
	}
	// 3c. in doubt: resolved before the guard, so a command that is not called here (found
	// applied, skipped or held by the gate once a lookup proved nothing applied, UNKNOWN)
	// is never charged by this claim.
	if s.InDoubt {
		if call, err := w.resolveInDoubt(ctx, s, true); !call || err != nil {
			return err
		}
	}
	// 4. guard
	if w.Guard != nil {
		gctx, gspan := telemetry.Start(ctx, "budget.charge", trace.SpanKindInternal)
		d, err := w.Guard.BeforeCall(gctx, s)
		if gspan.IsRecording() {
			gspan.SetAttributes(telemetry.CommandID.String(s.Command.CommandID), attribute.String("automation.deny", d.Deny),
				attribute.String("automation.wait_budget", d.WaitBudget))
		}
		telemetry.End(gspan, err, automation.CodeString(err))
		switch {
		case err != nil:
			return w.transient(ctx, s, w.ownFailure(ctx, s, "budget", err))
		case d.Deny != "":
			_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandFailed, Error: "denied: " + d.Deny})
			return err
		case d.WaitBudget != "":
			at := d.WaitUntil
			if at.IsZero() {
				at = now.Add(wait)
			}
			return w.waitBudget(ctx, s, at, "waiting for budget: "+d.WaitBudget)
		case !d.WaitUntil.IsZero():
			return w.requeue(ctx, s, d.WaitUntil, false, "guard: wait")
		}
		// 4b. The guard may have charged a fee, which takes a billing call: a stop that
		// arrived meanwhile must keep the action from the provider. Read the status again;
		// seed 002's fee rule holds (a confirmed fee stays charged: the CANCELLED outcome
		// settles the reservation as ABANDONED, docs/budgets.md#in-the-worker).
		if stop, err := w.stoppedDuringGuard(ctx, s); stop || err != nil {
			return err
		}
	}
	return w.call(ctx, s)
}

// gate is step 3b: the Gate's decision for a claim of a GatedProvider's command, before the
// guard (so a command that ends here is never charged a fee). done reports that the command
// was recorded. inDoubt is s.InDoubt at step 3b, and false when asked again for an in-doubt
// claim whose lookup proved nothing was applied (resolveInDoubt: the call is then a clean
// send, decided as a clean claim is, but recorded in doubt: a wait stays UNKNOWN, so the
// next claim looks up again). A clean claim: SKIPPED on an opt-out, QUEUED until quiet
// hours end; a decision that could not be read is retried on the ladder, nothing sent.
//
// A claim in doubt (its earlier claim's lease ran out, or an UNKNOWN due again) is asked
// too, and only an opt-out recorded at or before the command's first claim (GateDecision.Since
// not after FirstClaimedOn, store.FirstClaim; CreatedOn for a command claimed before
// migration 0071) ends it SKIPPED, the same rule as delivery.Dispatcher.gateInDoubt and from
// the same source: the earlier claim may have died before this step (the process crashed,
// the lease ran out during the campaign read), and every claim's gate read comes after the
// claim committed and every claim is at or after the first, so such an opt-out was seen by
// each gate and no attempt reached the guard or the provider (nothing was charged, nothing
// sent; SKIPPED settles the reservation, if any, as ABANDONED). The same instant counts as
// before. A later opt-out, or quiet hours, leave the in-doubt resolution as it was: a resend
// with the same idempotency key (the provider deduplicates an earlier call that arrived), a
// lookup, or UNKNOWN. A decision that could not be read sends the command back in doubt
// (UNKNOWN due again, transient), so it is never called blind.
func (w *Worker) gate(ctx context.Context, s Step, now time.Time, inDoubt bool) (done bool, err error) {
	if w.Gate == nil {
		return false, nil
	}
	e, ok := w.Providers.entries[s.Command.Provider]
	if !ok {
		return false, nil
	}
	gp, ok := e.Provider.(GatedProvider)
	if !ok {
		return false, nil
	}
	job, err := gp.GateJob(w.callOf(s))
	if err != nil {
		return false, nil // the call reports the malformed parameters as it always has
	}
	d, err := w.Gate.Check(ctx, job, now)
	switch {
	case err != nil:
		return true, w.transient(ctx, s, w.ownFailure(ctx, s, "preferences", err))
	case inDoubt && d.Skip && !d.Since.IsZero() && !d.Since.After(firstClaim(s.Command)):
		_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandSkipped, Error: "skipped: " + d.Reason})
		return true, err
	case inDoubt:
		return false, nil
	case d.Skip:
		_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandSkipped, Error: "skipped: " + d.Reason})
		return true, err
	case d.Wait:
		return true, w.wait(ctx, s, d.Until, d.Reason)
	}
	return false, nil
}

// firstClaim is the command's first claim (FirstClaimedOn), or its CreatedOn when it has none.
func firstClaim(c store.CampaignCommand) time.Time {
	if c.FirstClaimedOn != nil {
		return *c.FirstClaimedOn
	}
	return c.CreatedOn
}

// stoppedDuringGuard re-reads the campaign after the guard ran: STOPPED (or deleted) cancels
// the command (in doubt: resolved without calling, as for a stop seen before the guard).
// A pause that arrived meanwhile does not hold the command back: a pause stops new work,
// and this command was admitted and charged (often the pause is the guard's own, for
// another command short of budget). done reports that the command was recorded.
func (w *Worker) stoppedDuringGuard(ctx context.Context, s Step) (done bool, err error) {
	camp, err := w.Store.CampaignGet(ctx, s.Command.BusinessUnitID, s.Command.CampaignID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		camp.Status = store.CampaignStopped
	case err != nil:
		return true, w.transient(ctx, s, err)
	}
	switch camp.Status {
	case store.CampaignStopped:
		if s.InDoubt {
			_, err := w.resolveInDoubt(ctx, s, false)
			return true, err
		}
		_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandCancelled, Error: "campaign stopped during the charge; a confirmed fee stays charged"})
		return true, err
	}
	return false, nil
}

// resolveInDoubt handles a command whose earlier attempt may have reached the provider,
// before the guard (step 3c; for a stopped campaign mayCall is false). call reports that the
// command is to be called, after the guard, and nothing was recorded: a resend with the same
// key to a provider that dedupes (when mayCall), or a lookup that proved nothing was applied
// and a gate that lets the call through. Otherwise the command was recorded: SUCCEEDED (the
// lookup found it applied), SKIPPED or waiting for quiet hours (the gate, asked as for a
// clean claim: a call after a "not applied" lookup is a clean send, issue 38), CANCELLED (not
// applied, campaign stopped), UNKNOWN (the lookup could not tell, or the provider can
// neither deduplicate nor look up: the manual-resolution queue).
//
// Why before the guard: a command recorded here is not called, so this claim must not
// reserve or charge its fee (docs/budgets.md). A command found applied was charged by the
// attempt that called it (every call follows a guard that proceeded).
func (w *Worker) resolveInDoubt(ctx context.Context, s Step, mayCall bool) (call bool, err error) {
	e, ok := w.Providers.entries[s.Command.Provider]
	if !ok {
		_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandUnknown, Error: "in doubt: provider not configured"})
		return false, err
	}
	if mayCall && e.Traits().Dedupe {
		return true, nil
	}
	if canLookup(e.Provider) {
		lctx, cancel := w.callContext(ctx, s, e)
		st, res, err := e.Provider.(Looker).Lookup(lctx, w.callOf(s))
		cancel()
		switch {
		case err == nil && st == LookupApplied:
			return false, w.succeeded(ctx, s, res)
		case err == nil && st == LookupNotApplied && mayCall:
			// Nothing was applied: calling now is the first call, so the gate decides it
			// as it decides a clean claim (delivery.Dispatcher does the same on "not
			// delivered").
			if done, err := w.gate(ctx, s, w.Clock.Now().UTC(), false); done || err != nil {
				return false, err
			}
			return true, nil
		case err == nil && st == LookupNotApplied:
			_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandCancelled, Error: "campaign stopped; the provider never applied it"})
			return false, err
		case errors.Is(err, delivery.ErrProviderBusy):
			return false, w.busy(ctx, s, err) // nothing was asked: still in doubt, asked again later
		}
		return false, w.unknown(ctx, s, fmt.Errorf("in doubt; lookup: %s %v", st, err), true)
	}
	_, err = w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandUnknown,
		Error: "in doubt: an earlier attempt may have reached a provider that neither deduplicates nor answers lookups"})
	return false, err
}

func (w *Worker) callOf(s Step) Call {
	c := s.Command
	return Call{CommandID: c.CommandID, EffectKey: c.EffectKey, BusinessUnitID: c.BusinessUnitID, CampaignID: c.CampaignID,
		RecipientID: c.RecipientID, ActionType: c.ActionType, Params: json.RawMessage(c.ParamsJSON)}
}

// callContext ends at the provider's timeout or the lease's end, whichever is first.
func (w *Worker) callContext(ctx context.Context, s Step, e *providerEntry) (context.Context, context.CancelFunc) {
	d := e.cfg.Timeout
	if s.Command.LeaseExpiresOn != nil {
		d = min(d, s.Command.LeaseExpiresOn.Sub(w.Clock.Now()))
	}
	return context.WithTimeout(ctx, max(d, 0))
}

// call is steps 5–7: admit, call outside any transaction, record.
func (w *Worker) call(ctx context.Context, s Step) error {
	e, ok := w.Providers.entries[s.Command.Provider]
	if !ok {
		_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandFailed, Error: "provider not configured: " + s.Command.Provider})
		return err
	}
	if s.Command.LeaseExpiresOn != nil && !s.Command.LeaseExpiresOn.After(w.Clock.Now()) {
		return nil // the claim ran out before the call: never call on an expired claim
	}
	// 5. admit
	release, retryIn, ok := e.admit(ctx, w.Clock.Now())
	if !ok {
		return w.wait(ctx, s, w.Clock.Now().UTC().Add(retryIn), "provider busy")
	}
	// 6. call
	cctx, cancel := w.callContext(ctx, s, e)
	lc := w.LatencyClock
	if lc == nil {
		lc = automation.SystemClock{}
	}
	start := lc.Now()
	cctx, span := telemetry.Start(cctx, "campaign.provider "+s.Command.Provider, trace.SpanKindClient)
	if span.IsRecording() {
		span.SetAttributes(telemetry.Provider.String(s.Command.Provider), telemetry.CommandID.String(s.Command.CommandID),
			attribute.String("automation.action_type", s.Command.ActionType))
	}
	res, err := e.Call(cctx, w.callOf(s))
	telemetry.End(span, err, automation.CodeString(err))
	latency := lc.Now().Sub(start)
	timedOut := cctx.Err() != nil && ctx.Err() == nil
	cancel()
	release()
	if err != nil && timedOut && automation.IntentOf(err) != automation.IntentPermanent {
		err = automation.Unknown(fmt.Errorf("provider timeout: %w", err))
	}
	e.record(latency, err)
	if telemetry.MetricsEnabled() {
		outcome := "ok"
		switch automation.IntentOf(err) {
		case automation.IntentNone:
		case automation.IntentUnknown:
			outcome = "unknown"
		default:
			outcome = "failed"
		}
		telemetry.RecordProviderCall(ctx, s.Command.Provider, outcome, latency)
	}
	if w.Hooks != nil && w.Hooks.AfterCall != nil {
		if herr := w.Hooks.AfterCall(ctx, s.Command, err); herr != nil {
			return herr
		}
	}
	// 7. record
	if errors.Is(err, delivery.ErrProviderBusy) {
		// The channel's own limits (delivery.Limit, shared with the dispatcher) refused the
		// call: nothing was sent. A wait like the admission's above, not an attempt.
		return w.busy(ctx, s, err)
	}
	switch automation.IntentOf(err) {
	case automation.IntentNone:
		return w.succeeded(ctx, s, res)
	case automation.IntentPermanent:
		_, ferr := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandFailed, Error: err.Error()})
		return ferr
	case automation.IntentUnknown:
		return w.unknown(ctx, s, err, e.Traits().Dedupe || canLookup(e.Provider))
	default:
		return w.transient(ctx, s, err)
	}
}

func (w *Worker) succeeded(ctx context.Context, s Step, res Result) error {
	_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandSucceeded, ProviderRef: res.Reference, ResultJSON: string(res.Body)})
	return err
}

// ownFailure is a failure of our own services or stores before the provider call (the
// budget's reservation refused by the database, say) as a command's LastError may show it:
// the message of an automation.Error meant for people ("budget: <message>"), else a stable
// text naming the stage and the code ("budget: internal error (Internal), retried; details
// in the log"), never a store's own text (dialect, query name, SQL). The full error is
// logged with the command. The error's intent (a retry-after) is kept.
func (w *Worker) ownFailure(ctx context.Context, s Step, stage string, err error) error {
	var ae *automation.Error
	msg := fmt.Sprintf("%s: internal error (%s), retried; details in the log", stage, automation.CodeInternal)
	if errors.As(err, &ae) && ae.Code != automation.CodeInternal && ae.Code != "" {
		msg = fmt.Sprintf("%s: %s (%s)", stage, ae.Message, ae.Code)
	} else if w.Log != nil {
		w.Log.WarnContext(ctx, "campaign command: "+stage+" failed", "commandId", s.Command.CommandID, "error", err.Error())
	}
	out := errors.New(msg)
	if d, ok := automation.RetryAfterOf(err); ok {
		return automation.RetryAfter(d, out)
	}
	return out
}

// unknown records UNKNOWN: with a resolution path (resend or lookup) at the next rung of the
// ladder, else — or once the ladder is used up — on the manual-resolution queue.
func (w *Worker) unknown(ctx context.Context, s Step, cause error, resolvable bool) error {
	p := store.CampaignFinishParams{Status: store.CommandUnknown, Error: cause.Error()}
	if resolvable {
		if next, hold := w.backoff().Next(w.Clock.Now(), s.Command.RetryCount, false); !hold {
			p.NextAttemptOn, p.CountRetry = &next, true
		}
	}
	_, err := w.finish(ctx, s, p)
	return err
}

// transient records a failure that took no effect: retry on the ladder, FAILED once used up.
func (w *Worker) transient(ctx context.Context, s Step, cause error) error {
	now := w.Clock.Now().UTC()
	next, hold := w.backoff().Next(now, s.Command.RetryCount, false)
	if d, ok := automation.RetryAfterOf(cause); ok && now.Add(d).After(next) {
		next = now.Add(d)
	}
	if hold && s.InDoubt {
		// An earlier attempt may have acted: never FAILED on a guess, a person decides.
		_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandUnknown, Error: "retries exhausted in doubt: " + cause.Error()})
		return err
	}
	if hold {
		_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: store.CommandFailed, Error: "retries exhausted: " + cause.Error()})
		return err
	}
	_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: w.waiting(s), NextAttemptOn: &next, CountRetry: true, Error: cause.Error()})
	return err
}

// waiting is the status of a command sent back to wait: QUEUED, or UNKNOWN (due again at its
// NextAttemptOn) for a command in doubt, so the next claim is in doubt too and never calls a
// provider that cannot deduplicate a second time.
func (w *Worker) waiting(s Step) store.CommandStatus {
	if s.InDoubt {
		return store.CommandUnknown
	}
	return store.CommandQueued
}

// waitBudget records WAITING_BUDGET (or, in doubt, UNKNOWN due at the same time: a claim in
// doubt must stay in doubt), due again at at; no attempt counted.
func (w *Worker) waitBudget(ctx context.Context, s Step, at time.Time, why string) error {
	at = at.UTC()
	st := store.CommandWaitingBudget
	if s.InDoubt {
		st = store.CommandUnknown
	}
	_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: st, NextAttemptOn: &at, Error: why})
	return err
}

// busy sends back a command whose call or lookup the channel's limits refused
// (delivery.ErrProviderBusy, nothing sent): due again after the refusal's Retry-After (at
// least a second), no retry counted and the claim not counted as an attempt.
func (w *Worker) busy(ctx context.Context, s Step, err error) error {
	after, _ := automation.RetryAfterOf(err)
	return w.wait(ctx, s, w.Clock.Now().UTC().Add(max(after, time.Second)), err.Error())
}

// wait sends the command back until at without counting the claim as an attempt or moving
// the ladder (store.CampaignFinishParams.Wait): the recipient's quiet hours, a busy provider.
func (w *Worker) wait(ctx context.Context, s Step, at time.Time, why string) error {
	at = at.UTC()
	_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: w.waiting(s), NextAttemptOn: &at, Wait: true, Error: why})
	return err
}

func (w *Worker) requeue(ctx context.Context, s Step, at time.Time, count bool, why string) error {
	at = at.UTC()
	_, err := w.finish(ctx, s, store.CampaignFinishParams{Status: w.waiting(s), NextAttemptOn: &at, CountRetry: count, Error: why})
	return err
}

// finish is step 7: one transaction with the outcome, its fact, the result message of a
// terminal outcome and the post-result hook. A lost lease is not an error: whoever holds
// the command now records it.
func (w *Worker) finish(ctx context.Context, s Step, p store.CampaignFinishParams) (store.CampaignCommand, error) {
	p.CommandID, p.Token, p.Now = s.Command.CommandID, s.Command.Version, w.Clock.Now().UTC()
	if p.Status.Terminal() {
		p.Outbox = append(p.Outbox, resultOutbox(s.Command.CommandID, s.Command.Revision+1, p.Status))
	}
	if w.AfterResult != nil {
		p.InTx = func(ctx context.Context, tx *sql.Tx, c store.CampaignCommand) error {
			return w.AfterResult(ctx, tx, s, c)
		}
	}
	var c store.CampaignCommand
	var err error
	if g := finishGroupOf(ctx); g != nil {
		c, err = g.finish(ctx, p) // with the batch-mates' outcomes (HandleBatch)
	} else {
		c, err = w.Store.CampaignFinish(ctx, p)
	}
	if err == nil && w.OnRecorded != nil {
		w.OnRecorded(c)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(telemetry.Status.String(string(p.Status)))
	}
	if err == nil {
		telemetry.CountCommand(ctx, string(p.Status), s.Command.Provider)
	}
	if err == nil && (p.Status == store.CommandFailed || p.Status == store.CommandUnknown) {
		w.logOutcome(ctx, s, p)
	}
	if errors.Is(err, store.ErrLeaseLost) {
		w.log().Warn("campaign command: lease lost before recording", "commandId", s.Command.CommandID, "status", p.Status)
		return c, nil
	}
	return c, err
}

// logOutcome logs a command recorded FAILED or UNKNOWN (seed 002 section 10: the error log
// names sourceEventId, executionId, commandId, campaignId, the unit, the step and an error
// code), at ERROR for FAILED and WARN for UNKNOWN, with the trace and span ids of ctx
// (logctx.Handler). The source event id is the execution's (one read, on this path only).
func (w *Worker) logOutcome(ctx context.Context, s Step, p store.CampaignFinishParams) {
	c := s.Command
	source := ""
	if e, err := w.Store.CampaignExecutionGet(ctx, c.ExecutionID); err == nil {
		source = e.SourceEventID
	}
	code := "PROVIDER_FAILED"
	level := slog.LevelError
	if p.Status == store.CommandUnknown {
		code, level = "PROVIDER_UNKNOWN", slog.LevelWarn
	}
	w.log().Log(ctx, level, "campaign command "+string(p.Status), logctx.SourceEventID, source, "executionId", c.ExecutionID,
		"commandId", c.CommandID, "campaignId", c.CampaignID, logctx.BusinessUnitID, c.BusinessUnitID,
		logctx.Step, "campaign-command:"+c.ActionKey, logctx.ErrorCode, code, "provider", c.Provider, "error", p.Error)
}
