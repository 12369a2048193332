package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/telemetry"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
)

// HandleBatch is Handle for several dispatch messages at once (the messages a bus hands
// over together, at most store.MaxBatch): the send claims of all their delivery keys are
// taken in one transaction (NotificationClaimMany), the claimed jobs are sent with
// ChannelConcurrency calls per channel at once, and their outcomes are recorded in group
// commits as the sends finish (ProcessBatch). A delivery key repeated in the batch is
// claimed and sent once, and each of its messages gets its first message's answer. errs[i]
// is what Handle would have returned for msgs[i]: nil (done, or nothing to do), a Permanent
// error (malformed body, unknown delivery key), a RetryAfter(ErrInFlight) (another sender's
// live claim), the crash of a fault hook
// when its outcome was not recorded before it, or the error of the group commit that failed
// to record its outcome (its claim then expires and its next attempt is in doubt). More than
// store.MaxBatch messages is an error for every message.
func (d *Dispatcher) HandleBatch(ctx context.Context, msgs []bus.Message) []error {
	errs := make([]error, len(msgs))
	if len(msgs) == 0 {
		return errs
	}
	if len(msgs) > store.MaxBatch {
		err := fmt.Errorf("dispatch: a batch of %d messages is over %d", len(msgs), store.MaxBatch)
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	var keys []string
	var at []int              // msgs index of keys[j]
	first := map[string]int{} // delivery key -> msgs index of its first message
	same := map[int]int{}     // msgs index of a repeated key -> its first message's
	for i, m := range msgs {
		k, err := dispatchKey(m)
		if err != nil {
			errs[i] = err
			continue
		}
		if f, dup := first[k]; dup {
			same[i] = f
			continue
		}
		first[k] = i
		keys, at = append(keys, k), append(at, i)
	}
	// A key repeated in the batch (the same delivery published twice, a redelivery beside a
	// later copy) is one delivery: claimed and sent once, and each of its messages answered
	// as its first was, as if the copy had come right after it.
	defer func() {
		for i, f := range same {
			errs[i] = errs[f]
		}
	}()
	if len(keys) == 0 {
		return errs
	}
	res, err := d.Store.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: keys, Now: d.Clock.Now(), Lease: d.lease()})
	if err != nil {
		for _, i := range at {
			errs[i] = err
		}
		return errs
	}
	var claimed []store.NotificationClaimResult
	var claimedAt []int
	for j, r := range res {
		i := at[j]
		switch {
		case r.Claimed:
			claimed, claimedAt = append(claimed, r), append(claimedAt, i)
		case r.Job.ID == 0:
			errs[i] = automation.Permanent(fmt.Errorf("dispatch message %s: no NotificationJob %s", msgs[i].ID, keys[j]))
		case r.Job.Status == store.NotificationSending:
			errs[i] = automation.RetryAfter(d.lease(), ErrInFlight)
		}
	}
	if telemetry.Enabled() {
		// Each send joins the trace of its own message (the batch's invocation only links to it).
		parents := make(map[string]string, len(claimed))
		for j, i := range claimedAt {
			parents[claimed[j].Job.DeliveryKey] = msgs[i].TraceParent
		}
		ctx = context.WithValue(ctx, sendParents{}, parents)
	}
	_, perClaim, _ := d.processBatch(ctx, claimed)
	for j, i := range claimedAt {
		errs[i] = perClaim[j]
	}
	return errs
}

// ProcessBatch runs claimed jobs (each as Process runs one; at most store.MaxBatch) with at
// most ChannelConcurrency channel calls per channel at once, and records their outcomes in
// group commits as the sends finish (groupCommit): a finished send's outcome never waits for
// a slower send of the batch, so its claim cannot expire and be taken over in doubt while it
// waits. Each (template, business unit) the batch renders is read from the store once per
// batch (templateScope), as the burn-down reads each setting once per claimed batch: a
// template saved while a batch runs is used from the next batch. It returns the outcomes in
// the order of claims (an outcome whose claim was lost to another sender is returned
// unrecorded, as Process does). Errors: a fault hook's crash (outcomes committed before it
// stay; nothing is recorded after it and no send starts after it), or a record failed
// (those claims expire and each next attempt is in doubt), joined.
func (d *Dispatcher) ProcessBatch(ctx context.Context, claims []store.NotificationClaimResult) ([]Outcome, error) {
	outs, _, err := d.processBatch(ctx, claims)
	return outs, err
}

// processBatch is ProcessBatch with each claim's own error beside the joined one: nil
// (recorded, or its claim was lost to another sender), the crash, or its record's failure.
func (d *Dispatcher) processBatch(ctx context.Context, claims []store.NotificationClaimResult) ([]Outcome, []error, error) {
	errs := make([]error, len(claims))
	if len(claims) == 0 {
		return nil, errs, nil
	}
	if len(claims) > store.MaxBatch {
		err := fmt.Errorf("dispatch: a batch of %d claims is over %d", len(claims), store.MaxBatch)
		for i := range errs {
			errs[i] = err
		}
		return nil, errs, err
	}
	outs := make([]Outcome, len(claims))
	r := d.recorder()
	g := &batchRecord{d: d, r: r, outs: outs, errs: errs, recorded: make([]bool, len(claims)), settled: make([]bool, len(claims))}
	if telemetry.Enabled() {
		g.sends = make([]trace.SpanContext, len(claims))
	}
	var wg sync.WaitGroup
	sc := &templateScope{}
	slots := map[string]chan struct{}{}
	one := make(chan struct{}, 1) // InOrder: the one slot every channel shares
	for _, c := range claims {
		switch {
		case d.InOrder:
			slots[c.Job.Channel] = one
		case slots[c.Job.Channel] == nil:
			slots[c.Job.Channel] = make(chan struct{}, d.channelConcurrency())
		}
	}
	// A batch whose context ends is given up as a crash is (abandon): its outcomes still
	// waiting are dropped and it answers the context's error for every outcome not recorded
	// (in doubt: its claims expire and the next attempt reconciles them), without waiting for
	// the dispatcher's committer, which may be busy with other batches' outcomes.
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.abandon(g, context.Cause(ctx))
	})
	defer stop()
	for i, c := range claims {
		slot := slots[c.Job.Channel]
		slot <- struct{}{}
		if g.crash() != nil {
			<-slot
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// With one send at a time, finish keeps the slot until the outcome is recorded.
			defer func() { <-slot }()
			var send *trace.SpanContext
			if g.sends != nil {
				send = &g.sends[i]
			}
			o, rec, err := d.attempt(ctx, c, sc, send)
			g.finish(ctx, i, o, rec, err)
		}()
	}
	wg.Wait()
	// Every outcome handed over is settled (its group went through, or it was dropped by a
	// crash) before the batch answers: the dispatcher's committer may still hold some.
	r.mu.Lock()
	for g.open > 0 {
		r.settle.Wait()
	}
	crashed, bad := g.crashed, g.bad
	if crashed != nil {
		for i := range errs {
			if errs[i] == nil && !g.recorded[i] {
				errs[i] = crashed
			}
		}
	}
	r.mu.Unlock()
	if crashed != nil {
		return outs, errs, crashed
	}
	return outs, errs, errors.Join(bad...)
}

// recorder is a dispatcher's group commit, shared by every batch it runs at once
// (concurrent HandleBatch and ProcessBatch calls, every channel): a sender hands its
// outcome over; when no commit is running, a committer starts at once (so a lone outcome
// in a quiet system is recorded without waiting) and commits every outcome handed over so
// far in one NotificationFinishGroup (each item fenced by its claim's Version), then again
// those handed over meanwhile, until none is left. The group is taken when the store's
// transaction has begun (on SQLite, once the writer's slot is held), so it is whatever
// waited by then, from every batch: no commit waits for outcomes that are not there yet (a
// crash then would leave them all in doubt; docs/performance.md, "A group commit takes
// what waited with it"). A group is at most store.MaxBatch outcomes (NotificationFinishMany's
// bound, checkLimit); more wait for the next group. pending is bounded by the batches
// running at once, each at most store.MaxBatch claims.
//
// The committer runs on a goroutine of its own, with the context of the batch whose send
// started it without its cancellation (it commits other batches' outcomes too, which one
// batch's end must not fail while they wait). Each group is traced apart from every batch:
// its span, "delivery.record", is a root (a trace of its own, sampled by the ratio) linked
// to the "delivery.send" span of each outcome in it (OpenTelemetry's links: a group serves
// sends of several traces, so no one of them is its parent), and what the group writes (its
// facts' outbox row) carries that span's context; a group's transaction itself is cancelled when the
// context of any batch with an outcome in it ends, and such a batch is abandoned as a crash
// is (processBatch), so a hung store never holds a batch past its own end. With one send at a time per channel (ChannelConcurrency 1, InOrder)
// a sender keeps its channel slot until its outcome's group went through, so a channel's
// next send never starts while its last outcome is an unrecorded Sending claim. A batch's
// crash (a fault hook's error) drops that batch's outcomes still waiting, as a crash would
// lose them, and nothing of it is committed after; other batches go on.
type recorder struct {
	mu         sync.Mutex // guards everything below and every batchRecord of the dispatcher
	settle     *sync.Cond // on mu: a group went through, outcomes were dropped, or a batch crashed
	committing bool
	pending    []handed // outcomes handed over and not yet taken, oldest first
}

// handed is one outcome waiting for a group: outs index i of batch b, its record and the
// context of its batch (the outcome's log line, its cancellation).
type handed struct {
	b   *batchRecord
	i   int
	rec store.NotificationFinishParams
	ctx context.Context
}

// recorder returns the dispatcher's group commit, made on first use. A copy of a
// Dispatcher made after its first batch shares it (a group then holds one copy's outcomes
// only: takeGroup).
func (d *Dispatcher) recorder() *recorder {
	recMu.Lock()
	defer recMu.Unlock()
	if d.rec == nil {
		d.rec = &recorder{}
		d.rec.settle = sync.NewCond(&d.rec.mu)
	}
	return d.rec
}

// recMu guards making a Dispatcher's recorder (held once per batch, briefly).
var recMu sync.Mutex

// batchRecord is one batch's side of the recorder: its outcomes, errors, which outcomes
// were recorded or settled, its crash. Guarded by its recorder's mu.
type batchRecord struct {
	d        *Dispatcher
	r        *recorder
	outs     []Outcome
	errs     []error
	recorded []bool
	settled  []bool // outs indexes whose group went through (recorded or not), or dropped
	open     int    // outcomes handed over and not yet settled
	crashed  error
	bad      []error
	// sends[i] is the span context of claim i's "delivery.send" span (attempt; zero when not
	// sampled), which the group recording its outcome links to. Nil with telemetry off.
	sends []trace.SpanContext
}

// crash returns the batch's crash, if any.
func (g *batchRecord) crash() error {
	g.r.mu.Lock()
	defer g.r.mu.Unlock()
	return g.crashed
}

// finish hands outcome i over to the dispatcher's recorder (starting its committer when
// none runs) and, with one send at a time, waits until its group went through. err is
// attempt's crash: the batch's outcomes still waiting are dropped.
func (g *batchRecord) finish(ctx context.Context, i int, o Outcome, rec *store.NotificationFinishParams, err error) {
	r := g.r
	r.mu.Lock()
	defer r.mu.Unlock()
	g.outs[i] = o
	switch {
	case err != nil:
		g.errs[i] = err
		r.abandon(g, err)
		return
	case rec == nil || g.crashed != nil:
		return
	}
	r.pending = append(r.pending, handed{b: g, i: i, rec: *rec, ctx: ctx})
	g.open++
	if !r.committing {
		r.committing = true
		go r.run(context.WithoutCancel(ctx))
	}
	for g.d.oneAtATime() && !g.settled[i] && g.crashed == nil {
		r.settle.Wait()
	}
}

// abandon marks batch g crashed with err (its first crash stays), drops its outcomes still
// waiting and wakes every waiter (mu held): a fault hook's crash, or the batch's context
// ending (processBatch).
func (r *recorder) abandon(g *batchRecord, err error) {
	if g.crashed == nil {
		g.crashed = err
	}
	r.dropCrashed()
	r.settle.Broadcast()
}

// dropCrashed drops the waiting outcomes of every crashed batch (mu held): a crash loses
// what was not yet committed.
func (r *recorder) dropCrashed() {
	kept := r.pending[:0]
	for _, h := range r.pending {
		if h.b.crashed != nil {
			h.b.settled[h.i] = true
			h.b.open--
			continue
		}
		kept = append(kept, h)
	}
	clear(r.pending[len(kept):])
	r.pending = kept
}

// run commits groups until no outcome is waiting, then stops being the committer.
func (r *recorder) run(ctx context.Context) {
	for {
		r.mu.Lock()
		if len(r.pending) == 0 {
			r.committing = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		r.commit(ctx)
	}
}

// commit records one group: the outcomes waiting when the store's transaction began, at
// most store.MaxBatch (NotificationFinishGroup calls take then).
func (r *recorder) commit(ctx context.Context) {
	var group []handed
	taken := false
	var d *Dispatcher
	// The group's transaction ends when the context of any batch with an outcome in it ends
	// (the one-batch group commit used the batch's context): a store call that hangs never
	// holds a batch past its own end. The group's outcomes then fail with it and stay in
	// doubt, other batches' included, as any failed group's do.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stops []func() bool
	take := func() []store.NotificationFinishParams {
		r.mu.Lock()
		defer r.mu.Unlock()
		taken = true
		group = r.takeGroup(d)
		if len(group) == 0 {
			return nil
		}
		for j, h := range group {
			if j == 0 || h.b != group[j-1].b { // a batch's outcomes mostly lie together
				stops = append(stops, context.AfterFunc(h.ctx, cancel))
			}
		}
		now := group[0].b.d.Clock.Now()
		ps := make([]store.NotificationFinishParams, len(group))
		for j, h := range group {
			p := h.rec
			h.b.outs[h.i].At = now
			// outs[i] is not written again (its send handed it over once), so the store may
			// read the claimed job where it lies.
			job := &h.b.outs[h.i].Job
			p.ID, p.Token, p.Now, p.Job = job.ID, job.Version, now, job
			ps[j] = p
		}
		return ps
	}
	r.mu.Lock()
	if len(r.pending) > 0 {
		d = r.pending[0].b.d
	}
	r.mu.Unlock()
	if d == nil {
		return
	}
	cctx, span := telemetry.StartRoot(cctx, "delivery.record")
	_, itemErrs, cerr := d.Store.NotificationFinishGroup(cctx, take)
	if span.IsRecording() {
		// take ran inside the call (or never): group is the group the span served. Links may
		// be added until the span ends; its context, which the facts' row carries, is fixed
		// at its start.
		span.SetAttributes(telemetry.Count.Int(len(group)))
		for _, h := range group {
			if h.b.sends != nil && h.b.sends[h.i].IsValid() {
				span.AddLink(trace.Link{SpanContext: h.b.sends[h.i]})
			}
		}
	}
	telemetry.End(span, cerr, automation.CodeString(cerr))
	for _, stop := range stops {
		stop()
	}
	r.mu.Lock()
	if !taken {
		// The store failed before its transaction began (take not called): the outcomes
		// waiting fail with it, once, rather than being offered to the store again and
		// again while it fails.
		group = r.takeGroup(d)
		if cerr == nil {
			cerr = errors.New("the store did not take the group")
		}
	}
	var recorded []handed
	if cerr != nil {
		cerr = fmt.Errorf("dispatch: record a group of %d outcomes: %w", len(group), cerr)
		for _, h := range group {
			if len(h.b.bad) == 0 || h.b.bad[len(h.b.bad)-1] != cerr {
				h.b.bad = append(h.b.bad, cerr)
			}
			h.b.errs[h.i] = cerr
		}
	} else {
		for j, h := range group {
			switch e := itemErrs[j]; {
			case errors.Is(e, store.ErrLeaseLost):
				// Another sender took over after our lease expired; its claim was in doubt,
				// so it did not send blindly. It records the outcome.
				continue
			case e != nil:
				o := h.b.outs[h.i]
				e = fmt.Errorf("dispatch %s: record %s: %w", o.Job.DeliveryKey, o.Status, e)
				h.b.bad, h.b.errs[h.i] = append(h.b.bad, e), e
				continue
			}
			h.b.recorded[h.i] = true
			recorded = append(recorded, h)
		}
	}
	r.mu.Unlock()
	// The outcomes' log lines and OnOutcome, outside mu (OnOutcome may call the dispatcher
	// again) and before the group is settled, so a batch answers after its OnOutcome calls.
	for _, h := range recorded {
		o := h.b.outs[h.i] // not written again once taken
		h.b.d.log(h.ctx, o)
		if h.b.d.OnOutcome != nil {
			h.b.d.OnOutcome(o)
		}
	}
	r.mu.Lock()
	for _, h := range group {
		h.b.settled[h.i] = true
		h.b.open--
	}
	r.settle.Broadcast()
	r.mu.Unlock()
}

// takeGroup takes the oldest waiting outcomes of dispatcher d, at most store.MaxBatch (mu
// held). A crashed batch has none waiting (dropCrashed dropped them when it crashed); a
// batch whose context has ended and whose processBatch has not yet heard it is abandoned
// here, so its outcomes do not end a group they would cancel (commit).
func (r *recorder) takeGroup(d *Dispatcher) []handed {
	var group []handed
	kept := r.pending[:0]
	dropped := false
	for _, h := range r.pending {
		if h.b.crashed == nil && h.ctx.Err() != nil {
			h.b.crashed = context.Cause(h.ctx)
		}
		if h.b.crashed != nil {
			h.b.settled[h.i] = true
			h.b.open--
			dropped = true
			continue
		}
		if h.b.d == d && len(group) < store.MaxBatch {
			group = append(group, h)
			continue
		}
		kept = append(kept, h)
	}
	clear(r.pending[len(kept):])
	r.pending = kept
	if dropped {
		r.settle.Broadcast()
	}
	return group
}

func (d *Dispatcher) channelConcurrency() int {
	if d.ChannelConcurrency > 0 {
		return d.ChannelConcurrency
	}
	return 4
}

// oneAtATime reports one send at a time per channel: ChannelConcurrency 1, or InOrder.
func (d *Dispatcher) oneAtATime() bool { return d.InOrder || d.channelConcurrency() == 1 }

// templateScope holds the templates one batch read, by (key, business unit): the latest
// version at the batch's first read of it, or its "not found". Jobs of the batch that ask
// for one (key, business unit) at once wait for the one read. A store error other than
// "not found" is not kept, so the next job of the batch reads again. Safe for concurrent use.
type templateScope struct {
	mu      sync.Mutex
	entries map[[2]string]*scopedTemplate
}

// scopedTemplate is one (key, business unit) of a templateScope; mu is held by its read.
type scopedTemplate struct {
	mu   sync.Mutex
	done bool
	c    *Compiled
	err  error
}

func (sc *templateScope) get(ctx context.Context, ts *Templates, key, businessUnitID string) (*Compiled, error) {
	k := [2]string{key, businessUnitID}
	sc.mu.Lock()
	if sc.entries == nil {
		sc.entries = map[[2]string]*scopedTemplate{}
	}
	e := sc.entries[k]
	if e == nil {
		e = &scopedTemplate{}
		sc.entries[k] = e
	}
	sc.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return e.c, e.err
	}
	c, err := ts.Get(ctx, key, businessUnitID)
	if err == nil || errors.Is(err, store.ErrNotFound) {
		e.done, e.c, e.err = true, c, err
	}
	return c, err
}

// sendParents carries, in a batch's context, the traceparent of each claimed delivery's
// message by delivery key (HandleBatch), for its "delivery.send" span.
type sendParents struct{}

// sendContext is ctx with delivery key's message context as the parent, when HandleBatch
// recorded one.
func sendContext(ctx context.Context, key string) context.Context {
	if m, ok := ctx.Value(sendParents{}).(map[string]string); ok && m[key] != "" {
		return telemetry.Extract(ctx, m[key], "")
	}
	return ctx
}
