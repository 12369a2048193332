package reminder

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// IdempotencyPurger is the maintenance service that deletes old Idempotency-Key records
// (docs/api-conventions.md#idempotency-key): a record only has to outlive the retries of its
// request, so records created more than Config.Retention ago go, in bounded deletes. It keeps
// no position: what a failed or unfinished pass leaves is simply still older than the
// retention at the next run.
type IdempotencyPurger struct {
	Store interface {
		IdempotencyPurge(ctx context.Context, before time.Time, limit int) (int, error)
	}
	Config IdempotencyPurgeConfig
	Clock  automation.Clock

	testSignals testSignals
}

// Default retention of Idempotency-Key records.
const defaultIdempotencyRetention = 7 * 24 * time.Hour

// IdempotencyPurgeConfig tunes an IdempotencyPurger; a zero field takes its default.
type IdempotencyPurgeConfig struct {
	// Retention: records created before now − Retention are deleted (an in-progress record
	// whose lease is still live then is kept, store.IdempotencyStore); default 7 days.
	Retention time.Duration
	// BatchSize is the records deleted per statement: 1..store.MaxBatch, default
	// store.MaxBatch.
	BatchSize int
	// MaxBatches bounds the deletes of one pass: at least 1, default 10.
	MaxBatches int
}

// Validate refuses a negative retention and a negative or too large batch field (zero means
// the default).
func (c IdempotencyPurgeConfig) Validate() error {
	var err error
	if c.Retention < 0 {
		err = fmt.Errorf("IdempotencyPurgeConfig.Retention %v is negative (0 takes the default %v)", c.Retention, defaultIdempotencyRetention)
	}
	return errors.Join(err, checkBatchSize("IdempotencyPurgeConfig", c.BatchSize), checkMaxBatches("IdempotencyPurgeConfig", c.MaxBatches))
}

func (c IdempotencyPurgeConfig) withDefaults() IdempotencyPurgeConfig {
	if c.Retention == 0 {
		c.Retention = defaultIdempotencyRetention
	}
	c.BatchSize = orDefault(c.BatchSize, store.MaxBatch)
	c.MaxBatches = orDefault(c.MaxBatches, 10)
	return c
}

// IdempotencyPurgeResult counts one pass.
type IdempotencyPurgeResult struct {
	Batches  int  `json:"batches"`  // delete statements run (a failed one included)
	Purged   int  `json:"purged"`   // records deleted
	Complete bool `json:"complete"` // the last delete found fewer than BatchSize records
}

// runOnce deletes the records older than the retention, at most Config.MaxBatches deletes
// of Config.BatchSize records; it stops at the first failed delete.
func (p *IdempotencyPurger) runOnce(ctx context.Context) (IdempotencyPurgeResult, error) {
	var res IdempotencyPurgeResult
	if err := preflight(p.Config, p.Store != nil && p.Clock != nil, "IdempotencyPurger: Store and Clock are required"); err != nil {
		return res, err
	}
	cfg := p.Config.withDefaults()
	before := p.Clock.Now().UTC().Add(-cfg.Retention)
	for res.Batches < cfg.MaxBatches {
		n, err := p.Store.IdempotencyPurge(ctx, before, cfg.BatchSize)
		res.Batches++
		res.Purged += n
		if err != nil {
			return res, err
		}
		p.testSignals.saved("idempotency")
		if n < cfg.BatchSize {
			res.Complete = true
			break
		}
	}
	return res, nil
}
