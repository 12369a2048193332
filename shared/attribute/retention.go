package attribute

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Retention of the processed-event ledger (docs/attributes.md#retention).
const (
	// DefaultDedupeWindow keeps an applied event id 35 days: longer than any source may
	// redeliver a tracking message (Service Bus keeps a dead-lettered message 14 days by
	// default and an operator may resubmit it; a domain app's replay of its own log is bounded
	// to 30 days), so every redelivery still finds its id and is a no-op. The campaign
	// dedupe keys use the same window (docs/campaigns.md#retention).
	DefaultDedupeWindow = 35 * 24 * time.Hour
	// MinDedupeWindow is the least window accepted: 1 day (the bus's own redelivery and
	// lock-renewal horizon is minutes; a shorter window is a mistake, not a choice).
	MinDedupeWindow = 24 * time.Hour
	// DefaultPurgeEvery is how often a ProcessedPurger does its work at most.
	DefaultPurgeEvery = time.Hour
)

// ProcessedPurger deletes AttributeProcessedEvent rows older than Window in bounded
// batches. It runs on the OutboxRelay timer, at most once per Every per process (the timer
// fires every few seconds; retention needs no more): a run deletes at most
// BatchSize × MaxBatches rows and what is left waits for the next run. Deleting is
// idempotent, so two instances purging at once only share the work.
//
// State: idle → (Every elapsed) purging → idle, the instant of the last run kept in memory.
type ProcessedPurger struct {
	Store store.AttributeStore
	Clock automation.Clock
	// Window is how long an applied event id is remembered (0: DefaultDedupeWindow; under
	// MinDedupeWindow refused). It must be longer than any source may redeliver an event: an
	// id deleted earlier lets a redelivery apply twice.
	Window     time.Duration
	BatchSize  int           // rows per delete (0: 500; at most store.MaxBatch)
	MaxBatches int           // deletes per run (0: 10)
	Every      time.Duration // least time between runs (0: DefaultPurgeEvery; <0: every call)

	mu      sync.Mutex // one run at a time; guards lastRun
	lastRun time.Time
}

// PurgeResult counts one RunOnce: rows deleted, deletes issued, and whether the run was
// skipped because the last one was less than Every ago.
type PurgeResult struct {
	Deleted int  `json:"deleted"`
	Batches int  `json:"batches"`
	Skipped bool `json:"skipped,omitempty"`
}

// RunOnce deletes ledger rows processed before now−Window, batch by batch, until a batch
// comes back short or MaxBatches ran. Errors: a missing Store or Clock, a Window under
// MinDedupeWindow (nothing deleted), the store's (what earlier batches deleted stays
// deleted; the next run goes on).
func (p *ProcessedPurger) RunOnce(ctx context.Context) (PurgeResult, error) {
	var res PurgeResult
	if p.Store == nil || p.Clock == nil {
		return res, errors.New("attribute.ProcessedPurger: Store and Clock are required")
	}
	window := p.Window
	if window == 0 {
		window = DefaultDedupeWindow
	}
	if window < MinDedupeWindow {
		return res, fmt.Errorf("attribute.ProcessedPurger: the dedupe window %v is under %v", window, MinDedupeWindow)
	}
	every := p.Every
	if every == 0 {
		every = DefaultPurgeEvery
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.Clock.Now().UTC()
	if every > 0 && !p.lastRun.IsZero() && now.Sub(p.lastRun) < every {
		res.Skipped = true
		return res, nil
	}
	p.lastRun = now
	batch, rounds := p.BatchSize, p.MaxBatches
	if batch <= 0 {
		batch = 500
	}
	batch = min(batch, store.MaxBatch)
	if rounds <= 0 {
		rounds = 10
	}
	for res.Batches < rounds {
		n, err := p.Store.AttributeProcessedPurge(ctx, now.Add(-window), batch)
		res.Batches++
		res.Deleted += n
		if err != nil || n < batch {
			return res, err
		}
	}
	return res, nil
}
