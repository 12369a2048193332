package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Retention defaults (docs/campaigns.md#retention).
const (
	// DefaultPublishedRetention keeps published outbox rows 7 days (for diagnosis; the broker
	// has them already).
	DefaultPublishedRetention = 7 * 24 * time.Hour
	// DefaultDedupeWindow keeps ProcessedEvent dedupe keys 35 days: longer than any source
	// may replay an event (Service Bus keeps a dead-lettered message 14 days by default, a
	// domain app's replay of its own log is bounded to 30 days), so a replayed event is still
	// recognised as a duplicate.
	DefaultDedupeWindow = 35 * 24 * time.Hour
	// MinDedupeWindow is the least dedupe window accepted: 1 day.
	MinDedupeWindow = 24 * time.Hour
)

// OutboxPurger removes published outbox rows older than PublishedRetention and
// ProcessedEvent dedupe keys older than DedupeWindow, in bounded deletes. Unpublished rows
// are never removed. DedupeWindow must cover the longest time any source may replay an
// event (a key removed earlier would let a replay be processed twice); it is refused below
// MinDedupeWindow.
type OutboxPurger struct {
	Store              store.OutboxLeaseStore
	Clock              automation.Clock
	PublishedRetention time.Duration // 0: DefaultPublishedRetention
	DedupeWindow       time.Duration // 0: DefaultDedupeWindow
	BatchSize          int           // rows per delete (0: store.MaxBatch)
	MaxBatches         int           // deletes per run (0: 10)
}

// RunOnce runs up to MaxBatches bounded purges and returns what they removed.
func (p *OutboxPurger) RunOnce(ctx context.Context) (store.OutboxPurgeResult, error) {
	var total store.OutboxPurgeResult
	if p.Store == nil || p.Clock == nil {
		return total, errors.New("OutboxPurger: Store and Clock are required")
	}
	keep, window := p.PublishedRetention, p.DedupeWindow
	if keep == 0 {
		keep = DefaultPublishedRetention
	}
	if window == 0 {
		window = DefaultDedupeWindow
	}
	if keep < 0 || window < MinDedupeWindow {
		return total, fmt.Errorf("OutboxPurger: retention %v must not be negative and the dedupe window %v not under %v", keep, window, MinDedupeWindow)
	}
	batch, rounds := p.BatchSize, p.MaxBatches
	if batch <= 0 || batch > store.MaxBatch {
		batch = store.MaxBatch
	}
	if rounds <= 0 {
		rounds = 10
	}
	now := p.Clock.Now().UTC()
	for range rounds {
		r, err := p.Store.OutboxPurge(ctx, store.OutboxPurgeParams{PublishedBefore: now.Add(-keep), ProcessedBefore: now.Add(-window), Limit: batch})
		total.Outbox += r.Outbox
		total.ProcessedEvents += r.ProcessedEvents
		if err != nil || (r.Outbox < batch && r.ProcessedEvents < batch) {
			return total, err
		}
	}
	return total, nil
}
