package reminder

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// Each maintenance service's config refuses a negative or too large batch field and its own
// bad fields (zero means the default); the same table for all four.
func TestMaintenanceConfigValidate(t *testing.T) {
	t.Parallel()
	type validator interface{ Validate() error }
	for _, c := range []struct {
		cfg validator
		ok  bool
	}{
		{SettingsPropagatorConfig{}, true},
		{SettingsPropagatorConfig{BatchSize: store.MaxBatch, MaxBatches: 1}, true},
		{SettingsPropagatorConfig{BatchSize: -1}, false},
		{SettingsPropagatorConfig{BatchSize: store.MaxBatch + 1}, false},
		{SettingsPropagatorConfig{MaxBatches: -1}, false},

		{TZDataResyncConfig{}, true},
		{TZDataResyncConfig{BatchSize: store.MaxBatch, MaxBatches: 1}, true},
		{TZDataResyncConfig{BatchSize: -1}, false},
		{TZDataResyncConfig{BatchSize: store.MaxBatch + 1}, false},
		{TZDataResyncConfig{MaxBatches: -1}, false},

		{SourceSweepConfig{}, true},
		{SourceSweepConfig{BatchSize: store.MaxBatch, MaxBatches: 1, DueDays: 1, Listers: map[string]SourceLister{"PoliceVetting": SnapshotLister{}}}, true},
		{SourceSweepConfig{BatchSize: -1}, false},
		{SourceSweepConfig{BatchSize: store.MaxBatch + 1}, false},
		{SourceSweepConfig{MaxBatches: -1}, false},
		{SourceSweepConfig{DueDays: -1}, false},
		{SourceSweepConfig{Listers: map[string]SourceLister{"PoliceVetting": nil}}, false},

		{IdempotencyPurgeConfig{}, true},
		{IdempotencyPurgeConfig{Retention: time.Hour, BatchSize: store.MaxBatch, MaxBatches: 1}, true},
		{IdempotencyPurgeConfig{Retention: -time.Hour}, false},
		{IdempotencyPurgeConfig{BatchSize: -1}, false},
		{IdempotencyPurgeConfig{BatchSize: store.MaxBatch + 1}, false},
		{IdempotencyPurgeConfig{MaxBatches: -1}, false},
	} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%T %+v: Validate() = %v, want ok=%v", c.cfg, c.cfg, err, c.ok)
		}
	}
}

// runOnce of each maintenance service refuses a bad config, and a missing Clock, before
// touching anything.
func TestMaintenanceRunOnceRefusesBadSetUp(t *testing.T) {
	t.Parallel()
	f := newMaintFixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"SettingsPropagator with a bad config", func() error {
			_, err := (&SettingsPropagator{Service: f.svc, Clock: f.clock, Config: SettingsPropagatorConfig{BatchSize: -1}}).runOnce(ctx)
			return err
		}},
		{"SettingsPropagator without a Clock", func() error { _, err := (&SettingsPropagator{Service: f.svc}).runOnce(ctx); return err }},
		{"TZDataResyncer with a bad config", func() error {
			_, err := (&TZDataResyncer{Store: f.st, Clock: f.clock, Config: TZDataResyncConfig{MaxBatches: -1}}).runOnce(ctx)
			return err
		}},
		{"TZDataResyncer without a Clock", func() error { _, err := (&TZDataResyncer{Store: f.st}).runOnce(ctx); return err }},
		{"SourceSweeper with a bad config", func() error {
			_, err := (&SourceSweeper{Service: f.svc, Clock: f.clock, Config: SourceSweepConfig{DueDays: -1}}).runOnce(ctx)
			return err
		}},
		{"SourceSweeper without a Clock", func() error { _, err := (&SourceSweeper{Service: f.svc}).runOnce(ctx); return err }},
		{"IdempotencyPurger with a bad config", func() error {
			_, err := (&IdempotencyPurger{Store: f.st, Clock: f.clock, Config: IdempotencyPurgeConfig{Retention: -1}}).runOnce(ctx)
			return err
		}},
		{"IdempotencyPurger without a Clock", func() error { _, err := (&IdempotencyPurger{Store: f.st}).runOnce(ctx); return err }},
	} {
		if err := c.run(); err == nil {
			t.Errorf("%s: runOnce ran", c.name)
		}
	}
}
