package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
)

// FactStore is what the Projector needs from SQL.
type FactStore interface {
	DeliveryFactApply(ctx context.Context, facts []store.DeliveryFact, now time.Time) (store.DeliveryFactApplyResult, error)
}

// Projector keeps the reporting projection of delivery facts (docs/architecture.md#facts): the highest revision per
// command, so a fact delivered twice, replayed later or out of order never double-counts.
type Projector struct {
	Store FactStore
	Clock automation.Clock
}

// DecodeFact decodes a fact message body strictly (unknown fields rejected) and checks the
// fields the projection needs.
func DecodeFact(body []byte) (store.DeliveryFact, error) {
	var f store.DeliveryFact
	if err := strictjson.Decode(body, &f); err != nil {
		return f, fmt.Errorf("delivery fact: %w", err) // strictjson.ErrTrailing: "delivery fact: trailing data"
	}
	if f.EventID == "" || f.CommandID == "" || f.BusinessUnitID == "" || f.Status == "" || f.Revision <= 0 || f.OccurredOn.IsZero() {
		return f, fmt.Errorf("delivery fact %q: eventId, commandId, businessUnitId, status, revision > 0 and occurredOn are required", f.EventID)
	}
	if f.EventID != store.FactEventID(f.CommandID, f.Revision) {
		return f, fmt.Errorf("delivery fact %q: eventId must be %q", f.EventID, store.FactEventID(f.CommandID, f.Revision))
	}
	return f, nil
}

// Handle is the bus handler of topology.DeliveryFactsTopic: a malformed fact is dead-lettered,
// a store failure is retried (applying a fact twice is harmless).
func (p *Projector) Handle(ctx context.Context, m bus.Message) error {
	f, err := DecodeFact(m.Body)
	if err != nil {
		return automation.Permanent(fmt.Errorf("message %s: %w", m.ID, err))
	}
	_, err = p.Store.DeliveryFactApply(ctx, []store.DeliveryFact{f}, p.Clock.Now())
	return err
}

// HandleBatch applies the facts of several messages (a batch the bus hands over together,
// DeliveryFactProjection declared "cardinality": "many") in one DeliveryFactApply per
// store.MaxBatch facts, in the messages' order: one transaction, where Handle takes one per
// fact. errs[i] is what Handle would have returned for msgs[i]: a Permanent error for a
// malformed fact (dead-lettered; it never holds its batch-mates back), the store's error for
// every well-formed fact of a chunk whose apply failed (applying a fact twice is harmless,
// so the whole batch may come again), or nil.
func (p *Projector) HandleBatch(ctx context.Context, msgs []bus.Message) []error {
	errs := make([]error, len(msgs))
	var facts []store.DeliveryFact
	var at []int // msgs index of facts[j]
	for i, m := range msgs {
		f, err := DecodeFact(m.Body)
		if err != nil {
			errs[i] = automation.Permanent(fmt.Errorf("message %s: %w", m.ID, err))
			continue
		}
		facts, at = append(facts, f), append(at, i)
	}
	for lo := 0; lo < len(facts); lo += store.MaxBatch {
		hi := min(lo+store.MaxBatch, len(facts))
		if _, err := p.Store.DeliveryFactApply(ctx, facts[lo:hi], p.Clock.Now()); err != nil {
			for _, i := range at[lo:hi] {
				errs[i] = err
			}
		}
	}
	return errs
}

// BehindLister lists the jobs whose projection is behind (store.DeliveryStore).
type BehindLister interface {
	NotificationListProjectionBehind(ctx context.Context, afterID int64, limit int) ([]store.NotificationJob, error)
}

// CatchUp applies, for every job whose projection row is missing or older than the job, the
// fact of its current revision (OccurredOn its last update). The projection is a function of
// the facts, and the facts of a job are its revisions: a fact message lost for good (an
// in-process bus forgets its messages when the process stops, after the relay marked them
// published) is recomputed from the job itself. It returns how many facts it applied; at
// most max (0: no bound) jobs are read. Found by the simulator (docs/simulation.md, seed 22).
func (p *Projector) CatchUp(ctx context.Context, jobs BehindLister, max int) (int, error) {
	n := 0
	var after int64
	for max <= 0 || n < max {
		limit := store.MaxBatch
		if max > 0 {
			limit = min(limit, max-n)
		}
		js, err := jobs.NotificationListProjectionBehind(ctx, after, limit)
		if err != nil {
			return n, err
		}
		if len(js) == 0 {
			return n, nil
		}
		facts := make([]store.DeliveryFact, len(js))
		for i, j := range js {
			facts[i] = store.DeliveryFact{EventID: store.FactEventID(j.DeliveryKey, j.Revision), CommandID: j.DeliveryKey, EffectKey: j.EffectKey,
				BusinessUnitID: j.BusinessUnitID, SchedulerKey: j.SchedulerKey, Channel: j.Channel, LocalDate: j.LocalDate, Status: j.Status,
				Revision: j.Revision, OccurredOn: j.UpdatedOn, ProviderReference: j.ProviderReference, ResolvedBy: j.ResolvedBy}
			after = j.ID
		}
		if _, err := p.Store.DeliveryFactApply(ctx, facts, p.Clock.Now()); err != nil {
			return n, err
		}
		n += len(js)
		if len(js) < limit {
			return n, nil
		}
	}
	return n, nil
}
