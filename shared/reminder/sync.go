package reminder

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
)

// syncOptions narrow what syncSource touches.
type syncOptions struct {
	// OnlySetting, when set, limits deactivations and ensures to rows of that setting (a
	// settings change touches its own rows only).
	OnlySetting string
	// ReadOnlyEdges evaluates FalseToTrue levels from the stored edge state without
	// recording a new crossing (used when no new source revision is being applied).
	ReadOnlyEdges bool
}

// syncResult counts what syncSource did.
type syncResult struct {
	Ensured     map[automation.EnsureAction]int
	Deactivated int
}

// want is the computed state of one source under its settings.
type want struct {
	candidates []automation.Candidate
	evals      map[string]thresholdEval // by setting guid (ThresholdCondition settings)
}

// activeSettings yields the settings a source's rows come from, in order: its active
// settings, none at all for a deleted or inactive source. validateSource and wanted walk the
// same ones, so what is validated is what is computed.
func activeSettings(src Source, settings []Setting) iter.Seq[Setting] {
	return func(yield func(Setting) bool) {
		if !src.Active() {
			return
		}
		for _, set := range settings {
			if set.Active() && !yield(set) {
				return
			}
		}
	}
}

// validateSource computes everything that can fail on bad input, without side effects, so a
// bad event is rejected before anything is stored.
func validateSource(settings []Setting, src Source, z Zone, now time.Time) error {
	today := localtime.DateOf(now, z.Loc)
	for set := range activeSettings(src, settings) {
		switch set.TriggerType {
		case automation.TriggerThresholdCondition:
			if _, err := evalThreshold(set, src.Data); err != nil {
				return err
			}
		default:
			if _, err := DateOccurrences(set, src, z, today, now, true); err != nil {
				return err
			}
			if _, _, _, err := overdueCandidate(set, src, z, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// wanted computes the rows the source's current state wants under its active settings
// (docs/architecture.md#event-flow trigger and immediate-notification providers). existing are the source's rows by key.
func (s *Service) wanted(ctx context.Context, settings []Setting, src Source, z Zone, now time.Time, existing map[string]automation.SchedulerRow, opt syncOptions) (want, error) {
	w := want{evals: map[string]thresholdEval{}}
	today := localtime.DateOf(now, z.Loc)
	for set := range activeSettings(src, settings) {
		switch set.TriggerType {
		case automation.TriggerThresholdCondition:
			ev, err := evalThreshold(set, src.Data)
			if err != nil {
				return w, err
			}
			w.evals[set.Guid] = ev
			edges := s.edgeApplier(set, src, now, opt.ReadOnlyEdges)
			cs, err := thresholdCandidates(ctx, set, src, z, ev, now, edges, existing)
			if err != nil {
				return w, err
			}
			w.candidates = append(w.candidates, cs...)
		default:
			occ, err := DateOccurrences(set, src, z, today, now, true)
			if err != nil {
				return w, err
			}
			for _, o := range occ {
				w.candidates = append(w.candidates, o.Candidate)
			}
			c, _, ok, err := overdueCandidate(set, src, z, now)
			if err != nil {
				return w, err
			}
			if ok && wantOverdue(c, occ, existing) {
				if r, found := existing[c.SchedulerKey]; found && r.Status == automation.StatusPending {
					c.ScheduledOn, c.ScheduledLocalDate, c.ScheduledLocalTime = r.ScheduledOn, r.ScheduledLocalDate, r.ScheduledLocalTime
				}
				w.candidates = append(w.candidates, c)
			}
		}
	}
	return w, nil
}

// edgeApplier records FalseToTrue crossings at the source's revision (idempotent under
// redelivery: the store ignores a revision it has seen). readOnly reads the stored state; it
// answers 0 (no edge) for a level met now but not in the stored state.
func (s *Service) edgeApplier(set Setting, src Source, now time.Time, readOnly bool) EdgeApplier {
	return func(ctx context.Context, lvl string, met bool) (int64, error) {
		if readOnly {
			e, err := s.Store.ThresholdEdgeGet(ctx, set.Guid, src.EntityType, src.EntityGuid, lvl)
			if errors.Is(err, store.ErrNotFound) {
				// Never evaluated for this level (a level added by an edit): record it now
				// at the source's current revision.
				e, err = s.Store.ThresholdEdgeApply(ctx, store.ThresholdEdgeApplyParams{SettingGuid: set.Guid, SourceEntityType: src.EntityType,
					SourceEntityGuid: src.EntityGuid, Level: lvl, IsMet: met, Revision: src.Revision, Now: now})
			}
			if err != nil {
				return 0, err
			}
			if met && !e.IsMet {
				// Met now, not at the stored revision (the setting's metric changed): no
				// edge is counted without a new revision; the next one counts it.
				return 0, nil
			}
			return e.EdgeCount, nil
		}
		e, err := s.Store.ThresholdEdgeApply(ctx, store.ThresholdEdgeApplyParams{SettingGuid: set.Guid, SourceEntityType: src.EntityType,
			SourceEntityGuid: src.EntityGuid, Level: lvl, IsMet: met, Revision: src.Revision, Now: now})
		if err != nil {
			return 0, err
		}
		return e.EdgeCount, nil
	}
}

// syncSource brings the rows of one source in line with its current state (docs/architecture.md#event-flow): the
// same computation for an event, a settings change and a reconciliation sweep, so all
// three produce the same keys. Rows no longer wanted are deactivated first, with the reason
// that explains why; then the wanted rows are ensured (automation.DecideEnsure). Idempotent.
func (s *Service) syncSource(ctx context.Context, settings []Setting, src Source, z Zone, now time.Time, opt syncOptions) (syncResult, error) {
	res := syncResult{Ensured: map[automation.EnsureAction]int{}}
	rows, err := s.Store.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: src.EntityType, SourceEntityGuid: src.EntityGuid, Limit: maxRowsPerSource})
	if err != nil {
		return res, err
	}
	existing := make(map[string]automation.SchedulerRow, len(rows))
	for _, r := range rows {
		existing[r.SchedulerKey] = r
	}
	w, err := s.wanted(ctx, settings, src, z, now, existing, opt)
	if err != nil {
		return res, err
	}
	if opt.OnlySetting != "" {
		kept := w.candidates[:0]
		for _, c := range w.candidates {
			if c.SettingGuid == opt.OnlySetting {
				kept = append(kept, c)
			}
		}
		w.candidates = kept
	}
	// Deactivate first (docs/architecture.md#event-flow): rows of this source that the current state no longer wants.
	if res.Deactivated, err = s.invalidate(ctx, src, z, settings, w, rows, now, opt); err != nil {
		return res, err
	}
	for start := 0; start < len(w.candidates); start += store.MaxBatch {
		end := min(start+store.MaxBatch, len(w.candidates))
		results, err := s.Store.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: w.candidates[start:end]})
		if err != nil {
			return res, err
		}
		for _, r := range results {
			res.Ensured[r.Action]++
			if r.Action == automation.EnsureConflict {
				s.logger().WarnContext(ctx, "scheduler key conflict: row put on support hold", "schedulerKey", r.Row.SchedulerKey,
					"businessUnitId", z.BusinessUnitID, "step", "ensure", "errorCode", string(automation.ReasonInputHashConflict))
			}
		}
	}
	return res, nil
}

// invalidate deactivates this source's Pending/Failed reminder rows whose keys are not
// wanted any more, with the reason that explains why. Rows of settings of other business
// units are left alone.
func (s *Service) invalidate(ctx context.Context, src Source, z Zone, settings []Setting, w want, rows []automation.SchedulerRow, now time.Time, opt syncOptions) (int, error) {
	wanted := make(map[string]bool, len(w.candidates))
	for _, c := range w.candidates {
		wanted[c.SchedulerKey] = true
	}
	byGuid := make(map[string]*Setting, len(settings))
	for i := range settings {
		byGuid[settings[i].Guid] = &settings[i]
	}
	n := 0
	for _, r := range rows {
		if r.AutomationType != automation.TypeReminder || wanted[r.SchedulerKey] || supportRetryOfWanted(r.SchedulerKey, w.candidates) {
			continue
		}
		if opt.OnlySetting != "" && r.SettingGuid != opt.OnlySetting {
			continue
		}
		if r.Status != automation.StatusPending && r.Status != automation.StatusFailed {
			continue
		}
		reason := deactivationReason(src, z, r, byGuid[r.SettingGuid], w)
		err := s.Store.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r.ID, Token: r.Version, Now: now, Reason: reason})
		if err != nil {
			// ErrLeaseLost: the row changed since we read it (claimed by a poller, or another
			// event); the event is retried and the executor's revalidation covers the claim.
			return n, fmt.Errorf("deactivate %s: %w", r.SchedulerKey, err)
		}
		n++
	}
	return n, nil
}

// deactivationReason explains why a row of src is no longer wanted.
func deactivationReason(src Source, z Zone, row automation.SchedulerRow, set *Setting, w want) automation.ReasonCode {
	switch {
	case !src.Active():
		return automation.ReasonSourceNoLongerValid
	case row.BusinessUnitID != src.BusinessUnitID:
		return automation.ReasonSuperseded // the entity moved to another business unit
	case set == nil || !set.Active():
		return automation.ReasonReminderSettingInactive
	case set.TriggerType == automation.TriggerThresholdCondition && row.TriggerType == automation.TriggerThresholdCondition:
		return thresholdRowReason(*set, src, z, w.evals[set.Guid], row)
	default:
		return automation.ReasonSuperseded
	}
}

// supportRetryOfWanted reports whether key is a support retry (automation.SupportRetryKey)
// of an occurrence still wanted: an operator's retry survives events that keep its
// occurrence, and is deactivated with it when the occurrence goes.
func supportRetryOfWanted(key string, want []automation.Candidate) bool {
	if _, ok := automation.SupportRetryVersion(key); !ok {
		return false
	}
	for _, c := range want {
		if automation.IsSupportRetryOf(key, c.SchedulerKey) {
			return true
		}
	}
	return false
}
