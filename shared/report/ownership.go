package report

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// OwnershipAnswer is what the old scheduler gets back from an acquire (docs/architecture.md#one-owner-guard):
// Acquired=true means it owns the run and may create its delivery artifacts, and must not
// otherwise. Reason says why not: "OwnedByAutomationScheduler" or "GuardedByRollout".
type OwnershipAnswer struct {
	Acquired  bool                   `json:"acquired"`
	Outcome   store.OwnershipOutcome `json:"outcome,omitempty"`
	Reason    string                 `json:"reason,omitempty"`
	Mode      EffectiveMode          `json:"rollout"`
	Ownership *store.ReportOwnership `json:"ownership,omitempty"`
}

// Reasons an old-scheduler acquire is refused.
const (
	RefusedOwnedByAutomation = "OwnedByAutomationScheduler"
	RefusedGuardedByRollout  = "GuardedByRollout"
)

// oldKey checks a key the old scheduler names: a canonical scheduled or manual key of a
// subscription visible to scope.
func (s *Service) oldKey(ctx context.Context, scope automation.Scope, key string) (Subscription, ParsedKey, error) {
	p, err := ParseKey(key)
	if err != nil {
		return Subscription{}, p, err
	}
	if p.Kind == store.ReportRunSupportRetry {
		return Subscription{}, p, automation.Invalid("schedulerKey", "support-retry keys belong to the automation scheduler")
	}
	sub, err := s.load(ctx, scope, p.SubscriptionGuid, true)
	return sub, p, err
}

// OldSchedulerAcquire is the old scheduler asking to own a run before it creates any
// delivery artifact. It keeps a run it already owns (a retry gets its ownership back
// whatever the mode); otherwise the rollout mode decides whether it may try (cutover guards
// it out), and then the first owner wins. Nothing is stored when refused. An acquire that
// writes records operator (the caller's principal first) in OperatorAudit, in its
// transaction (docs/security.md#audit); a reacquire or a refusal records nothing.
func (s *Service) OldSchedulerAcquire(ctx context.Context, scope automation.Scope, key, operator string) (OwnershipAnswer, error) {
	sub, p, err := s.oldKey(ctx, scope, key)
	if err != nil {
		return OwnershipAnswer{}, err
	}
	mode, err := s.Mode(ctx, sub)
	if err != nil {
		return OwnershipAnswer{}, err
	}
	ans := OwnershipAnswer{Mode: mode}
	cur, err := s.c.Store.ReportOwnershipGet(ctx, key)
	switch {
	case err == nil && cur.OwnerType == store.OwnerOldScheduler && cur.Status != store.OwnershipCancelled:
		ans.Acquired, ans.Outcome, ans.Ownership = true, store.OwnershipReacquired, &cur
		return ans, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return ans, err
	}
	if !mode.Mode.OldSchedulerMay(p.Kind) || sub.Status == store.ReportSubscriptionDeleted {
		ans.Reason = RefusedGuardedByRollout
		if err == nil {
			ans.Ownership = &cur
		}
		return ans, nil
	}
	now := s.c.Clock.Now().UTC()
	res, err := s.c.Store.ReportOwnershipAcquire(ctx, store.ReportOwnershipAcquireParams{SchedulerKey: key, SubscriptionGuid: sub.Guid,
		RunKind: p.Kind, Owner: store.OwnerOldScheduler, Now: now,
		Audit: &store.OperatorAudit{At: now, BusinessUnitID: sub.BusinessUnitID, Action: store.AuditOwnershipAcquire, Target: key, Operator: store.AuditOperator(operator)}})
	if err != nil {
		return ans, err
	}
	ans.Outcome, ans.Ownership = res.Outcome, &res.Ownership
	if res.Outcome == store.OwnershipConflict {
		ans.Reason = RefusedOwnedByAutomation
	} else {
		ans.Acquired = true
	}
	return ans, nil
}

// OldSchedulerCheck returns the ownership of a key (404 when nobody acquired it).
func (s *Service) OldSchedulerCheck(ctx context.Context, scope automation.Scope, key string) (OwnershipAnswer, error) {
	sub, _, err := s.oldKey(ctx, scope, key)
	if err != nil {
		return OwnershipAnswer{}, err
	}
	mode, err := s.Mode(ctx, sub)
	if err != nil {
		return OwnershipAnswer{}, err
	}
	own, err := s.c.Store.ReportOwnershipGet(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return OwnershipAnswer{}, notFound("ownership of " + key)
	}
	if err != nil {
		return OwnershipAnswer{}, err
	}
	return OwnershipAnswer{Acquired: own.OwnerType == store.OwnerOldScheduler && own.Status != store.OwnershipCancelled,
		Mode: mode, Ownership: &own}, nil
}

// OldSchedulerFence is the old scheduler's later write on a run it owns.
type OldSchedulerFence struct {
	SchedulerKey string          `json:"schedulerKey"`
	OwnerVersion int64           `json:"ownerVersion"`
	Coordinates  json.RawMessage `json:"coordinates,omitempty"` // delivery-created only: where its delivery is (JSON)
}

// OldSchedulerDeliveryCreated records that the old scheduler created the run's delivery
// (final: the run can never be released or taken over). 409 when it no longer owns the run.
func (s *Service) OldSchedulerDeliveryCreated(ctx context.Context, scope automation.Scope, f OldSchedulerFence) (store.ReportOwnership, error) {
	if _, _, err := s.oldKey(ctx, scope, f.SchedulerKey); err != nil {
		return store.ReportOwnership{}, err
	}
	var obj map[string]any
	if len(f.Coordinates) == 0 || json.Unmarshal(f.Coordinates, &obj) != nil || obj == nil || len(f.Coordinates) > 16<<10 {
		return store.ReportOwnership{}, automation.Invalid("coordinates", "must be a JSON object (at most 16 KiB) saying where the delivery is")
	}
	own, err := s.c.Store.ReportOwnershipMarkDeliveryCreated(ctx, store.ReportOwnershipFenceParams{SchedulerKey: f.SchedulerKey,
		Owner: store.OwnerOldScheduler, OwnerVersion: f.OwnerVersion, CoordinatesJSON: string(f.Coordinates), Now: s.c.Clock.Now()})
	return own, fenceError(f.SchedulerKey, err)
}

// OldSchedulerRelease gives a run the old scheduler owns back before any delivery (409 once
// a delivery was created, or when it does not own the run).
func (s *Service) OldSchedulerRelease(ctx context.Context, scope automation.Scope, f OldSchedulerFence) (store.ReportOwnership, error) {
	if _, _, err := s.oldKey(ctx, scope, f.SchedulerKey); err != nil {
		return store.ReportOwnership{}, err
	}
	own, err := s.c.Store.ReportOwnershipRelease(ctx, store.ReportOwnershipFenceParams{SchedulerKey: f.SchedulerKey,
		Owner: store.OwnerOldScheduler, OwnerVersion: f.OwnerVersion, Now: s.c.Clock.Now()})
	return own, fenceError(f.SchedulerKey, err)
}

// fenceError maps the store's fencing errors to API errors (a new error, so the HTTP layer
// does not read ErrLeaseLost as a stale If-Match).
func fenceError(key string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return notFound("ownership of " + key)
	case errors.Is(err, store.ErrLeaseLost):
		return conflict("you do not own %s at that ownerVersion (released, taken over, or other coordinates recorded)", key)
	case errors.Is(err, store.ErrConflict):
		return conflict("a delivery was created for %s; its ownership can no longer be released", key)
	}
	return err
}

func sortStrings(s []string) { sort.Strings(s) }
