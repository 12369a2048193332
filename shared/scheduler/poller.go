package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
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
}

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
	case c.Concurrency < 1 || c.Concurrency > 64:
		return fmt.Errorf("scheduler: Concurrency %d outside 1..64", c.Concurrency)
	case c.Backoff.JitterFraction < 0 || c.Backoff.JitterFraction > 1:
		return fmt.Errorf("scheduler: JitterFraction %v outside 0..1", c.Backoff.JitterFraction)
	}
	return nil
}

// Result counts what one RunOnce did.
type Result struct {
	Rescued     int // expired leases put back to Pending (or on hold)
	Claimed     int
	Completed   int
	Deactivated int
	Retrying    int
	Held        int
	LeaseLost   int // rows another worker took over; nothing written by us
}

// Poller claims due rows and executes them (stage ②). Safe to run any number of pollers
// against one store: the claim protocol (§3.4) keeps each row with one worker.
type Poller struct {
	cfg   Config
	store store.SchedulerStore
	reg   *Registry
	clock automation.Clock
	trace trace.Writer
	log   *slog.Logger
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
	return &Poller{cfg: cfg, store: s, reg: reg, clock: clock, trace: tw, log: log}, nil
}

// RunOnce rescues stale leases, claims one batch of due rows and executes it. It returns
// the counts; an error means a store call failed (the rows involved stay safe: unclaimed,
// or claimed and rescued later when their lease expires).
func (p *Poller) RunOnce(ctx context.Context) (Result, error) {
	var res Result
	if err := p.rescue(ctx, &res); err != nil {
		return res, err
	}
	now := p.clock.Now()
	rows, err := p.store.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: now, Lease: p.cfg.Lease, Limit: p.cfg.BatchSize})
	if err != nil {
		return res, fmt.Errorf("claim: %w", err)
	}
	res.Claimed = len(rows)
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, p.cfg.Concurrency)
	var wg sync.WaitGroup
	for _, row := range rows {
		if p.cfg.Concurrency == 1 {
			o, err := p.Execute(ctx, row)
			res.add(o)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(row automation.SchedulerRow) {
			defer func() { <-sem; wg.Done() }()
			o, err := p.Execute(ctx, row)
			mu.Lock()
			res.add(o)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}(row)
	}
	wg.Wait()
	return res, firstErr
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

// rescue puts Processing rows with expired leases back to Pending with backoff. An expired
// lease counts as a failed attempt: the worker may have done part of the work (§3.5).
func (p *Poller) rescue(ctx context.Context, res *Result) error {
	now := p.clock.Now()
	rows, err := p.store.SchedulerListExpiredLeases(ctx, store.SchedulerListParams{Now: now, Limit: p.cfg.RescueBatch})
	if err != nil {
		return fmt.Errorf("rescue: %w", err)
	}
	for _, row := range rows {
		o, err := p.fail(ctx, row, now, now, automation.ReasonLeaseExpired, errors.New("processing lease expired before the attempt finished"), false)
		if err != nil {
			return fmt.Errorf("rescue %s: %w", row.SchedulerKey, err)
		}
		if o != trace.OutcomeLeaseLost {
			res.Rescued++
		}
	}
	return nil
}

// Execute runs one claimed row through its handler and records the outcome, guarded by the
// row's Version token. It returns the outcome and an error only when a store call failed.
func (p *Poller) Execute(ctx context.Context, row automation.SchedulerRow) (trace.Outcome, error) {
	started := p.clock.Now()
	h, ok := p.reg.Lookup(row.AutomationType)
	if !ok {
		return p.fail(ctx, row, started, started, automation.ReasonNoHandler, fmt.Errorf("no handler registered for %s", row.AutomationType), true)
	}
	out, herr := h.Execute(ctx, row, started)
	now := p.clock.Now()
	if herr != nil {
		code := automation.ReasonHandlerError
		if IsPermanent(herr) {
			code = automation.ReasonPermanentError
		}
		return p.fail(ctx, row, started, now, code, herr, IsPermanent(herr))
	}
	if out.Deactivate != "" {
		err := p.store.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: row.ID, Token: row.Version, Now: now, Reason: out.Deactivate})
		return p.finish(ctx, row, started, now, trace.OutcomeDeactivated, string(out.Deactivate), "", err)
	}
	err := p.store.SchedulerComplete(ctx, store.SchedulerCompleteParams{
		ID: row.ID, Token: row.Version, Now: now, DispatchResultJSON: out.DispatchResultJSON,
		Deliveries: out.Deliveries, Outbox: out.Outbox, FollowUps: out.FollowUps,
	})
	return p.finish(ctx, row, started, now, trace.OutcomeCompleted, "", "", err)
}

// fail records a failed attempt: backoff (or hold when hold is set or the ladder is
// exhausted), a diagnostics blob and a trace row.
func (p *Poller) fail(ctx context.Context, row automation.SchedulerRow, started, now time.Time, code automation.ReasonCode, cause error, hold bool) (trace.Outcome, error) {
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
	blob := trace.BlobName(row.Guid, attempt, row.Version)
	outcome := trace.OutcomeRetrying
	if hold {
		outcome = trace.OutcomeHeld
	}
	if p.trace != nil {
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
			p.log.Warn("diagnostics blob not written", "schedulerKey", row.SchedulerKey, "error", err)
			blob = ""
		}
	} else {
		blob = ""
	}
	err := p.store.SchedulerFail(ctx, store.SchedulerFailParams{
		ID: row.ID, Token: row.Version, Now: now, FailureReasonCode: code,
		NextRetryOn: next, Hold: hold, TraceBlobName: blob,
	})
	rec := trace.JobRecord{TraceBlobName: blob, Message: truncate(cause.Error(), 256)}
	return p.finishRec(ctx, row, started, now, outcome, string(code), string(code), err, rec)
}

func (p *Poller) finish(ctx context.Context, row automation.SchedulerRow, started, now time.Time, o trace.Outcome, reason, code string, err error) (trace.Outcome, error) {
	return p.finishRec(ctx, row, started, now, o, reason, code, err, trace.JobRecord{})
}

func (p *Poller) finishRec(ctx context.Context, row automation.SchedulerRow, started, now time.Time, o trace.Outcome, reason, code string, err error, rec trace.JobRecord) (trace.Outcome, error) {
	if errors.Is(err, store.ErrLeaseLost) {
		p.log.Warn("lease lost; another worker owns the row", "schedulerKey", row.SchedulerKey, "businessUnitId", row.BusinessUnitID, "step", "finish", "token", row.Version)
		o, err = trace.OutcomeLeaseLost, nil
		rec.TraceBlobName = ""
	}
	if err != nil {
		return o, fmt.Errorf("%s %s: %w", o, row.SchedulerKey, err)
	}
	rec.SchedulerKey, rec.RowGuid, rec.RowID = row.SchedulerKey, row.Guid, row.ID
	rec.BusinessUnitID, rec.AutomationType = row.BusinessUnitID, string(row.AutomationType)
	rec.Attempt, rec.Version, rec.Outcome = row.RetryCount+1, row.Version, o
	rec.ReasonCode, rec.ErrorCode, rec.StartedOn, rec.FinishedOn = reason, code, started, now
	if o == trace.OutcomeCompleted || o == trace.OutcomeDeactivated {
		rec.ErrorCode = ""
	}
	if p.trace != nil {
		if terr := p.trace.WriteJob(ctx, rec); terr != nil {
			p.log.Warn("trace row not written", "schedulerKey", row.SchedulerKey, "error", terr)
		}
	}
	p.log.Debug("row executed", "schedulerKey", row.SchedulerKey, "businessUnitId", row.BusinessUnitID, "outcome", string(o), "reasonCode", reason)
	return o, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
