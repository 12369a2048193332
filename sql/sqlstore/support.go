package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

var _ store.SupportStore = (*Store)(nil)

// releasePaceName names the one row of SupportReleasePace: every bulk release shares it.
const releasePaceName = "release"

// earliestInstant stands for "no lower bound" in schedule-order pages.
var earliestInstant = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

// unitsArgs returns @AllUnits and @Units (a JSON array) for a scope (scopeArgs).
func unitsArgs(sc automation.Scope) []any { return scopeArgs(sc, "Units") }

func nullTime(s *Store, t *time.Time) any {
	if t == nil {
		return nil
	}
	return s.tm(*t)
}

func nullBool(b *bool) any {
	if b == nil {
		return nil
	}
	return boolInt(*b)
}

// supportFindQuery picks the query whose index drives the find (see queries/support.sql).
func supportFindQuery(p store.SupportFindParams) string {
	switch {
	case p.SchedulerKey != "":
		return "SupportSchedulerFindByKey"
	case p.SourceEntityType != "":
		return "SupportSchedulerFindBySource"
	case p.BusinessUnitID != "" && p.Status != "":
		return "SupportSchedulerFindByBusinessUnitStatus"
	case p.BusinessUnitID != "":
		return "SupportSchedulerFindByBusinessUnit"
	case p.Status != "":
		return "SupportSchedulerFindByStatus"
	case p.OnHold != nil && *p.OnHold:
		return "SupportSchedulerFindOnHold"
	case p.ByScheduledOn():
		return "SupportSchedulerFindByScheduledOn"
	}
	return "SupportSchedulerFindAll"
}

// SupportSchedulerFind implements store.SupportStore.
func (s *Store) SupportSchedulerFind(ctx context.Context, p store.SupportFindParams) ([]automation.SchedulerRow, error) {
	if err := checkLimit("SupportSchedulerFind", p.Limit); err != nil {
		return nil, err
	}
	if (p.SourceEntityType == "") != (p.SourceEntityGuid == "") {
		return nil, errors.New("SupportSchedulerFind: SourceEntityType and SourceEntityGuid go together")
	}
	name := supportFindQuery(p)
	args := []any{
		sql.Named("SchedulerKey", nstr(p.SchedulerKey)),
		sql.Named("SourceEntityType", nstr(p.SourceEntityType)),
		sql.Named("SourceEntityGuid", nstr(p.SourceEntityGuid)),
		sql.Named("BusinessUnitId", nstr(p.BusinessUnitID)),
		sql.Named("Status", nstr(string(p.Status))),
		sql.Named("OnHold", nullBool(p.OnHold)),
		sql.Named("ScheduledFrom", nullTime(s, p.ScheduledFrom)),
		sql.Named("ScheduledTo", nullTime(s, p.ScheduledTo)),
		sql.Named("Limit", p.Limit),
	}
	args = append(args, unitsArgs(p.Scope)...)
	if name == "SupportSchedulerFindByScheduledOn" {
		after := p.AfterOn
		if after.IsZero() {
			after = earliestInstant
			if p.ScheduledFrom != nil {
				after = *p.ScheduledFrom
			}
		}
		args = append(args, sql.Named("AfterOn", s.tm(after)), sql.Named("AfterId", p.AfterID))
	} else {
		before := p.BeforeID
		if before <= 0 {
			before = math.MaxInt64
		}
		args = append(args, sql.Named("BeforeId", before))
	}
	return s.queryRows(ctx, nil, name, args...)
}

// SupportSchedulerGet implements store.SupportStore.
func (s *Store) SupportSchedulerGet(ctx context.Context, id int64) (automation.SchedulerRow, error) {
	return s.queryOne(ctx, nil, "SupportSchedulerGetById", sql.Named("Id", id))
}

// SupportSchedulerGetByGuid implements store.SupportStore.
func (s *Store) SupportSchedulerGetByGuid(ctx context.Context, guid string) (automation.SchedulerRow, error) {
	return s.queryOne(ctx, nil, "SupportSchedulerGetByGuid", sql.Named("Guid", guid))
}

// actQueries maps each action to its guarded update.
var actQueries = map[store.SupportAction]string{
	store.SupportRelease:  "SupportSchedulerRelease",
	store.SupportRetryNow: "SupportSchedulerRetryNow",
	store.SupportRetry:    "SupportSchedulerTouch",
	store.SupportCancel:   "SupportSchedulerCancel",
	store.SupportRunNow:   "SupportSchedulerRunNow",
}

func validateAudit(op, operator, reason string) error {
	if strings.TrimSpace(operator) == "" || strings.TrimSpace(reason) == "" {
		return fmt.Errorf("%s: Operator and Reason are required", op)
	}
	return nil
}

// SupportSchedulerAct implements store.SupportStore: read, Version check, guarded update,
// (support retry: ensure the retry row), audit record — one transaction.
func (s *Store) SupportSchedulerAct(ctx context.Context, p store.SupportActParams) (store.SupportActResult, error) {
	name, ok := actQueries[p.Action]
	if !ok {
		return store.SupportActResult{}, fmt.Errorf("SupportSchedulerAct: unknown action %q", p.Action)
	}
	if err := validateAudit("SupportSchedulerAct", p.Operator, p.Reason); err != nil {
		return store.SupportActResult{}, err
	}
	if (p.Action == store.SupportRetry) != (p.RetryCandidate != nil) {
		return store.SupportActResult{}, errors.New("SupportSchedulerAct: RetryCandidate is required for SupportRetry, and only for it")
	}
	if p.RetryCandidate != nil {
		if err := validateCandidates("SupportSchedulerAct", []automation.Candidate{*p.RetryCandidate}); err != nil {
			return store.SupportActResult{}, err
		}
	}
	var res store.SupportActResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res = store.SupportActResult{}
		before, err := s.queryOne(ctx, tx, "SupportSchedulerGetById", sql.Named("Id", p.ID))
		if err != nil {
			return err
		}
		if before.Version != p.Version {
			return fmt.Errorf("%s %s: row %d is at version %d, not %d: %w", s.d.Name, name, p.ID, before.Version, p.Version, store.ErrLeaseLost)
		}
		args := []any{sql.Named("Id", p.ID), sql.Named("Version", p.Version), sql.Named("Now", s.tm(p.Now))}
		if p.Action == store.SupportRelease {
			args = append(args, sql.Named("NextRetryOn", s.ntm(p.DueOn)))
		}
		after, err := s.queryOne(ctx, tx, name, args...)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%s %s: row %d (%s) does not allow %s: %w", s.d.Name, name, p.ID, before.Status, p.Action, store.ErrLeaseLost)
		}
		if err != nil {
			return err
		}
		res.Row = after
		retryKey := ""
		if p.RetryCandidate != nil {
			r, err := s.ensureOne(ctx, tx, p.Now, *p.RetryCandidate)
			if err != nil {
				return err
			}
			res.RetryRow = &r
			retryKey = r.Row.SchedulerKey
		}
		res.AuditID, err = s.auditInsert(ctx, tx, p.Now, store.SupportAuditRecord{
			SchedulerID: before.ID, SchedulerKey: before.SchedulerKey, BusinessUnitID: before.BusinessUnitID,
			Action: p.Action, Operator: p.Operator, Reason: p.Reason,
			StatusBefore: before.Status, StatusAfter: after.Status, VersionBefore: before.Version, VersionAfter: after.Version,
			RetrySchedulerKey: retryKey, DueOn: p.DueOn,
		})
		return err
	})
	return res, err
}

func (s *Store) auditInsert(ctx context.Context, tx *sql.Tx, now time.Time, a store.SupportAuditRecord) (int64, error) {
	var id int64
	err := s.queryRow(ctx, tx, "SupportAuditInsert",
		sql.Named("SchedulerId", a.SchedulerID), sql.Named("SchedulerKey", a.SchedulerKey),
		sql.Named("BusinessUnitId", a.BusinessUnitID), sql.Named("Action", string(a.Action)),
		sql.Named("Operator", a.Operator), sql.Named("Reason", a.Reason),
		sql.Named("StatusBefore", string(a.StatusBefore)), sql.Named("StatusAfter", string(a.StatusAfter)),
		sql.Named("VersionBefore", a.VersionBefore), sql.Named("VersionAfter", a.VersionAfter),
		sql.Named("RetrySchedulerKey", nstr(a.RetrySchedulerKey)), sql.Named("DueOn", s.ntm(a.DueOn)),
		sql.Named("BatchId", nstr(a.BatchID)), sql.Named("Now", s.tm(now))).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("%s SupportAuditInsert: %w", s.d.Name, err)
	}
	return id, nil
}

// SupportSchedulerReleaseBatch implements store.SupportStore.
func (s *Store) SupportSchedulerReleaseBatch(ctx context.Context, p store.SupportReleaseBatchParams) (store.SupportReleaseBatchResult, error) {
	if err := checkLimit("SupportSchedulerReleaseBatch", p.Limit); err != nil {
		return store.SupportReleaseBatchResult{}, err
	}
	if p.Interval <= 0 {
		return store.SupportReleaseBatchResult{}, fmt.Errorf("SupportSchedulerReleaseBatch: interval %s must be positive", p.Interval)
	}
	if err := validateAudit("SupportSchedulerReleaseBatch", p.Operator, p.Reason); err != nil {
		return store.SupportReleaseBatchResult{}, err
	}
	f := p.Filter
	if (f.SourceEntityType == "") != (f.SourceEntityGuid == "") {
		return store.SupportReleaseBatchResult{}, errors.New("SupportSchedulerReleaseBatch: SourceEntityType and SourceEntityGuid go together")
	}
	var res store.SupportReleaseBatchResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res = store.SupportReleaseBatchResult{}
		var next *time.Time
		err := s.queryRow(ctx, tx, "SupportReleasePaceGetForUpdate", sql.Named("Name", releasePaceName)).Scan(s.nt(&next))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s SupportReleasePaceGetForUpdate: %w", s.d.Name, err)
		}
		due := ms(p.Now)
		if next != nil && next.After(due) {
			due = *next
		}
		args := []any{
			sql.Named("AfterId", p.AfterID), sql.Named("Limit", p.Limit),
			sql.Named("SourceEntityType", nstr(f.SourceEntityType)), sql.Named("SourceEntityGuid", nstr(f.SourceEntityGuid)),
			sql.Named("BusinessUnitId", nstr(f.BusinessUnitID)), sql.Named("Status", nstr(string(f.Status))),
			sql.Named("FailureReasonCode", nstr(string(f.FailureReasonCode))),
			sql.Named("ScheduledFrom", nullTime(s, f.ScheduledFrom)), sql.Named("ScheduledTo", nullTime(s, f.ScheduledTo)),
		}
		rows, err := s.queryRows(ctx, tx, "SupportSchedulerListHeld", append(args, unitsArgs(f.Scope)...)...)
		if err != nil || len(rows) == 0 {
			return err
		}
		out := make([]automation.SchedulerRow, 0, len(rows))
		for _, before := range rows {
			after, err := s.queryOne(ctx, tx, "SupportSchedulerRelease", sql.Named("Id", before.ID), sql.Named("Version", before.Version),
				sql.Named("Now", s.tm(p.Now)), sql.Named("NextRetryOn", s.tm(due)))
			if err != nil {
				return fmt.Errorf("release %s: %w", before.SchedulerKey, err)
			}
			if _, err := s.auditInsert(ctx, tx, p.Now, store.SupportAuditRecord{
				SchedulerID: before.ID, SchedulerKey: before.SchedulerKey, BusinessUnitID: before.BusinessUnitID,
				Action: store.SupportRelease, Operator: p.Operator, Reason: p.Reason,
				StatusBefore: before.Status, StatusAfter: after.Status, VersionBefore: before.Version, VersionAfter: after.Version,
				DueOn: &due, BatchID: p.BatchID,
			}); err != nil {
				return err
			}
			out = append(out, after)
		}
		if _, err := s.exec(ctx, tx, "SupportReleasePaceSet", sql.Named("Name", releasePaceName), sql.Named("NextSlotOn", s.tm(due.Add(p.Interval)))); err != nil {
			return fmt.Errorf("%s SupportReleasePaceSet: %w", s.d.Name, err)
		}
		res = store.SupportReleaseBatchResult{Rows: out, DueOn: due}
		return nil
	})
	return res, err
}

func (s *Store) scanAudit(r rowScanner) (store.SupportAuditRecord, error) {
	var a store.SupportAuditRecord
	var action, before, after string
	err := r.Scan(&a.ID, &a.SchedulerID, &a.SchedulerKey, &a.BusinessUnitID, &action, &a.Operator, &a.Reason,
		&before, &after, &a.VersionBefore, &a.VersionAfter, ns(&a.RetrySchedulerKey), s.nt(&a.DueOn), ns(&a.BatchID), s.t(&a.CreatedOn))
	a.Action, a.StatusBefore, a.StatusAfter = store.SupportAction(action), automation.Status(before), automation.Status(after)
	return a, err
}

// SupportAuditList implements store.SupportStore.
func (s *Store) SupportAuditList(ctx context.Context, schedulerIDs []int64, limit int) ([]store.SupportAuditRecord, error) {
	if err := checkLimit("SupportAuditList", limit); err != nil {
		return nil, err
	}
	if len(schedulerIDs) == 0 {
		return nil, nil
	}
	if len(schedulerIDs) > store.MaxBatch {
		return nil, fmt.Errorf("SupportAuditList: more than %d rows", store.MaxBatch)
	}
	ids, _ := json.Marshal(schedulerIDs)
	return queryAll(ctx, s, nil, "SupportAuditListByScheduler", s.scanAudit, sql.Named("SchedulerIds", string(ids)), sql.Named("Limit", limit))
}

// SupportNotificationList implements store.SupportStore.
func (s *Store) SupportNotificationList(ctx context.Context, schedulerKey string, limit int) ([]store.NotificationJob, error) {
	if err := checkLimit("SupportNotificationList", limit); err != nil {
		return nil, err
	}
	return queryAll(ctx, s, nil, "SupportNotificationListByKey", s.scanNotification, sql.Named("SchedulerKey", schedulerKey), sql.Named("Limit", limit))
}

// SupportMetrics implements store.SupportStore: one bounded query per figure, no
// transaction (each figure is consistent on its own; together they are a snapshot within
// milliseconds).
func (s *Store) SupportMetrics(ctx context.Context, p store.SupportMetricsParams) (store.SupportMetrics, error) {
	if p.Cap <= 0 || p.Cap > store.MetricsMaxCap {
		return store.SupportMetrics{}, fmt.Errorf("SupportMetrics: cap %d outside 1..%d", p.Cap, store.MetricsMaxCap)
	}
	var m store.SupportMetrics
	units := unitsArgs(p.Scope)
	now, capArg := sql.Named("Now", s.tm(p.Now)), sql.Named("Cap", p.Cap)
	count := func(name string, dst *int, args ...any) error {
		if err := s.queryRow(ctx, nil, name, args...).Scan(dst); err != nil {
			return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
		return nil
	}
	first := func(name string, dst **time.Time, args ...any) error {
		err := s.queryRow(ctx, nil, name, args...).Scan(s.nt(dst))
		if errors.Is(err, sql.ErrNoRows) {
			*dst = nil
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
		return nil
	}
	grouped := func(name string, args ...any) (map[string]int, error) {
		type kv struct {
			k string
			n int
		}
		rows, err := queryAll(ctx, s, nil, name, func(r rowScanner) (kv, error) {
			var x kv
			err := r.Scan(ns(&x.k), &x.n)
			return x, err
		}, args...)
		if err != nil {
			return nil, err
		}
		out := make(map[string]int, len(rows))
		for _, x := range rows {
			out[x.k] += x.n
		}
		return out, nil
	}
	with := func(extra ...any) []any { return append(append([]any{}, units...), extra...) }
	steps := []func() error{
		func() error { return count("SupportMetricsPendingDue", &m.PendingDue, with(now, capArg)...) },
		func() error { return first("SupportMetricsOldestDue", &m.OldestDueOn, with(now, capArg)...) },
		func() error { return count("SupportMetricsProcessing", &m.Processing, with(capArg)...) },
		func() error { return count("SupportMetricsExpiredLeases", &m.ExpiredLeases, with(now, capArg)...) },
		func() error { return count("SupportMetricsFailed", &m.Failed, with(capArg)...) },
		func() error { return count("SupportMetricsUnknownDeliveries", &m.UnknownDeliveries, with(capArg)...) },
		func() (err error) {
			m.HeldByReason, err = grouped("SupportMetricsHeldByReason", with(capArg)...)
			return err
		},
		func() (err error) {
			m.DeactivatedByReason, err = grouped("SupportMetricsDeactivatedSince", with(capArg, sql.Named("Since", s.tm(p.Since)))...)
			return err
		},
	}
	steps = append(steps, func() error {
		var n int
		err := s.queryRow(ctx, nil, "SupportMetricsHeldReservations", with(capArg)...).Scan(&n, s.nt(&m.OldestHeldOn))
		if err != nil {
			return fmt.Errorf("%s SupportMetricsHeldReservations: %w", s.d.Name, err)
		}
		m.ReservationsHeld = n
		return nil
	})
	m.FeesByStatus = make(map[string]int, 4)
	for _, st := range []string{store.FeePending, store.FeeSucceeded, store.FeeFailed, store.FeeUnknown} {
		steps = append(steps, func() error {
			var n int
			if err := count("SupportMetricsFeesWithStatus", &n, with(capArg, sql.Named("Status", st))...); err != nil {
				return err
			}
			m.FeesByStatus[st] = n
			return nil
		})
	}
	if p.Scope.All() { // the outbox has no business unit: platform-wide figures only
		steps = append(steps,
			func() error { return count("SupportMetricsOutboxUnsent", &m.OutboxUnsent, capArg) },
			func() error { return first("SupportMetricsOutboxOldest", &m.OutboxOldestOn) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return store.SupportMetrics{}, err
		}
	}
	return m, nil
}

// SupportThroughput implements store.SupportStore.
func (s *Store) SupportThroughput(ctx context.Context, p store.SupportThroughputParams) ([]store.ThroughputBucket, error) {
	if !p.Until.After(p.Since) || p.Until.Sub(p.Since) > store.MaxThroughputWindow {
		return nil, fmt.Errorf("SupportThroughput: window %s..%s must be positive and at most %s", p.Since, p.Until, store.MaxThroughputWindow)
	}
	args := append(unitsArgs(p.Scope), sql.Named("Since", s.tm(p.Since)), sql.Named("Until", s.tm(p.Until)))
	out, err := queryAll(ctx, s, nil, "SupportThroughput", func(r rowScanner) (store.ThroughputBucket, error) {
		var b store.ThroughputBucket
		var st string
		err := r.Scan(s.t(&b.Minute), &st, &b.Channel, &b.Count)
		b.Status = store.NotificationStatus(st)
		return b, err
	}, args...)
	if err != nil {
		return nil, fmt.Errorf("%s SupportThroughput: %w", s.d.Name, err)
	}
	return out, nil
}

// SupportCommandThroughput implements store.SupportStore.
func (s *Store) SupportCommandThroughput(ctx context.Context, p store.SupportThroughputParams) ([]store.CommandThroughputBucket, error) {
	return perMinuteSeries(ctx, s, "SupportCommandThroughput", p.Scope, p.Since, p.Until, nil, func(minute time.Time, status string, n int) store.CommandThroughputBucket {
		return store.CommandThroughputBucket{Minute: minute, Status: store.CommandStatus(status), Count: n}
	})
}

// perMinuteSeries runs a per-minute series query, whose rows are (Minute, a status or
// outcome, Count), over since..until (instants, stored UTC; a positive window of at most
// store.MaxThroughputWindow, else an error naming the query) within the scope's business
// units; args are the query's other named parameters, bucket builds one result.
func perMinuteSeries[B any](ctx context.Context, s *Store, query string, scope automation.Scope, since, until time.Time, args []any,
	bucket func(minute time.Time, key string, n int) B) ([]B, error) {
	if !until.After(since) || until.Sub(since) > store.MaxThroughputWindow {
		return nil, fmt.Errorf("%s: window %s..%s must be positive and at most %s", query, since, until, store.MaxThroughputWindow)
	}
	args = append(append(unitsArgs(scope), args...), sql.Named("Since", s.tm(since)), sql.Named("Until", s.tm(until)))
	out, err := queryAll(ctx, s, nil, query, func(r rowScanner) (B, error) {
		var minute time.Time
		var key string
		var n int
		err := r.Scan(s.t(&minute), &key, &n)
		return bucket(minute, key, n), err
	}, args...)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.d.Name, query, err)
	}
	return out, nil
}

// SourceStaleEventGet implements store.SupportStore.
func (s *Store) SourceStaleEventGet(ctx context.Context, entityType, entityGuid string) (store.SourceStaleEvent, error) {
	var e store.SourceStaleEvent
	err := s.queryRow(ctx, nil, "SourceStaleEventGet", sql.Named("EntityType", entityType), sql.Named("EntityGuid", entityGuid)).
		Scan(&e.EntityType, &e.EntityGuid, &e.EventID, &e.Revision, &e.StoredRevision, &e.StoredEventID, s.t(&e.ReceivedOn))
	return e, s.oneErr("SourceStaleEventGet", err)
}

// recordStaleEvent keeps sn, ignored because cur is newer, as the source's latest stale
// event (SourceSnapshotApply calls it in its transaction).
func (s *Store) recordStaleEvent(ctx context.Context, tx *sql.Tx, sn, cur store.SourceSnapshot) error {
	_, err := s.exec(ctx, tx, "SourceStaleEventUpsert",
		sql.Named("EntityType", sn.EntityType), sql.Named("EntityGuid", sn.EntityGuid),
		sql.Named("EventId", sn.LastEventID), sql.Named("Revision", sn.Revision),
		sql.Named("StoredRevision", cur.Revision), sql.Named("StoredEventId", cur.LastEventID),
		sql.Named("ReceivedOn", s.tm(sn.UpdatedOn)))
	if err != nil {
		return fmt.Errorf("%s SourceStaleEventUpsert: %w", s.d.Name, err)
	}
	return nil
}

// MetricsSamplePut implements store.SupportStore: one insert per sample in one transaction.
func (s *Store) MetricsSamplePut(ctx context.Context, samples []store.MetricsSample) error {
	if len(samples) > store.MaxBatch {
		return fmt.Errorf("MetricsSamplePut: %d samples, at most %d", len(samples), store.MaxBatch)
	}
	if len(samples) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for _, m := range samples {
			if m.BusinessUnitID == "" {
				return fmt.Errorf("MetricsSamplePut: a sample without a business unit")
			}
			if _, err := s.exec(ctx, tx, "MetricsSamplePut", sql.Named("BusinessUnitId", m.BusinessUnitID), sql.Named("SampledOn", s.tm(m.SampledOn)),
				sql.Named("PendingDue", m.PendingDue), sql.Named("OldestDueAgeSeconds", m.OldestDueAgeSeconds), sql.Named("OnHold", m.OnHold),
				sql.Named("OutboxUnsent", m.OutboxUnsent), sql.Named("OutboxOldestAgeSeconds", m.OutboxOldestAgeSeconds)); err != nil {
				return fmt.Errorf("%s MetricsSamplePut: %w", s.d.Name, err)
			}
		}
		return nil
	})
}

// MetricsSampleSeries implements store.SupportStore.
func (s *Store) MetricsSampleSeries(ctx context.Context, p store.MetricsSeriesParams) ([]store.MetricsSample, error) {
	if p.Limit < 1 || p.Limit > store.MaxMetricsSeries {
		return nil, fmt.Errorf("MetricsSampleSeries: limit %d outside 1..%d", p.Limit, store.MaxMetricsSeries)
	}
	args := append(unitsArgs(p.Scope), sql.Named("Since", s.tm(p.Since)), sql.Named("Limit", p.Limit))
	out, err := queryAll(ctx, s, nil, "MetricsSampleSeries", func(r rowScanner) (store.MetricsSample, error) {
		var m store.MetricsSample
		err := r.Scan(s.t(&m.SampledOn), &m.PendingDue, &m.OldestDueAgeSeconds, &m.OnHold, &m.OutboxUnsent, &m.OutboxOldestAgeSeconds)
		return m, err
	}, args...)
	if err != nil {
		return nil, fmt.Errorf("%s MetricsSampleSeries: %w", s.d.Name, err)
	}
	return out, nil
}

// MetricsSamplePurge implements store.SupportStore.
func (s *Store) MetricsSamplePurge(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purgeBefore(ctx, "MetricsSamplePurge", before, limit)
}

// MetricsCountAdd implements store.SupportStore: one upsert per count in one transaction.
func (s *Store) MetricsCountAdd(ctx context.Context, flushID string, counts []store.MetricsCount) error {
	if len(counts) > store.MaxBatch {
		return automation.Invalid("counts", "MetricsCountAdd: %d counts, at most %d", len(counts), store.MaxBatch)
	}
	if flushID == "" || len(flushID) > store.MaxMetricsCountFlushID || strings.IndexFunc(flushID, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return automation.Invalid("flushId", "MetricsCountAdd: flushID %q must be 1..%d printable ASCII characters", flushID, store.MaxMetricsCountFlushID)
	}
	for i, c := range counts {
		if c.Flow == "" || c.Outcome == "" || c.N < 1 {
			return automation.Invalid(fmt.Sprintf("counts[%d]", i), "MetricsCountAdd: counts[%d] needs a flow, an outcome and N >= 1 (flow %q, outcome %q, N %d)", i, c.Flow, c.Outcome, c.N)
		}
		for _, m := range []struct {
			name, v string
			max     int
		}{{"flow", c.Flow, store.MaxMetricsCountFlow}, {"businessUnitId", c.BusinessUnitID, store.MaxMetricsCountUnit},
			{"label", c.Label, store.MaxMetricsCountLabel}, {"outcome", c.Outcome, store.MaxMetricsCountOutcome}} {
			if n := len(utf16.Encode([]rune(m.v))); n > m.max {
				return automation.Invalid(fmt.Sprintf("counts[%d].%s", i, m.name), "MetricsCountAdd: counts[%d].%s is %d UTF-16 code units, at most %d (the column's width)", i, m.name, n, m.max)
			}
		}
	}
	if len(counts) == 0 {
		return nil
	}
	minute := counts[0].MinuteOn
	for _, c := range counts[1:] {
		if c.MinuteOn.Before(minute) {
			minute = c.MinuteOn
		}
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		// The ledger row first: a flush already applied (retried after an ambiguous commit)
		// affects no row and adds nothing.
		res, err := s.exec(ctx, tx, "MetricsCountFlushInsert", sql.Named("MinuteOn", s.tm(minute.UTC().Truncate(time.Minute))), sql.Named("FlushId", flushID))
		if err != nil {
			return fmt.Errorf("%s MetricsCountFlushInsert: %w", s.d.Name, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		for _, c := range counts {
			if _, err := s.exec(ctx, tx, "MetricsCountAdd", sql.Named("MinuteOn", s.tm(c.MinuteOn.UTC().Truncate(time.Minute))),
				sql.Named("Flow", c.Flow), sql.Named("BusinessUnitId", c.BusinessUnitID), sql.Named("Label", c.Label),
				sql.Named("Outcome", c.Outcome), sql.Named("N", c.N)); err != nil {
				return fmt.Errorf("%s MetricsCountAdd: %w", s.d.Name, err)
			}
		}
		return nil
	})
}

// MetricsCountSeries implements store.SupportStore.
func (s *Store) MetricsCountSeries(ctx context.Context, p store.MetricsCountParams) ([]store.MetricsCountBucket, error) {
	if p.Flow == "" {
		return nil, fmt.Errorf("MetricsCountSeries: a flow is required")
	}
	return perMinuteSeries(ctx, s, "MetricsCountSeries", p.Scope, p.Since, p.Until, []any{sql.Named("Flow", p.Flow)}, func(minute time.Time, outcome string, n int) store.MetricsCountBucket {
		return store.MetricsCountBucket{Minute: minute, Outcome: outcome, Count: n}
	})
}

// MetricsCountPurge implements store.SupportStore.
func (s *Store) MetricsCountPurge(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := s.purgeBefore(ctx, "MetricsCountPurge", before, limit)
	if err != nil {
		return 0, err
	}
	// The flush ledger of the same minutes (a flush is never retried after the retention).
	if _, err := s.exec(ctx, nil, "MetricsCountFlushPurge", sql.Named("Before", s.tm(before)), sql.Named("Limit", limit)); err != nil {
		return n, fmt.Errorf("%s MetricsCountFlushPurge: %w", s.d.Name, err)
	}
	return n, nil
}
