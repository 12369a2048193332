package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

var _ store.ReportStore = (*Store)(nil)

// --- subscriptions ------------------------------------------------------------------

func (s *Store) scanReportSubscription(r rowScanner) (store.ReportSubscriptionRecord, error) {
	var rec store.ReportSubscriptionRecord
	var status string
	err := r.Scan(&rec.Guid, &rec.BusinessUnitID, &rec.ReportType, &status, &rec.Body, &rec.Version,
		s.t(&rec.CreatedOn), s.t(&rec.UpdatedOn))
	rec.Status = store.ReportSubscriptionStatus(status)
	return rec, err
}

// ReportSubscriptionInsert implements store.ReportStore.
func (s *Store) ReportSubscriptionInsert(ctx context.Context, r store.ReportSubscriptionRecord) (store.ReportSubscriptionRecord, error) {
	if r.Guid == "" || r.BusinessUnitID == "" || r.Status == "" {
		return r, errors.New("ReportSubscriptionInsert: Guid, BusinessUnitID and Status are required")
	}
	n, err := s.execCount(ctx, nil, "ReportSubscriptionInsert",
		sql.Named("Guid", r.Guid), sql.Named("BusinessUnitId", r.BusinessUnitID), sql.Named("ReportType", r.ReportType),
		sql.Named("Status", string(r.Status)), sql.Named("Body", r.Body), sql.Named("Now", s.tm(r.CreatedOn)), sql.Named("UpdatedBy", nstr(r.UpdatedBy)))
	if err != nil {
		return r, err
	}
	if n != 1 {
		return r, fmt.Errorf("%s ReportSubscriptionInsert %s: %w", s.d.Name, r.Guid, store.ErrConflict)
	}
	return s.ReportSubscriptionGet(ctx, r.Guid)
}

// ReportSubscriptionUpdate implements store.ReportStore.
func (s *Store) ReportSubscriptionUpdate(ctx context.Context, p store.ReportSubscriptionUpdateParams) (store.ReportSubscriptionRecord, error) {
	r := p.Record
	var out store.ReportSubscriptionRecord
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := s.execCount(ctx, tx, "ReportSubscriptionUpdate",
			sql.Named("ReportType", r.ReportType), sql.Named("Status", string(r.Status)), sql.Named("Body", r.Body),
			sql.Named("ExpectedVersion", p.ExpectedVersion), sql.Named("Now", s.tm(r.UpdatedOn)), sql.Named("Guid", r.Guid),
			sql.Named("UpdatedBy", nstr(r.UpdatedBy)))
		if err != nil {
			return err
		}
		out, err = s.scanReportSubscription(s.queryRow(ctx, tx, "ReportSubscriptionGet", sql.Named("Guid", r.Guid)))
		if err = s.oneErr("ReportSubscriptionGet", err); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%s ReportSubscriptionUpdate %s: %w", s.d.Name, r.Guid, store.ErrLeaseLost)
		}
		return nil
	})
	return out, err
}

// ReportSubscriptionGet implements store.ReportStore.
func (s *Store) ReportSubscriptionGet(ctx context.Context, guid string) (store.ReportSubscriptionRecord, error) {
	rec, err := s.scanReportSubscription(s.queryRow(ctx, nil, "ReportSubscriptionGet", sql.Named("Guid", guid)))
	return rec, s.oneErr("ReportSubscriptionGet", err)
}

// ReportSubscriptionList implements store.ReportStore.
func (s *Store) ReportSubscriptionList(ctx context.Context, p store.ReportSubscriptionListParams) ([]store.ReportSubscriptionRecord, error) {
	return queryPage(ctx, s, "ReportSubscriptionList", p.Limit, s.scanReportSubscription,
		sql.Named("AfterGuid", p.AfterGuid), sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("Limit", p.Limit))
}

// --- run registry -------------------------------------------------------------------

func (s *Store) scanReportRun(r rowScanner) (store.ReportRunRecord, error) {
	var rec store.ReportRunRecord
	var kind string
	err := r.Scan(&rec.ID, &rec.RunKeyHash, &rec.SchedulerKey, &rec.SubscriptionGuid, &rec.BusinessUnitID, &kind,
		&rec.OwnershipKey, s.t(&rec.PeriodStart), s.t(&rec.PeriodEnd), ns(&rec.RequestedBy), ns(&rec.Reason), s.t(&rec.CreatedOn))
	rec.RunKind = store.ReportRunKind(kind)
	return rec, err
}

// ReportRunRegister implements store.ReportStore.
func (s *Store) ReportRunRegister(ctx context.Context, r store.ReportRunRecord) (store.ReportRunRecord, bool, error) {
	if r.RunKeyHash == "" || r.SchedulerKey == "" || r.SubscriptionGuid == "" || r.OwnershipKey == "" || r.RunKind == "" {
		return r, false, errors.New("ReportRunRegister: RunKeyHash, SchedulerKey, SubscriptionGuid, OwnershipKey and RunKind are required")
	}
	var out store.ReportRunRecord
	var inserted bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := s.execCount(ctx, tx, "ReportRunInsert",
			sql.Named("RunKeyHash", r.RunKeyHash), sql.Named("SchedulerKey", r.SchedulerKey),
			sql.Named("SubscriptionGuid", r.SubscriptionGuid), sql.Named("BusinessUnitId", r.BusinessUnitID),
			sql.Named("RunKind", string(r.RunKind)), sql.Named("OwnershipKey", r.OwnershipKey),
			sql.Named("PeriodStart", s.tm(r.PeriodStart)), sql.Named("PeriodEnd", s.tm(r.PeriodEnd)),
			sql.Named("RequestedBy", nstr(r.RequestedBy)), sql.Named("Reason", nstr(r.Reason)), sql.Named("Now", s.tm(r.CreatedOn)))
		if err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("%s ReportRunRegister: run key hash %s is taken by another key: %w", s.d.Name, r.RunKeyHash, store.ErrConflict)
			}
			return err
		}
		inserted = n == 1
		out, err = s.scanReportRun(s.queryRow(ctx, tx, "ReportRunGetByKey", sql.Named("SchedulerKey", r.SchedulerKey)))
		return s.oneErr("ReportRunGetByKey", err)
	})
	return out, inserted, err
}

// isUniqueViolation recognises a unique-index violation of either dialect by its message
// (SQLite "UNIQUE constraint failed", SQL Server errors 2601/2627 "duplicate key").
func isUniqueViolation(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unique constraint") || strings.Contains(msg, "duplicate key")
}

// ReportRunGetByHash implements store.ReportStore.
func (s *Store) ReportRunGetByHash(ctx context.Context, runKeyHash string) (store.ReportRunRecord, error) {
	rec, err := s.scanReportRun(s.queryRow(ctx, nil, "ReportRunGetByHash", sql.Named("RunKeyHash", runKeyHash)))
	return rec, s.oneErr("ReportRunGetByHash", err)
}

// ReportRunGetByKey implements store.ReportStore.
func (s *Store) ReportRunGetByKey(ctx context.Context, schedulerKey string) (store.ReportRunRecord, error) {
	rec, err := s.scanReportRun(s.queryRow(ctx, nil, "ReportRunGetByKey", sql.Named("SchedulerKey", schedulerKey)))
	return rec, s.oneErr("ReportRunGetByKey", err)
}

// ReportRunList implements store.ReportStore.
func (s *Store) ReportRunList(ctx context.Context, p store.ReportRunListParams) ([]store.ReportRunRecord, error) {
	return queryPage(ctx, s, "ReportRunList", p.Limit, s.scanReportRun,
		sql.Named("SubscriptionGuid", p.SubscriptionGuid), sql.Named("BeforeId", p.BeforeID), sql.Named("Limit", p.Limit))
}

// ReportSchedulerListOpen implements store.ReportStore.
func (s *Store) ReportSchedulerListOpen(ctx context.Context, subscriptionGuid string, limit int) ([]automation.SchedulerRow, error) {
	if err := checkLimit("ReportSchedulerListOpen", limit); err != nil {
		return nil, err
	}
	return s.queryRows(ctx, nil, "ReportSchedulerListOpen", sql.Named("SubscriptionGuid", subscriptionGuid), sql.Named("Limit", limit))
}

// ReportSchedulerListFailed implements store.ReportStore.
func (s *Store) ReportSchedulerListFailed(ctx context.Context, p store.ReportFailedListParams) ([]automation.SchedulerRow, error) {
	if err := checkLimit("ReportSchedulerListFailed", p.Limit); err != nil {
		return nil, err
	}
	return s.queryRows(ctx, nil, "ReportSchedulerListFailed", sql.Named("AfterId", p.AfterID),
		sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("Limit", p.Limit))
}

// --- ownership ----------------------------------------------------------------------

func (s *Store) scanOwnership(r rowScanner) (store.ReportOwnership, error) {
	var o store.ReportOwnership
	var kind, owner, status string
	err := r.Scan(&o.SchedulerKey, &o.SubscriptionGuid, &kind, &owner, &o.OwnerVersion, &status, ns(&o.CoordinatesJSON),
		&o.Version, s.t(&o.CreatedOn), s.t(&o.UpdatedOn))
	o.RunKind, o.OwnerType, o.Status = store.ReportRunKind(kind), store.ReportOwnerType(owner), store.ReportOwnershipStatus(status)
	return o, err
}

func (s *Store) ownershipGet(ctx context.Context, tx *sql.Tx, name, key string) (store.ReportOwnership, error) {
	o, err := s.scanOwnership(s.queryRow(ctx, tx, name, sql.Named("SchedulerKey", key)))
	return o, s.oneErr(name, err)
}

func validOwner(o store.ReportOwnerType) bool {
	return o == store.OwnerOldScheduler || o == store.OwnerAutomationScheduler
}

// ReportOwnershipAcquire implements store.ReportStore (store.DecideOwnership).
func (s *Store) ReportOwnershipAcquire(ctx context.Context, p store.ReportOwnershipAcquireParams) (store.ReportOwnershipAcquireResult, error) {
	if p.SchedulerKey == "" || p.SubscriptionGuid == "" || !validOwner(p.Owner) || p.RunKind == "" {
		return store.ReportOwnershipAcquireResult{}, errors.New("ReportOwnershipAcquire: SchedulerKey, SubscriptionGuid, RunKind and a known Owner are required")
	}
	if err := validAudit(p.Audit); err != nil {
		return store.ReportOwnershipAcquireResult{}, err
	}
	var out store.ReportOwnershipAcquireResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.ReportOwnershipAcquireResult{}
		cur, err := s.ownershipGet(ctx, tx, "ReportOwnershipGetForUpdate", p.SchedulerKey)
		var existing *store.ReportOwnership
		switch {
		case err == nil:
			existing = &cur
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		out.Outcome = store.DecideOwnership(existing, p.Owner)
		switch out.Outcome {
		case store.OwnershipAcquired:
			_, err = s.execCount(ctx, tx, "ReportOwnershipInsert", sql.Named("SchedulerKey", p.SchedulerKey),
				sql.Named("SubscriptionGuid", p.SubscriptionGuid), sql.Named("RunKind", string(p.RunKind)),
				sql.Named("Owner", string(p.Owner)), sql.Named("Now", s.tm(p.Now)))
		case store.OwnershipTakenOver:
			var n int64
			n, err = s.execCount(ctx, tx, "ReportOwnershipTakeOver", sql.Named("Owner", string(p.Owner)),
				sql.Named("RunKind", string(p.RunKind)), sql.Named("Now", s.tm(p.Now)),
				sql.Named("SchedulerKey", p.SchedulerKey), sql.Named("Version", cur.Version))
			if err == nil && n != 1 {
				err = fmt.Errorf("%s ReportOwnershipTakeOver: %w", s.d.Name, store.ErrLeaseLost)
			}
		default: // Reacquired, Conflict: nothing to write
			out.Ownership = cur
			return nil
		}
		if err != nil {
			return err
		}
		if p.Audit != nil {
			if err := s.operatorAuditInsert(ctx, tx, *p.Audit); err != nil {
				return err
			}
		}
		out.Ownership, err = s.ownershipGet(ctx, tx, "ReportOwnershipGet", p.SchedulerKey)
		return err
	})
	return out, err
}

// ReportOwnershipGet implements store.ReportStore.
func (s *Store) ReportOwnershipGet(ctx context.Context, schedulerKey string) (store.ReportOwnership, error) {
	return s.ownershipGet(ctx, nil, "ReportOwnershipGet", schedulerKey)
}

// fenced runs an owner's Version-fenced write (name) and, when it changed nothing, decides
// with the current row whether the write was already done (idempotent: done(cur) true) or
// the caller lost the row.
func (s *Store) fenced(ctx context.Context, name string, p store.ReportOwnershipFenceParams, args []any,
	done func(cur store.ReportOwnership) bool, final error) (store.ReportOwnership, error) {
	if p.SchedulerKey == "" || !validOwner(p.Owner) {
		return store.ReportOwnership{}, fmt.Errorf("%s: SchedulerKey and a known Owner are required", name)
	}
	var out store.ReportOwnership
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := s.execCount(ctx, tx, name, args...)
		if err != nil {
			return err
		}
		out, err = s.ownershipGet(ctx, tx, "ReportOwnershipGet", p.SchedulerKey)
		if err != nil || n == 1 {
			return err
		}
		mine := out.OwnerType == p.Owner && out.OwnerVersion == p.OwnerVersion
		switch {
		case mine && done(out):
			return nil
		case out.Status == store.OwnershipDeliveryCreated && final != nil:
			return fmt.Errorf("%s %s: %w", s.d.Name, name, final)
		default:
			return fmt.Errorf("%s %s: %w", s.d.Name, name, store.ErrLeaseLost)
		}
	})
	return out, err
}

// ReportOwnershipMarkDeliveryCreated implements store.ReportStore.
func (s *Store) ReportOwnershipMarkDeliveryCreated(ctx context.Context, p store.ReportOwnershipFenceParams) (store.ReportOwnership, error) {
	if p.CoordinatesJSON == "" {
		return store.ReportOwnership{}, errors.New("ReportOwnershipMarkDeliveryCreated: CoordinatesJSON is required")
	}
	return s.fenced(ctx, "ReportOwnershipMarkDeliveryCreated", p, []any{
		sql.Named("CoordinatesJson", p.CoordinatesJSON), sql.Named("Now", s.tm(p.Now)),
		sql.Named("SchedulerKey", p.SchedulerKey), sql.Named("Owner", string(p.Owner)), sql.Named("OwnerVersion", p.OwnerVersion),
	}, func(cur store.ReportOwnership) bool {
		return cur.Status == store.OwnershipDeliveryCreated && cur.CoordinatesJSON == p.CoordinatesJSON
	}, nil)
}

// ReportOwnershipRelease implements store.ReportStore.
func (s *Store) ReportOwnershipRelease(ctx context.Context, p store.ReportOwnershipFenceParams) (store.ReportOwnership, error) {
	return s.fenced(ctx, "ReportOwnershipRelease", p, []any{
		sql.Named("Now", s.tm(p.Now)),
		sql.Named("SchedulerKey", p.SchedulerKey), sql.Named("Owner", string(p.Owner)), sql.Named("OwnerVersion", p.OwnerVersion),
	}, func(cur store.ReportOwnership) bool {
		return cur.Status == store.OwnershipCancelled
	}, store.ErrConflict)
}

// ReportOwnershipReleaseAll implements store.ReportStore.
func (s *Store) ReportOwnershipReleaseAll(ctx context.Context, p store.ReportOwnershipReleaseAllParams) (int, error) {
	if err := checkLimit("ReportOwnershipReleaseAll", p.Limit); err != nil {
		return 0, err
	}
	if p.SubscriptionGuid == "" || !validOwner(p.Owner) || len(p.Kinds) == 0 {
		return 0, errors.New("ReportOwnershipReleaseAll: SubscriptionGuid, a known Owner and Kinds are required")
	}
	has := func(k store.ReportRunKind) int { return boolInt(slices.Contains(p.Kinds, k)) }
	n, err := s.execCount(ctx, nil, "ReportOwnershipReleaseAll", sql.Named("Now", s.tm(p.Now)),
		sql.Named("SubscriptionGuid", p.SubscriptionGuid), sql.Named("Owner", string(p.Owner)),
		sql.Named("Scheduled", has(store.ReportRunScheduled)), sql.Named("Manual", has(store.ReportRunManual)),
		sql.Named("SupportRetry", has(store.ReportRunSupportRetry)), sql.Named("Limit", p.Limit))
	return int(n), err
}

// ReportOwnershipList implements store.ReportStore.
func (s *Store) ReportOwnershipList(ctx context.Context, p store.ReportOwnershipListParams) ([]store.ReportOwnership, error) {
	return queryPage(ctx, s, "ReportOwnershipList", p.Limit, s.scanOwnership,
		sql.Named("SubscriptionGuid", p.SubscriptionGuid), sql.Named("AfterKey", p.AfterKey), sql.Named("Limit", p.Limit))
}

// --- rollout ------------------------------------------------------------------------

func (s *Store) scanRollout(r rowScanner) (store.ReportRolloutRecord, error) {
	var rec store.ReportRolloutRecord
	var scope string
	err := r.Scan(&scope, &rec.ScopeID, &rec.Mode, &rec.Version, s.t(&rec.UpdatedOn), ns(&rec.UpdatedBy))
	rec.ScopeType = store.ReportRolloutScope(scope)
	return rec, err
}

func rolloutArgs(scope store.ReportRolloutScope, id string) []any {
	return []any{sql.Named("ScopeType", string(scope)), sql.Named("ScopeId", id)}
}

// ReportRolloutPut implements store.ReportStore.
func (s *Store) ReportRolloutPut(ctx context.Context, r store.ReportRolloutRecord) (store.ReportRolloutRecord, error) {
	if (r.ScopeType != store.RolloutBusinessUnit && r.ScopeType != store.RolloutSubscription) || r.ScopeID == "" || r.Mode == "" {
		return r, errors.New("ReportRolloutPut: a known ScopeType, ScopeID and Mode are required")
	}
	var out store.ReportRolloutRecord
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := s.scanRollout(s.queryRow(ctx, tx, "ReportRolloutGetForUpdate", rolloutArgs(r.ScopeType, r.ScopeID)...))
		name := "ReportRolloutUpdate"
		switch err = s.oneErr("ReportRolloutGetForUpdate", err); {
		case errors.Is(err, store.ErrNotFound):
			name = "ReportRolloutInsert"
		case err != nil:
			return err
		}
		args := append(rolloutArgs(r.ScopeType, r.ScopeID), sql.Named("Mode", r.Mode),
			sql.Named("Now", s.tm(r.UpdatedOn)), sql.Named("UpdatedBy", nstr(r.UpdatedBy)))
		if _, err := s.execCount(ctx, tx, name, args...); err != nil {
			return err
		}
		out, err = s.scanRollout(s.queryRow(ctx, tx, "ReportRolloutGet", rolloutArgs(r.ScopeType, r.ScopeID)...))
		return s.oneErr("ReportRolloutGet", err)
	})
	return out, err
}

// ReportRolloutGet implements store.ReportStore.
func (s *Store) ReportRolloutGet(ctx context.Context, scope store.ReportRolloutScope, scopeID string) (store.ReportRolloutRecord, error) {
	rec, err := s.scanRollout(s.queryRow(ctx, nil, "ReportRolloutGet", rolloutArgs(scope, scopeID)...))
	return rec, s.oneErr("ReportRolloutGet", err)
}

// ReportRolloutDelete implements store.ReportStore.
func (s *Store) ReportRolloutDelete(ctx context.Context, scope store.ReportRolloutScope, scopeID string, audit *store.OperatorAudit) (bool, error) {
	if err := validAudit(audit); err != nil {
		return false, err
	}
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if n, err = s.execCount(ctx, tx, "ReportRolloutDelete", rolloutArgs(scope, scopeID)...); err != nil || audit == nil {
			return err
		}
		return s.operatorAuditInsert(ctx, tx, *audit)
	})
	return n == 1, err
}

// ReportRolloutList implements store.ReportStore.
func (s *Store) ReportRolloutList(ctx context.Context, p store.ReportRolloutListParams) ([]store.ReportRolloutRecord, error) {
	return queryPage(ctx, s, "ReportRolloutList", p.Limit, s.scanRollout, sql.Named("AfterScopeType", string(p.AfterScopeType)),
		sql.Named("AfterScopeId", p.AfterScopeID), sql.Named("Limit", p.Limit))
}

// --- activity -----------------------------------------------------------------------

// ReportActivity implements store.ReportStore: the delivery and run aggregates, merged by
// (AutomationType, SettingGuid).
func (s *Store) ReportActivity(ctx context.Context, p store.ReportActivityParams) ([]store.ReportActivityRow, error) {
	if err := checkLimit("ReportActivity", p.Limit); err != nil {
		return nil, err
	}
	if !p.From.Before(p.To) {
		return nil, fmt.Errorf("ReportActivity: From %s must be before To %s", p.From, p.To)
	}
	type group struct {
		t    string
		g    string
		a, b int
	}
	scan := func(r rowScanner) (group, error) {
		var x group
		err := r.Scan(&x.t, ns(&x.g), &x.a, &x.b)
		return x, err
	}
	args := []any{sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("From", s.tm(p.From)), sql.Named("To", s.tm(p.To)), sql.Named("Limit", p.Limit)}
	dels, runs, err := queryBoth(ctx, s, "ReportActivityDeliveries", "ReportActivityRuns", scan, args...)
	if err != nil {
		return nil, err
	}
	byKey := map[[2]string]*store.ReportActivityRow{}
	var out []*store.ReportActivityRow
	row := func(t, g string) *store.ReportActivityRow {
		k := [2]string{t, g}
		if r, ok := byKey[k]; ok {
			return r
		}
		r := &store.ReportActivityRow{BusinessUnitID: p.BusinessUnitID, AutomationType: automation.AutomationType(t), SettingGuid: g}
		byKey[k] = r
		out = append(out, r)
		return r
	}
	for _, d := range dels {
		r := row(d.t, d.g)
		r.DeliveriesSent, r.DeliveriesFailed = d.a, d.b
	}
	for _, x := range runs {
		r := row(x.t, x.g)
		r.RunsFailed, r.RunsOnHold = x.a, x.b
	}
	slices.SortFunc(out, func(a, b *store.ReportActivityRow) int {
		if c := strings.Compare(string(a.AutomationType), string(b.AutomationType)); c != 0 {
			return c
		}
		return strings.Compare(a.SettingGuid, b.SettingGuid)
	})
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	res := make([]store.ReportActivityRow, len(out))
	for i, r := range out {
		res[i] = *r
	}
	return res, nil
}
