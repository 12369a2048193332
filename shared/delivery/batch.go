package delivery

import (
	"context"
	"errors"
	"fmt"
	"github.com/automation-platform/automation/shared/telemetry"
	"sync"

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
	g := &groupCommit{d: d, outs: outs, errs: errs}
	g.settle = sync.NewCond(&g.mu)
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
			// The committer keeps the slot while it commits (groupCommit).
			defer func() { <-slot }()
			o, rec, err := d.attempt(ctx, c, sc)
			g.finish(ctx, i, o, rec, err)
		}()
	}
	wg.Wait()
	if crashed := g.crash(); crashed != nil {
		for i := range errs {
			if errs[i] == nil && !g.recorded[i] {
				errs[i] = crashed
			}
		}
		return outs, errs, crashed
	}
	return outs, errs, errors.Join(g.bad...)
}

// groupCommit records a batch's outcomes as their sends finish: a sender hands its outcome
// over; when no commit is running it becomes the committer and commits every outcome
// handed over so far in one NotificationFinishMany (each item fenced by its claim's
// Version), then again those handed over meanwhile, until none is left; a sender that
// finds a commit running leaves its outcome to it and returns. The committer keeps its
// channel slot while it commits, so with one send at a time a finished send is recorded
// before its channel's next send starts; a group is at most the batch (store.MaxBatch).
// After a crash (a fault hook's error) nothing further is committed: the outcomes still
// waiting are dropped, as a crash would lose them.
type groupCommit struct {
	d          *Dispatcher
	outs       []Outcome
	errs       []error
	mu         sync.Mutex // guards everything below; not held while committing
	committing bool
	pending    []int // outs indexes handed over and not yet committed
	recs       map[int]store.NotificationFinishParams
	recorded   map[int]bool
	settle     *sync.Cond   // on mu: a group went through, or a crash
	settled    map[int]bool // outs indexes whose group went through (recorded or not)
	crashed    error
	bad        []error
}

// crash returns the batch's crash, if any.
func (g *groupCommit) crash() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.crashed
}

// finish hands outcome i over, and commits groups until none is waiting when no commit is
// running. err is attempt's crash.
func (g *groupCommit) finish(ctx context.Context, i int, o Outcome, rec *store.NotificationFinishParams, err error) {
	g.mu.Lock()
	g.outs[i] = o
	switch {
	case err != nil:
		if g.crashed == nil {
			g.crashed = err
		}
		g.errs[i] = err
		g.settle.Broadcast()
		g.mu.Unlock()
		return
	case rec == nil || g.crashed != nil:
		g.mu.Unlock()
		return
	}
	if g.recs == nil {
		g.recs, g.recorded = map[int]store.NotificationFinishParams{}, map[int]bool{}
	}
	g.recs[i] = *rec
	g.pending = append(g.pending, i)
	if g.committing {
		// Another channel's send is committing (with one send at a time, no send of this
		// channel can be): it records this outcome too. With one send at a time, wait until
		// its group went through while keeping the slot, as the committer keeps its own:
		// otherwise this channel's next send would start while this outcome is still an
		// unrecorded Sending claim.
		for g.oneAtATime() && !g.settled[i] && g.crashed == nil {
			g.settle.Wait()
		}
		g.mu.Unlock()
		return
	}
	g.committing = true
	g.mu.Unlock()
	for g.commitPending(ctx) {
	}
}

// commitPending commits the outcomes waiting; false when none was waiting (or the batch
// crashed), and the caller is no longer the committer. The group is taken when the store's
// transaction has begun (NotificationFinishGroup), not before: outcomes handed over while
// the commit waited for the writer go in with it. No commit waits for more outcomes than
// are already there (a crash mid-batch would leave them all in doubt).
func (g *groupCommit) commitPending(ctx context.Context) bool {
	g.mu.Lock()
	if g.crashed != nil || len(g.pending) == 0 {
		g.committing = false
		g.mu.Unlock()
		return false
	}
	g.mu.Unlock()
	var group []int // outs indexes of the items taken
	taken := false
	take := func() []store.NotificationFinishParams {
		g.mu.Lock()
		defer g.mu.Unlock()
		taken = true
		if g.crashed != nil {
			return nil // the outcomes waiting are dropped, as the crash would lose them
		}
		group, g.pending = g.pending, nil
		now := g.d.Clock.Now()
		ps := make([]store.NotificationFinishParams, len(group))
		for j, k := range group {
			p := g.recs[k]
			g.outs[k].At = now
			// outs[k] is not written again (its send handed it over once), so the store may
			// read the claimed job where it lies.
			job := &g.outs[k].Job
			p.ID, p.Token, p.Now, p.Job = job.ID, job.Version, now, job
			ps[j] = p
		}
		return ps
	}
	_, itemErrs, cerr := g.d.Store.NotificationFinishGroup(ctx, take)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !taken && g.crashed == nil {
		// The store failed before its transaction began (take not called): the outcomes
		// waiting fail with it, once, rather than being offered to the store again and
		// again while it fails.
		group, g.pending = g.pending, nil
		if cerr == nil {
			cerr = errors.New("the store did not take the group")
		}
	}
	if g.settled == nil {
		g.settled = map[int]bool{}
	}
	for _, k := range group {
		g.settled[k] = true
	}
	g.settle.Broadcast()
	if cerr != nil {
		cerr = fmt.Errorf("dispatch: record a group of %d outcomes: %w", len(group), cerr)
		g.bad = append(g.bad, cerr)
		for _, k := range group {
			g.errs[k] = cerr
		}
		return true
	}
	for j, k := range group {
		switch e := itemErrs[j]; {
		case errors.Is(e, store.ErrLeaseLost):
			// Another sender took over after our lease expired; its claim was in doubt, so
			// it did not send blindly. It records the outcome.
			continue
		case e != nil:
			e = fmt.Errorf("dispatch %s: record %s: %w", g.outs[k].Job.DeliveryKey, g.outs[k].Status, e)
			g.bad, g.errs[k] = append(g.bad, e), e
			continue
		}
		g.recorded[k] = true
		g.d.log(ctx, g.outs[k])
		if g.d.OnOutcome != nil {
			g.d.OnOutcome(g.outs[k])
		}
	}
	return true
}

func (d *Dispatcher) channelConcurrency() int {
	if d.ChannelConcurrency > 0 {
		return d.ChannelConcurrency
	}
	return 4
}

// oneAtATime reports one send at a time per channel: ChannelConcurrency 1, or InOrder.
func (g *groupCommit) oneAtATime() bool { return g.d.InOrder || g.d.channelConcurrency() == 1 }

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
