package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// DefaultDrainBudget bounds one Relay.Drain when its caller gives no budget: long enough to
// empty a backlog of tens of thousands of rows, short enough for a timer invocation.
const DefaultDrainBudget = 5 * time.Second

// maxDrainRounds bounds one Drain however its clock moves (a simulated clock that stands
// still never spends a time budget).
const maxDrainRounds = 10_000

// DrainResult counts one Relay.Drain.
type DrainResult struct {
	Published int  // messages published (an envelope's items each count)
	Rounds    int  // RunOnce calls
	Empty     bool // the last round found nothing to publish (the outbox is drained, or the bus is full)
	Budget    bool // the time budget (or maxDrainRounds) ended it with rows possibly left
}

// Drain runs RunOnce until a round publishes nothing (the outbox is empty, every row left is
// leased by another relay or waits for its RetryAt, or the in-process bus is full), or claims
// fewer rows than a batch (it took every row free for it; not a claim that took a held
// destination back, which claims that destination's rows only: Relay.skipFor), or budget
// (Clock time; <= 0: DefaultDrainBudget) is spent. It replaces a fixed number of rounds: a
// backlog is emptied in one invocation when the budget allows, and an idle outbox costs one
// claim. Errors: RunOnce's, with what was published before it.
func (r *Relay) Drain(ctx context.Context, budget time.Duration) (DrainResult, error) {
	if budget <= 0 {
		budget = DefaultDrainBudget
	}
	until := r.Clock.Now().Add(budget)
	var res DrainResult
	for res.Rounds < maxDrainRounds {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		n, claimed, takenBack, err := r.runOnceMore(ctx)
		res.Rounds++
		res.Published += n
		if err != nil {
			return res, err
		}
		if (n == 0 || claimed < r.batchOrDefault()) && !takenBack {
			// A claim short of a batch took every row free for it: the next round would
			// find nothing (a write transaction for nothing after every wake of the eager
			// publisher); rows committed meanwhile wake it again.
			res.Empty = true
			return res, nil
		}
		if !r.Clock.Now().Before(until) {
			break
		}
	}
	res.Budget = true
	return res, nil
}

// Pump is the eager publisher (docs/performance.md, "Publish on the commit path"): a loop in
// the process that commits outbox rows, woken by each commit (Notify, which the store's
// commit hook calls: store.OutboxCommitNotifier), that drains the outbox through Relay,
// under the relay's lease rules: it claims with OutboxClaim (rows a live lease holds are
// not taken, so the OutboxRelay timer and the pump never publish one row at once), publishes
// with each row's MessageId, and marks only what the broker accepted (on the in-process
// bus: what it settled). So it can never publish a message that the timer would not also
// publish, and a row whose eager publish failed, or whose process died between commit and
// publish, is left to the OutboxRelay timer, the safety net.
//
// The wake channel holds one signal: commits while a drain runs collapse into one more
// drain, so the pump's memory is bounded whatever the commit rate. Idle (default 1 s) wakes
// it without a commit, for rows whose RetryAt came or whose lease ended.
type Pump struct {
	Relay  *Relay
	Budget time.Duration // one drain's budget (Relay.Drain); default DefaultDrainBudget
	Idle   time.Duration // wait without a commit before draining anyway; default 1 s
	// Gather, when positive, is how long a commit's wake waits before its drain, on a
	// runtime timer, so the commits of that window are one drain, one claim, instead of a
	// claim of a few rows after each (default 0: drain at once). It adds at most Gather to
	// each hop's latency.
	Gather time.Duration
	// AfterDrain, when set, runs after a drain that published something, with its count
	// (the embedded runtime wakes its consumers with it).
	AfterDrain func(published int)
	Log        *slog.Logger
	// Metrics counts what the pump did; the zero value is ready.
	Metrics PumpMetrics

	wake chan struct{}
	init atomic.Bool
}

// PumpMetrics are the pump's counters (the console and the bench read them).
type PumpMetrics struct {
	Wakes     atomic.Int64 // commits announced (Notify calls)
	Drains    atomic.Int64 // drains run
	Published atomic.Int64 // messages published by the pump
	Failures  atomic.Int64 // drains that ended in an error (left to the next wake or the timer)
}

// NewPump returns a pump over relay (its other fields keep their defaults until set).
func NewPump(relay *Relay) *Pump {
	p := &Pump{Relay: relay}
	p.wake = make(chan struct{}, 1)
	p.init.Store(true)
	return p
}

// Notify wakes the pump; it never blocks (a wake already pending absorbs this one), so the
// store's commit hook may call it while holding its writer slot.
func (p *Pump) Notify() {
	p.Metrics.Wakes.Add(1)
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// NotifyRows is Notify in the shape of store.OutboxCommitNotifier's hook.
func (p *Pump) NotifyRows(int) { p.Notify() }

// Run drains on every wake (and every Idle without one) until ctx ends; it returns nil then.
// A failed drain is logged at WARN and left to the next wake (the rows are committed: the
// OutboxRelay timer publishes them if no wake comes).
func (p *Pump) Run(ctx context.Context) error {
	if !p.init.Load() {
		return errors.New("delivery: a Pump needs NewPump")
	}
	idle := p.Idle
	if idle <= 0 {
		idle = time.Second
	}
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
			if p.Gather > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(p.Gather):
				}
				select { // a wake of the window: its rows are in this drain
				case <-p.wake:
				default:
				}
			}
		case <-t.C:
		}
		p.DrainOnce(ctx)
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(idle)
	}
}

// DrainOnce runs one drain (Relay.Drain with Budget) and counts it; Run calls it on each
// wake, and a test may call it directly.
func (p *Pump) DrainOnce(ctx context.Context) DrainResult {
	p.Metrics.Drains.Add(1)
	res, err := p.Relay.Drain(ctx, p.Budget)
	p.Metrics.Published.Add(int64(res.Published))
	if err != nil && ctx.Err() == nil {
		p.Metrics.Failures.Add(1)
		if p.Log != nil {
			p.Log.WarnContext(ctx, "eager publish failed; the next wake or the OutboxRelay timer retries", "step", "eager-publish",
				"published", res.Published, "errorCode", "RelayFailed", "error", err.Error())
		}
	}
	if res.Budget {
		// Rows may be left: drain again at once rather than wait for the next commit.
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	if res.Published > 0 && p.AfterDrain != nil {
		p.AfterDrain(res.Published)
	}
	return res
}
