package scheduler

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/trace"
)

// Config tunes the due-work poller. Zero values take the documented defaults (Validate
// fills them in).
type Config struct {
	// BatchSize is the most rows claimed per RunOnce (default 100, at most store.MaxBatch).
	BatchSize int
	// Lease is how long a claim is valid before stale rescue may take the row (default 5 min).
	Lease time.Duration
	// Concurrency bounds how many claimed rows execute at once (default 4; 1 = in order).
	Concurrency int
	// RescueBatch bounds the expired leases rescued per RunOnce (default 100).
	RescueBatch int
	// Backoff is the retry ladder (default DefaultBackoff with 10 % jitter).
	Backoff Backoff
	// TraceTimeout bounds one background trace write (RunOnce), wall-clock (default 30 s):
	// a hung trace store (a locked database, an unreachable storage account) cannot hold the
	// one in-flight slot, and with it the poller and the shutdown, for longer. The rows of a
	// write that runs out are dropped and logged (writeTrace).
	TraceTimeout time.Duration
	// Hooks are fault-injection points for the deterministic simulator (shared/sim); nil in
	// production.
	Hooks *Hooks
}

// Hooks are named fault points at the poller's semantic step boundaries. Each is called
// synchronously; a non-nil error stops the step there as a crash would: nothing after the
// point is written, and the error is returned to the caller.
type Hooks struct {
	// AfterClaim runs once a batch is claimed (Processing, lease, Version+1) and before any
	// row is executed. rows are the claimed rows with their tokens.
	AfterClaim func(ctx context.Context, rows []automation.SchedulerRow) error
}

// afterClaim calls Hooks.AfterClaim when set.
func (c *Config) afterClaim(ctx context.Context, rows []automation.SchedulerRow) error {
	if c.Hooks == nil || c.Hooks.AfterClaim == nil || len(rows) == 0 {
		return nil
	}
	return c.Hooks.AfterClaim(ctx, rows)
}

// DefaultTraceTimeout is Config.TraceTimeout's default: far above a healthy batch write
// (milliseconds), well below a host's shutdown grace.
const DefaultTraceTimeout = 30 * time.Second

// Validate fills defaults and rejects impossible values.
func (c *Config) Validate() error {
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	if c.Lease == 0 {
		c.Lease = 5 * time.Minute
	}
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	if c.RescueBatch == 0 {
		c.RescueBatch = 100
	}
	if c.TraceTimeout == 0 {
		c.TraceTimeout = DefaultTraceTimeout
	}
	if c.Backoff.Steps == nil {
		c.Backoff.Steps = DefaultBackoff
		if c.Backoff.JitterFraction == 0 {
			c.Backoff.JitterFraction = 0.10
		}
	}
	switch {
	case c.BatchSize < 0 || c.BatchSize > store.MaxBatch:
		return fmt.Errorf("scheduler: BatchSize %d outside 1..%d", c.BatchSize, store.MaxBatch)
	case c.RescueBatch < 0 || c.RescueBatch > store.MaxBatch:
		return fmt.Errorf("scheduler: RescueBatch %d outside 1..%d", c.RescueBatch, store.MaxBatch)
	case c.Lease < time.Second:
		return fmt.Errorf("scheduler: Lease %s shorter than 1s", c.Lease)
	case c.TraceTimeout < 0:
		return fmt.Errorf("scheduler: TraceTimeout %s negative", c.TraceTimeout)
	case c.Concurrency < 1 || c.Concurrency > 64:
		return fmt.Errorf("scheduler: Concurrency %d outside 1..64", c.Concurrency)
	case c.Backoff.JitterFraction < 0 || c.Backoff.JitterFraction > 1:
		return fmt.Errorf("scheduler: JitterFraction %v outside 0..1", c.Backoff.JitterFraction)
	}
	return nil
}

// Result counts what one RunOnce did.
type Result struct {
	Rescued     int `json:"rescued"` // expired leases put back to Pending (or on hold)
	Claimed     int `json:"claimed"`
	Completed   int `json:"completed"`
	Deactivated int `json:"deactivated"`
	Retrying    int `json:"retrying"`
	Held        int `json:"held"`
	LeaseLost   int `json:"leaseLost"` // rows another worker took over; nothing written by us
}

// Poller claims due rows and executes them (stage ②). Safe to run any number of pollers
// against one store: the claim protocol (docs/architecture.md#claim) keeps each row with one worker.
type Poller struct {
	cfg   Config
	store store.SchedulerStore
	reg   *Registry
	clock automation.Clock
	trace trace.Writer
	log   *slog.Logger
	// traceSlot holds a token while a batch's trace write runs in the background (RunOnce):
	// at most one is in flight; the next batch's write, an idle poll and Flush wait for it.
	traceSlot chan struct{}
}

// NewPoller validates cfg and returns a poller. tw may be nil (no trace); log may be nil.
func NewPoller(cfg Config, s store.SchedulerStore, reg *Registry, clock automation.Clock, tw trace.Writer, log *slog.Logger) (*Poller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if s == nil || reg == nil || clock == nil {
		return nil, errors.New("scheduler: store, registry and clock are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Poller{cfg: cfg, store: s, reg: reg, clock: clock, trace: tw, log: log, traceSlot: make(chan struct{}, 1)}, nil
}

// completeChunk bounds how many completions share one transaction: a whole claimed batch
// (store.MaxBatch), so one RunOnce commits its completions once (docs/performance.md).
const completeChunk = store.MaxBatch

// RunOnce rescues stale leases, claims one batch of due rows and executes it: handlers run
// with bounded concurrency, then the outcomes are written - completions in batched
// transactions, each row still guarded by its own Version token. It returns the counts; an
// error means a store call failed (the rows involved stay safe: unclaimed, or claimed and
// rescued later when their lease expires).
//
// The batch's trace rows are written in the background once its outcomes are committed, so
// the next RunOnce claims, executes and completes while they are written (the trace store
// is a separate database with its own writer). At most one such write is in flight: the
// next batch's trace write waits for it, and so does a RunOnce that claims nothing (so a
// caller that polls until the store is idle sees every trace row) and Flush. When ctx ends
// while the batch waits for that slot, RunOnce returns ctx's error: the batch's outcomes are
// already committed (counted in the Result), only its trace rows are dropped, with a
// warning that says how many (the scheduler rows keep the outcome; the trace is the
// observability copy). The write in flight is bounded by Config.TraceTimeout.
func (p *Poller) RunOnce(ctx context.Context) (Result, error) {
	var res Result
	rows, err := p.claimBatch(ctx, &res, nil)
	if err != nil {
		return res, err
	}
	if len(rows) == 0 {
		// Idle: nothing to overlap the previous batch's trace write with.
		return res, p.Flush(ctx)
	}
	// Step boundary "claimed": the batch is ours (lease, Version+1); nothing executed yet.
	outcomes, err := p.settle(ctx, p.execute(ctx, rows), true)
	for _, o := range outcomes {
		res.add(o)
	}
	return res, err
}

// execute runs a claimed batch's rows through their handlers (Config.Concurrency at once)
// within one batch scope; it writes nothing.
func (p *Poller) execute(ctx context.Context, rows []automation.SchedulerRow) []execution {
	ctx = p.batchScope(ctx, rows)
	runs := make([]execution, len(rows))
	if p.cfg.Concurrency == 1 {
		for i, row := range rows {
			runs[i] = p.run(ctx, row)
		}
		return runs
	}
	sem := make(chan struct{}, p.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, row := range rows {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			runs[i] = p.run(ctx, row)
		}()
	}
	wg.Wait()
	return runs
}

// Drain runs batches as RunOnce does until a claim finds nothing due (or maxBatches batches
// were claimed; 0: no bound), with one batch in flight ahead: it claims batch N+1 before
// it writes batch N's outcomes, and executes N+1 while those are written. The store's
// writer is then busy with a claim or a completion while the handlers run, instead of
// waiting for them (docs/performance.md, "Draining with one batch ahead"). Every row keeps
// RunOnce's guarantees: its own lease and Version token, revalidation at execution, a
// completion fenced by the token; the rescue before each claim skips the batch whose
// outcomes are being written (its leases may have run out while it executed: RunOnce
// would still complete it); only the order differs - a batch's follow-up rows are
// created after the next batch was claimed, so they wait one batch longer.
//
// States: claim batch 1 → execute it → (claim N+1 → write N's outcomes ‖ execute N+1 →
// wait for N's outcomes) until a claim is empty → write the last batch's outcomes → Flush.
// Every return, an error's included, flushes the trace write in flight.
//
// The Result sums every batch; settled, when not nil, is called with each batch's own
// Result (its claim and its outcomes) once they are committed, on Drain's goroutine. An
// error stops the drain: a failed claim or AfterClaim hook
// after the outcomes of the batch already executed are written (they are committed work);
// a failed completion after the batch executing meanwhile has finished and its outcomes
// were written too (its handlers ran; only the failed batch's rows stay claimed until
// their lease expires and the rescue returns them, as after a crash).
func (p *Poller) Drain(ctx context.Context, maxBatches int, settled func(Result)) (Result, error) {
	var res Result
	batches := 0
	add := func(claimed int, outcomes []trace.Outcome) {
		batch := Result{Claimed: claimed}
		for _, o := range outcomes {
			res.add(o)
			batch.add(o)
		}
		if settled != nil {
			settled(batch)
		}
	}
	// inFlight is the executed batch whose outcomes are being written while the next batch
	// is claimed (row ID → claim token): the rescue before that claim leaves it alone, so
	// Drain never turns its own finished work, past its lease, into a failed attempt to run
	// again (a RunOnce loop writes a batch before its next rescue).
	var inFlight map[int64]int64
	claim := func() ([]automation.SchedulerRow, error) {
		if maxBatches > 0 && batches >= maxBatches {
			return nil, nil
		}
		batches++
		return p.claimBatch(ctx, &res, inFlight)
	}
	rows, err := claim()
	if err != nil || len(rows) == 0 {
		return res, errors.Join(err, p.Flush(ctx))
	}
	type written struct {
		outcomes []trace.Outcome
		err      error
	}
	// pending is the outcome write in flight on its goroutine. A handler that panics on
	// Drain's goroutine (Concurrency 1) unwinds through Drain: the write is waited for
	// first, so the batch before is committed (a host that recovers the panic ends the
	// context next) and no goroutine of Drain's outlives it.
	var pending chan written
	defer func() {
		if pending != nil {
			<-pending
		}
	}()
	runs := p.execute(ctx, rows)
	for {
		inFlight = make(map[int64]int64, len(runs))
		for _, ex := range runs {
			inFlight[ex.row.ID] = ex.row.Version
		}
		next, claimErr := claim()
		claimed := len(runs)
		done := make(chan written, 1)
		pending = done
		go func() {
			o, err := p.settle(ctx, runs, true)
			done <- written{o, err}
		}()
		var nextRuns []execution
		if claimErr == nil && len(next) > 0 {
			nextRuns = p.execute(ctx, next)
		}
		s := <-done
		pending = nil
		add(claimed, s.outcomes)
		if s.err != nil && nextRuns != nil {
			// The batch ahead already ran: its outcomes are committed work, written as after
			// a failed claim (if that write fails too, its rows stay claimed for the rescue).
			o, err := p.settle(ctx, nextRuns, true)
			add(len(next), o)
			s.err = errors.Join(s.err, err)
		}
		if s.err != nil || claimErr != nil {
			return res, errors.Join(s.err, claimErr, p.Flush(ctx))
		}
		if len(next) == 0 {
			return res, p.Flush(ctx)
		}
		runs = nextRuns
	}
}

// Flush waits until the trace write RunOnce left in flight (if any) has finished. It
// returns ctx's error when ctx ends first; the write itself goes on. The runtime calls it
// before it closes the trace store; a failed write was logged as a warning and is not
// returned.
func (p *Poller) Flush(ctx context.Context) error {
	select {
	case p.traceSlot <- struct{}{}:
		<-p.traceSlot
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeTrace writes a batch's trace rows: at once when background is false, otherwise in a
// goroutine once the previous background write has finished (one in flight at most), under
// Config.TraceTimeout. A failed write is logged as a warning: the outcomes it records are
// already committed. When ctx ends before the slot is free, the rows are dropped (logged
// as a warning with their count) and ctx's error is returned; it is the only error.
func (p *Poller) writeTrace(ctx context.Context, recs []trace.JobRecord, background bool) error {
	if p.trace == nil || len(recs) == 0 {
		return nil
	}
	write := func(ctx context.Context) {
		if err := trace.WriteJobs(ctx, p.trace, recs); err != nil {
			p.log.WarnContext(ctx, "trace rows not written", "rows", len(recs), "step", "trace", "errorCode", string(automation.CodeInternal), "error", err)
		}
	}
	if !background {
		write(ctx)
		return nil
	}
	select {
	case p.traceSlot <- struct{}{}:
	case <-ctx.Done():
		p.log.WarnContext(ctx, "trace rows dropped: the previous trace write still runs and the poll's context ended; the outcomes are committed", "rows", len(recs), "step", "trace", "errorCode", string(automation.CodeInternal), "error", ctx.Err())
		return ctx.Err()
	}
	// The write outlives the caller's context (a Functions invocation ends when RunOnce
	// returns); its values (log attributes) are kept, and TraceTimeout bounds it.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.TraceTimeout)
	go func() {
		defer func() { cancel(); <-p.traceSlot }()
		write(bctx)
	}()
	return nil
}

// batchScope lets every handler with rows in the batch that implements BatchScoper load
// its revalidation inputs once for the batch.
func (p *Poller) batchScope(ctx context.Context, rows []automation.SchedulerRow) context.Context {
	seen := map[automation.AutomationType]bool{}
	for _, row := range rows {
		if seen[row.AutomationType] {
			continue
		}
		seen[row.AutomationType] = true
		if h, ok := p.reg.Lookup(row.AutomationType); ok {
			if bs, ok := h.(BatchScoper); ok {
				ctx = bs.BatchScope(ctx, rows)
			}
		}
	}
	return ctx
}

// Claim rescues stale leases and claims one batch of due rows without executing them (the
// fan-out path: each row goes to DueWorkExecutor with its Version as the token).
func (p *Poller) Claim(ctx context.Context) (Result, []automation.SchedulerRow, error) {
	var res Result
	rows, err := p.claimBatch(ctx, &res, nil)
	return res, rows, err
}

// claimBatch is the start of every poll (RunOnce, Claim, each batch of Drain): the rescue
// of expired leases (skipping inFlight, row ID → claim token; nil: none), the claim of up
// to BatchSize due rows, added to res.Claimed, and the AfterClaim hook. On a hook error
// the rows stay claimed (rescued after their lease) and nil is returned with the error.
func (p *Poller) claimBatch(ctx context.Context, res *Result, inFlight map[int64]int64) ([]automation.SchedulerRow, error) {
	if err := p.rescue(ctx, res, inFlight); err != nil {
		return nil, err
	}
	cctx, span := telemetry.Start(ctx, "scheduler.claim", oteltrace.SpanKindInternal)
	rows, err := p.store.SchedulerClaimDue(cctx, store.SchedulerClaimDueParams{Now: p.clock.Now(), Lease: p.cfg.Lease, Limit: p.cfg.BatchSize})
	if span.IsRecording() {
		span.SetAttributes(telemetry.Count.Int(len(rows)))
	}
	telemetry.End(span, err, "")
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	res.Claimed += len(rows)
	telemetry.CountDueClaimed(ctx, len(rows))
	if err := p.cfg.afterClaim(ctx, rows); err != nil {
		return nil, fmt.Errorf("after claim: %w", err)
	}
	return rows, nil
}

// Execute runs one claimed row through its handler and records the outcome, guarded by the
// row's Version token. It returns the outcome and an error only when a store call failed.
func (p *Poller) Execute(ctx context.Context, row automation.SchedulerRow) (trace.Outcome, error) {
	outcomes, err := p.settle(ctx, []execution{p.run(ctx, row)}, false)
	if len(outcomes) == 0 {
		return "", err
	}
	return outcomes[0], err
}

// Add accumulates another result's counts into r.
func (r *Result) Add(o Result) {
	r.Rescued += o.Rescued
	r.Claimed += o.Claimed
	r.Completed += o.Completed
	r.Deactivated += o.Deactivated
	r.Retrying += o.Retrying
	r.Held += o.Held
	r.LeaseLost += o.LeaseLost
}

func (r *Result) add(o trace.Outcome) {
	switch o {
	case trace.OutcomeCompleted:
		r.Completed++
	case trace.OutcomeDeactivated:
		r.Deactivated++
	case trace.OutcomeRetrying:
		r.Retrying++
	case trace.OutcomeHeld:
		r.Held++
	case trace.OutcomeLeaseLost:
		r.LeaseLost++
	}
}

// execution is one handler run, not yet written.
type execution struct {
	row          automation.SchedulerRow
	started, now time.Time
	out          Outcome
	err          error
	code         automation.ReasonCode // failure code when err != nil
	hold         bool                  // hold at once (permanent, no handler)
}

func (p *Poller) run(ctx context.Context, row automation.SchedulerRow) (ex execution) {
	ctx = rowContext(ctx, row, "execute")
	if telemetry.Enabled() {
		// The row runs in the trace of the transaction that created it (its TraceParent),
		// linked to the poll that claimed it; what it writes to the outbox stays in that trace.
		// A row with no stored trace runs as a child of the poll, so it needs no link. A row
		// whose stored trace was not sampled starts no span (telemetry.StartLinked) and passes
		// its own traceparent on.
		poll := oteltrace.SpanContextFromContext(ctx)
		parent := telemetry.Extract(ctx, row.TraceParent, "")
		if oteltrace.SpanContextFromContext(parent).Equal(poll) {
			poll = oteltrace.SpanContext{}
		}
		var span oteltrace.Span
		ctx, span = telemetry.StartLinked(parent, "scheduler.execute", poll)
		if span.IsRecording() {
			span.SetAttributes(telemetry.SchedulerKey.String(row.SchedulerKey), telemetry.BusinessUnitID.String(row.BusinessUnitID),
				attribute.String("automation.automation_type", string(row.AutomationType)),
				attribute.Float64("automation.lateness_seconds", p.clock.Now().Sub(row.ScheduledOn).Seconds()))
		}
		defer func() {
			if tp, _ := telemetry.Inject(ctx); tp != "" {
				for i := range ex.out.Outbox {
					if ex.out.Outbox[i].TraceParent == "" {
						ex.out.Outbox[i].TraceParent = tp
					}
				}
			}
			telemetry.End(span, ex.err, string(ex.code))
		}()
	}
	ex = execution{row: row, started: p.clock.Now()}
	h, ok := p.reg.Lookup(row.AutomationType)
	if !ok {
		ex.now, ex.err, ex.code, ex.hold = ex.started, fmt.Errorf("no handler registered for %s", row.AutomationType), automation.ReasonNoHandler, true
		return ex
	}
	ex.out, ex.err = h.Execute(ctx, row, ex.started)
	ex.now = p.clock.Now()
	if ex.err != nil {
		ex.code, ex.hold = automation.ReasonHandlerError, automation.IsPermanent(ex.err)
		if ex.hold {
			ex.code = automation.ReasonPermanentError
			if r := automation.PermanentReasonOf(ex.err); r != "" {
				ex.code = r
			}
		}
	}
	return ex
}

// dueOutcomes are the outcomes settle counts (automation.due.outcomes).
var dueOutcomes = [...]trace.Outcome{trace.OutcomeCompleted, trace.OutcomeDeactivated, trace.OutcomeRetrying, trace.OutcomeHeld, trace.OutcomeLeaseLost}

// settle writes the outcomes of runs (in order) and then their trace rows, in the
// background when backgroundTrace is set (writeTrace).
func (p *Poller) settle(ctx context.Context, runs []execution, backgroundTrace bool) ([]trace.Outcome, error) {
	outcomes, err := p.settleRuns(ctx, runs, backgroundTrace)
	if telemetry.MetricsEnabled() {
		// Counted once per outcome of the batch, not once per row.
		var n [len(dueOutcomes)]int
		for _, o := range outcomes {
			if i := slices.Index(dueOutcomes[:], o); i >= 0 {
				n[i]++
			} else if o != "" {
				telemetry.CountDueOutcomes(ctx, string(o), 1)
			}
		}
		for i, c := range n {
			telemetry.CountDueOutcomes(ctx, string(dueOutcomes[i]), c)
		}
	}
	return outcomes, err
}

func (p *Poller) settleRuns(ctx context.Context, runs []execution, backgroundTrace bool) ([]trace.Outcome, error) {
	outcomes := make([]trace.Outcome, len(runs))
	recs := make([]trace.JobRecord, 0, len(runs))
	var completes []int
	var firstErr error
	for i, ex := range runs {
		var rec trace.JobRecord
		var err error
		switch {
		case ex.err != nil:
			outcomes[i], rec, err = p.fail(ctx, ex.row, ex.started, ex.now, ex.code, ex.err, ex.hold)
		case ex.out.Deactivate != "":
			err = p.store.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: ex.row.ID, Token: ex.row.Version, Now: ex.now, Reason: ex.out.Deactivate, FollowUps: ex.out.FollowUps})
			outcomes[i], rec, err = p.record(ctx, ex.row, ex.started, ex.now, trace.OutcomeDeactivated, string(ex.out.Deactivate), "", ex.out.SourceEventID, err)
		default:
			completes = append(completes, i)
			continue
		}
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		recs = append(recs, rec)
	}
	for start := 0; start < len(completes); start += completeChunk {
		chunk := completes[start:min(start+completeChunk, len(completes))]
		items := make([]store.SchedulerCompleteParams, len(chunk))
		for j, i := range chunk {
			ex := runs[i]
			items[j] = store.SchedulerCompleteParams{ID: ex.row.ID, Token: ex.row.Version, Now: ex.now,
				DispatchResultJSON: ex.out.DispatchResultJSON, Deliveries: ex.out.Deliveries, Outbox: ex.out.Outbox, FollowUps: ex.out.FollowUps}
		}
		itemErrs, err := p.store.SchedulerCompleteBatch(ctx, items)
		for j, i := range chunk {
			ex := runs[i]
			var ierr error
			if err != nil {
				ierr = err
			} else {
				ierr = itemErrs[j]
			}
			o, rec, rerr := p.record(ctx, ex.row, ex.started, ex.now, trace.OutcomeCompleted, "", "", ex.out.SourceEventID, ierr)
			outcomes[i] = o
			if rerr != nil {
				firstErr = cmp.Or(firstErr, rerr)
				continue
			}
			recs = append(recs, rec)
		}
	}
	if err := p.writeTrace(ctx, recs, backgroundTrace); err != nil {
		firstErr = cmp.Or(firstErr, err)
	}
	return outcomes, firstErr
}

// rescue puts Processing rows with expired leases back to Pending with backoff. An expired
// lease counts as a failed attempt: the worker may have done part of the work (docs/architecture.md#failure-backoff-and-rescue).
// Rows in inFlight (row ID → claim token; nil: none) are skipped: the caller executed them
// and is writing their outcomes.
func (p *Poller) rescue(ctx context.Context, res *Result, inFlight map[int64]int64) error {
	now := p.clock.Now()
	rows, err := p.store.SchedulerListExpiredLeases(ctx, store.SchedulerListParams{Now: now, Limit: p.cfg.RescueBatch})
	if err != nil {
		return fmt.Errorf("rescue: %w", err)
	}
	recs := make([]trace.JobRecord, 0, len(rows))
	for _, row := range rows {
		if token, ok := inFlight[row.ID]; ok && token == row.Version {
			continue // executed by this Drain, its outcome being written
		}
		o, rec, err := p.fail(rowContext(ctx, row, "rescue"), row, now, now, automation.ReasonLeaseExpired, errors.New("processing lease expired before the attempt finished"), false)
		if err != nil {
			return fmt.Errorf("rescue %s: %w", row.SchedulerKey, err)
		}
		recs = append(recs, rec)
		if o != trace.OutcomeLeaseLost {
			res.Rescued++
		}
	}
	if p.trace != nil && len(recs) > 0 {
		if err := trace.WriteJobs(ctx, p.trace, recs); err != nil {
			p.log.WarnContext(ctx, "trace rows not written", "rows", len(recs), "step", "rescue", "errorCode", string(automation.CodeInternal), "error", err)
		}
	}
	return nil
}

// fail records a failed attempt: backoff (or hold when hold is set or the ladder is
// exhausted) and a diagnostics blob. It returns the trace row to write.
func (p *Poller) fail(ctx context.Context, row automation.SchedulerRow, started, now time.Time, code automation.ReasonCode, cause error, hold bool) (trace.Outcome, trace.JobRecord, error) {
	longRunning := false
	if h, ok := p.reg.Lookup(row.AutomationType); ok {
		if lr, ok := h.(LongRunning); ok {
			longRunning = lr.LongRunning()
		}
	}
	var next time.Time
	if !hold {
		next, hold = p.cfg.Backoff.Next(now, row.RetryCount, longRunning)
	}
	attempt := row.RetryCount + 1
	blob := ""
	outcome := trace.OutcomeRetrying
	if hold {
		outcome = trace.OutcomeHeld
	}
	if p.trace != nil {
		blob = trace.BlobName(row.Guid, attempt, row.Version)
		diag := map[string]any{
			"schedulerKey": row.SchedulerKey, "rowGuid": row.Guid, "attempt": attempt, "version": row.Version,
			"reasonCode": code, "error": cause.Error(), "hold": hold, "retryCount": row.RetryCount,
			"scheduledOn": row.ScheduledOn, "startedOn": started, "failedOn": now,
		}
		if !next.IsZero() {
			diag["nextRetryOn"] = next
		}
		b, _ := json.MarshalIndent(diag, "", "  ")
		if err := p.trace.PutBlob(ctx, blob, b); err != nil {
			p.log.WarnContext(rowContext(ctx, row, "diagnostics"), "diagnostics blob not written", "errorCode", string(automation.CodeInternal), "error", err)
			blob = ""
		}
	}
	err := p.store.SchedulerFail(ctx, store.SchedulerFailParams{
		ID: row.ID, Token: row.Version, Now: now, FailureReasonCode: code,
		NextRetryOn: next, Hold: hold, TraceBlobName: blob,
	})
	o, rec, err := p.record(ctx, row, started, now, outcome, string(code), string(code), "", err)
	if o != trace.OutcomeLeaseLost {
		rec.TraceBlobName = blob
	}
	rec.Message = automation.Clip(cause.Error(), 256)
	return o, rec, err
}

// record maps a store write's result to the attempt's outcome and trace row. ErrLeaseLost
// is an outcome (another worker owns the row), not an error. sourceEventID ("" when
// unknown) is logged with the outcome.
func (p *Poller) record(ctx context.Context, row automation.SchedulerRow, started, now time.Time, o trace.Outcome, reason, code, sourceEventID string, err error) (trace.Outcome, trace.JobRecord, error) {
	ctx = logctx.With(rowContext(ctx, row, "finish"), logctx.SourceEventID, sourceEventID)
	if errors.Is(err, store.ErrLeaseLost) {
		p.log.WarnContext(ctx, "lease lost; another worker owns the row", "errorCode", string(automation.CodeLeaseLost), "token", row.Version)
		o, err, code = trace.OutcomeLeaseLost, nil, string(automation.CodeLeaseLost)
	}
	if err != nil {
		return "", trace.JobRecord{}, fmt.Errorf("%s %s: %w", o, row.SchedulerKey, err)
	}
	if o == trace.OutcomeCompleted || o == trace.OutcomeDeactivated {
		code = ""
	}
	attrs := []any{"outcome", string(o), "reasonCode", reason}
	if code != "" {
		attrs = append(attrs, logctx.ErrorCode, code)
	}
	p.log.DebugContext(ctx, "row executed", attrs...)
	return o, trace.JobRecord{
		SchedulerKey: row.SchedulerKey, RowGuid: row.Guid, RowID: row.ID,
		BusinessUnitID: row.BusinessUnitID, AutomationType: string(row.AutomationType),
		Attempt: row.RetryCount + 1, Version: row.Version, Outcome: o,
		ReasonCode: reason, ErrorCode: code, StartedOn: started, FinishedOn: now,
	}, nil
}

// rowContext adds a row's identity and the step to ctx for logging (logctx).
func rowContext(ctx context.Context, row automation.SchedulerRow, step string) context.Context {
	return logctx.With(ctx, logctx.SchedulerKey, row.SchedulerKey, logctx.BusinessUnitID, row.BusinessUnitID, logctx.Step, step)
}
