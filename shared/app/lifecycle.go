package app

import (
	"log/slog"

	"github.com/automation-platform/automation/shared/api/settingsapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/handler"
	"github.com/automation-platform/automation/shared/reminder"
)

// wireLifecycle adds the reminder lifecycle to the Functions router (so both the custom
// handler and serve have it): the settings API routes (BusinessUnitsApi,
// ReminderSettingsApi) and the Reconciliation timer function, configured from cfg.
func (r *Runtime) wireLifecycle(cfg config.Config, log *slog.Logger) {
	rc := reminder.ReconcileConfig{BatchSize: cfg.ReconcileBatchSize, MaxBatches: cfg.ReconcileMaxBatches,
		DueDays: cfg.ReconcileDueDays, IdempotencyRetention: cfg.IdempotencyRetention}
	if sc := automation.ParseScope(cfg.ReconcileBusinessUnits); !sc.All() {
		rc.BusinessUnits = &sc
	}
	if len(cfg.SourceURLs) > 0 {
		rc.Listers = map[string]reminder.SourceLister{}
		for typ, u := range cfg.SourceURLs {
			rc.Listers[typ] = reminder.HTTPSourceLister{URL: u}
		}
	}
	r.Reconciler.Config = rc
	settingsapi.Register(r.Functions, r.API, r.Admin)
	handler.RegisterReconciliation(r.Functions, r.Reconciler, log)
}
