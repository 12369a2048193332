package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
)

// HandleBatch is Handle for several dispatch messages at once (the messages a bus hands
// over together, at most store.MaxBatch): the send claims of all their delivery keys are
// taken in one transaction (NotificationClaimMany), the claimed jobs are sent with
// ChannelConcurrency calls per channel at once, and their outcomes are recorded in one
// transaction (ProcessBatch). errs[i] is what Handle would have returned for msgs[i]: nil
// (done, or nothing to do), a Permanent error (malformed body, unknown delivery key), a
// RetryAfter(ErrInFlight) (another sender's live claim), or the batch's error when its
// outcomes could not be recorded (each claim then expires and its next attempt is in doubt).
// More than store.MaxBatch messages is an error for every message.
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
	var at []int // msgs index of keys[j]
	for i, m := range msgs {
		k, err := dispatchKey(m)
		if err != nil {
			errs[i] = err
			continue
		}
		keys, at = append(keys, k), append(at, i)
	}
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
	if _, err := d.ProcessBatch(ctx, claimed); err != nil {
		for _, i := range claimedAt {
			errs[i] = err
		}
	}
	return errs
}

// ProcessBatch runs claimed jobs (each as Process runs one; at most store.MaxBatch) with at
// most ChannelConcurrency channel calls per channel at once, then records every outcome in
// one transaction (NotificationFinishMany). Each (template, business unit) the batch renders
// is read from the store once per batch (templateScope), as the burn-down reads each setting
// once per claimed batch: a template saved while a batch runs is used from the next batch. It returns the outcomes in the order of claims
// (an outcome whose claim was lost to another sender is returned unrecorded, as Process
// does). Errors: a fault hook's crash (no outcome of the batch recorded, and no send started
// after it), or the record failed (nothing recorded): the claims then expire and each next
// attempt is in doubt.
func (d *Dispatcher) ProcessBatch(ctx context.Context, claims []store.NotificationClaimResult) ([]Outcome, error) {
	if len(claims) == 0 {
		return nil, nil
	}
	if len(claims) > store.MaxBatch {
		return nil, fmt.Errorf("dispatch: a batch of %d claims is over %d", len(claims), store.MaxBatch)
	}
	outs := make([]Outcome, len(claims))
	recs := make([]*store.NotificationFinishParams, len(claims))
	var (
		mu      sync.Mutex
		crashed error
		wg      sync.WaitGroup
	)
	sc := &templateScope{}
	slots := map[string]chan struct{}{}
	for _, c := range claims {
		if slots[c.Job.Channel] == nil {
			slots[c.Job.Channel] = make(chan struct{}, d.channelConcurrency())
		}
	}
	for i, c := range claims {
		slot := slots[c.Job.Channel]
		slot <- struct{}{}
		mu.Lock()
		stop := crashed != nil
		mu.Unlock()
		if stop {
			<-slot
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slot }()
			o, rec, err := d.attempt(ctx, c, sc)
			mu.Lock()
			defer mu.Unlock()
			outs[i], recs[i] = o, rec
			if err != nil && crashed == nil {
				crashed = err
			}
		}()
	}
	wg.Wait()
	if crashed != nil {
		return nil, crashed
	}
	now := d.Clock.Now()
	var ps []store.NotificationFinishParams
	var idx []int
	for i, rec := range recs {
		if rec == nil {
			continue
		}
		p := *rec
		outs[i].At = now
		p.ID, p.Token, p.Now = outs[i].Job.ID, outs[i].Job.Version, now
		ps, idx = append(ps, p), append(idx, i)
	}
	if len(ps) == 0 {
		return outs, nil
	}
	itemErrs, err := d.Store.NotificationFinishMany(ctx, ps)
	if err != nil {
		return outs, fmt.Errorf("dispatch: record a batch of %d outcomes: %w", len(ps), err)
	}
	var bad []error
	for j, i := range idx {
		switch e := itemErrs[j]; {
		case errors.Is(e, store.ErrLeaseLost):
			// Another sender took over after our lease expired; its claim was in doubt, so
			// it did not send blindly. It records the outcome.
			continue
		case e != nil:
			bad = append(bad, fmt.Errorf("dispatch %s: record %s: %w", outs[i].Job.DeliveryKey, outs[i].Status, e))
			continue
		}
		d.log(ctx, outs[i])
		if d.OnOutcome != nil {
			d.OnOutcome(outs[i])
		}
	}
	return outs, errors.Join(bad...)
}

func (d *Dispatcher) channelConcurrency() int {
	if d.ChannelConcurrency > 0 {
		return d.ChannelConcurrency
	}
	return 4
}

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
