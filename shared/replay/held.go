package replay

import (
	"context"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// HeldLine is a "held" output line: a scheduler row went on support hold at this tick (its
// retries ran out, or a handler failed permanently, e.g. a report run whose key the old
// scheduler owns). Nothing more happens to it until support acts (docs/architecture.md#support-actions).
type HeldLine struct {
	Kind           string `json:"kind"` // "held"
	At             string `json:"at"`   // tick instant, RFC 3339 UTC
	SchedulerKey   string `json:"schedulerKey"`
	BusinessUnitID string `json:"businessUnitId"`
	ReasonCode     string `json:"reasonCode"` // the row's FailureReasonCode
}

// reportHeld writes a "held" line for every row on support hold not reported yet, oldest
// first. Held rows are few by nature; the look-up is bounded to one batch per tick.
func (r *runner) reportHeld(ctx context.Context, at string) error {
	on := true
	rows, err := r.e.Store.SupportSchedulerFind(ctx, store.SupportFindParams{Scope: automation.AllBusinessUnits(), OnHold: &on, Limit: store.MaxBatch})
	if err != nil {
		return err
	}
	if r.held == nil {
		r.held = map[string]bool{}
	}
	for i := len(rows) - 1; i >= 0; i-- { // newest first → oldest first
		row := rows[i]
		if r.held[row.SchedulerKey] {
			continue
		}
		r.held[row.SchedulerKey] = true
		if err := r.enc.Encode(HeldLine{Kind: "held", At: at, SchedulerKey: row.SchedulerKey,
			BusinessUnitID: row.BusinessUnitID, ReasonCode: string(row.FailureReasonCode)}); err != nil {
			return err
		}
	}
	return nil
}
