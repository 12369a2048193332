package handler

import (
	"context"
	"log/slog"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/topology"
)

// RegisterReconciliation adds the Reconciliation timer function: one bounded run of every
// sweep per invocation (reminder.Reconciler.RunOnce; its ReturnValue is the
// reminder.ReconcileResult, one ServiceReport per maintenance service). A run is idempotent: a timer firing
// twice (lost singleton lease, restart) repeats no work that was saved. A store or lister
// failure answers non-2xx (the next occurrence retries from the saved positions).
func RegisterReconciliation(r *funchost.Router, rec *reminder.Reconciler, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r.Register(topology.Reconciliation, func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		if _, err := inv.Timer("timer"); err != nil {
			return funchost.Result{}, automation.Permanent(err)
		}
		res, err := rec.RunOnce(ctx)
		if err != nil {
			log.Error("reconciliation failed; the next run resumes from the saved positions", "function", inv.FunctionName,
				"invocationId", inv.InvocationID, "step", "reconcile", "error", err)
			return funchost.Result{}, err
		}
		return ok(res)
	})
}
