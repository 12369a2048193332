package campaign

import (
	"context"
	"fmt"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
)

// batchPrelude is the start every batch handler of this package shares. A batch of more
// than store.MaxBatch messages is refused whole: each errs[i] is set to one error naming
// who and what ("campaign worker: a batch of 120 commands, at most 100") and ok is false.
// Otherwise ctxs[i] is message i's context: ctx carrying traceParents[i] (its W3C
// traceparent, optional) when telemetry is on, else ctx. errs has one slot per message.
func batchPrelude(ctx context.Context, errs []error, traceParents []string, who, what string) (ctxs []context.Context, ok bool) {
	if !refuseOversizedBatch(errs, who, what) {
		return nil, false
	}
	ctxs = make([]context.Context, len(errs))
	for i := range ctxs {
		ctxs[i] = ctx
		if i < len(traceParents) && traceParents[i] != "" && telemetry.Enabled() {
			ctxs[i] = telemetry.Extract(ctx, traceParents[i], "")
		}
	}
	return ctxs, true
}

// refuseOversizedBatch is batchPrelude's refusal alone, for a batch that carries no trace
// context: it reports whether the batch of len(errs) messages is within store.MaxBatch.
func refuseOversizedBatch(errs []error, who, what string) (ok bool) {
	if len(errs) <= store.MaxBatch {
		return true
	}
	err := fmt.Errorf("%s: a batch of %d %s, at most %d", who, len(errs), what, store.MaxBatch)
	for i := range errs {
		errs[i] = err
	}
	return false
}
