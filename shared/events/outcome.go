package events

import (
	"context"
	"sync/atomic"
)

// Outcome is what a caller learns about one dispatched event beyond its error: whether a
// handler found it already processed (the same source and id seen before), so the answer
// can say "duplicate" instead of a bare "processed" for an event that changed nothing.
// A handler reports through the context (MarkDuplicate); an event is a duplicate when
// every handler that ran said so (a router with several handlers may dedupe in each).
type Outcome struct {
	ran, duplicates atomic.Int32
}

type outcomeKey struct{}

// WithOutcome returns a context whose handlers report into the returned Outcome.
func WithOutcome(ctx context.Context) (context.Context, *Outcome) {
	o := &Outcome{}
	return context.WithValue(ctx, outcomeKey{}, o), o
}

// MarkDuplicate records that the handler running under ctx found its event already
// processed and did nothing. Without WithOutcome it does nothing.
func MarkDuplicate(ctx context.Context) {
	if o, ok := ctx.Value(outcomeKey{}).(*Outcome); ok {
		o.duplicates.Add(1)
	}
}

// Duplicate reports whether at least one handler ran and every one that ran marked the
// event a duplicate.
func (o *Outcome) Duplicate() bool {
	if o == nil {
		return false
	}
	ran := o.ran.Load()
	return ran > 0 && o.duplicates.Load() >= ran
}

func ranHandler(ctx context.Context) {
	if o, ok := ctx.Value(outcomeKey{}).(*Outcome); ok {
		o.ran.Add(1)
	}
}
