package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// NotificationClaimDue implements store.DeliveryStore: the keys of expired send claims, of
// due retries/lookups and (with QueuedBefore) of Queued jobs whose message was lost are listed, then each is claimed in its own transaction by the same
// read-decide-write as NotificationClaim (a key another sweeper claimed first is skipped).
func (s *Store) NotificationClaimDue(ctx context.Context, p store.NotificationClaimDueParams) ([]store.NotificationClaimResult, error) {
	if err := checkClaim("NotificationClaimDue", p.Limit, p.Lease); err != nil {
		return nil, err
	}
	scanKey := func(r rowScanner) (string, error) {
		var k string
		return k, r.Scan(&k)
	}
	args := []any{sql.Named("Now", s.tm(p.Now)), sql.Named("Limit", p.Limit)}
	expired, retry, err := queryBoth(ctx, s, "NotificationListLeaseExpired", "NotificationListRetryDue", scanKey, args...)
	if err != nil {
		return nil, err
	}
	keys := append(expired, retry...)
	if !p.QueuedBefore.IsZero() && len(keys) < p.Limit {
		stale, err := queryAll(ctx, s, nil, "NotificationListQueuedStale", scanKey,
			sql.Named("QueuedBefore", s.tm(p.QueuedBefore)), sql.Named("Limit", p.Limit-len(keys)))
		if err != nil {
			return nil, err
		}
		keys = append(keys, stale...)
	}
	if len(keys) > p.Limit {
		keys = keys[:p.Limit]
	}
	var out []store.NotificationClaimResult
	for _, k := range keys {
		var res store.NotificationClaimResult
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			res, err = s.claimOne(ctx, tx, k, p.Now, p.Lease)
			return err
		})
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrLeaseLost) {
			continue
		}
		if err != nil {
			return out, err
		}
		if res.Claimed {
			out = append(out, res)
		}
	}
	return out, nil
}

// NotificationNextWakeUp implements store.DeliveryStore.
func (s *Store) NotificationNextWakeUp(ctx context.Context) (*time.Time, error) {
	return s.nextWakeUp(ctx, "NotificationNextWakeUp")
}

// NotificationListUnknown implements store.DeliverySupportStore.
func (s *Store) NotificationListUnknown(ctx context.Context, p store.NotificationListUnknownParams) ([]store.NotificationJob, error) {
	return s.notificationList(ctx, "NotificationListUnknown", p)
}

// notificationList runs one of the support lists of a unit's deliveries (query), a page of
// p.Limit after p.AfterID.
func (s *Store) notificationList(ctx context.Context, query string, p store.NotificationListUnknownParams) ([]store.NotificationJob, error) {
	return queryPage(ctx, s, query, p.Limit, s.scanNotification,
		sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("AfterId", p.AfterID), sql.Named("Limit", p.Limit))
}

// NotificationResolve implements store.DeliverySupportStore: the Version-guarded update and
// its fact in one transaction.
func (s *Store) NotificationResolve(ctx context.Context, p store.NotificationResolveParams) (store.NotificationJob, error) {
	if p.Status != store.NotificationSent && p.Status != store.NotificationFailed {
		return store.NotificationJob{}, fmt.Errorf("NotificationResolve: status %q is not Sent or Failed", p.Status)
	}
	if strings.TrimSpace(p.Operator) == "" || strings.TrimSpace(p.Reason) == "" {
		return store.NotificationJob{}, errors.New("NotificationResolve: Operator and Reason are required")
	}
	return s.notificationGuardedUpdate(ctx, "NotificationResolve", p.DeliveryKey, p.BusinessUnitID, p.ExpectedVersion, p.Now,
		func(cur store.NotificationJob) error {
			if cur.Status != store.NotificationUnknown {
				return fmt.Errorf("delivery %s is %s, not Unknown: %w", p.DeliveryKey, cur.Status, store.ErrConflict)
			}
			return nil
		},
		func(tx *sql.Tx, j store.NotificationJob) error { return s.writeFact(ctx, tx, j, p.Now) },
		sql.Named("Status", string(p.Status)),
		sql.Named("ResolvedBy", p.Operator),
		sql.Named("ResolutionReason", truncate(p.Reason, 1000)),
		sql.Named("ProviderReference", nstr(truncate(p.ProviderReference, store.MaxProviderReference))))
}

// NotificationListHeld implements store.DeliverySupportStore.
func (s *Store) NotificationListHeld(ctx context.Context, p store.NotificationListUnknownParams) ([]store.NotificationJob, error) {
	return s.notificationList(ctx, "NotificationListHeld", p)
}

// NotificationRelease implements store.DeliverySupportStore: the Version-guarded update; a
// refusal says why (not found, not held, version moved on).
func (s *Store) NotificationRelease(ctx context.Context, p store.NotificationReleaseParams) (store.NotificationJob, error) {
	return s.notificationGuardedUpdate(ctx, "NotificationRelease", p.DeliveryKey, p.BusinessUnitID, p.ExpectedVersion, p.Now,
		func(cur store.NotificationJob) error {
			if cur.Status != store.NotificationFailed || !cur.IsOnSupportHold {
				return fmt.Errorf("delivery %s is %s and not on support hold; nothing to release: %w", p.DeliveryKey, cur.Status, store.ErrConflict)
			}
			return nil
		}, nil)
}

// notificationGuardedUpdate runs name, a support update of delivery key in business unit bu
// guarded by its Version (NotificationResolve, NotificationRelease), in one transaction: the
// named arguments extra, then @Now (now, stored UTC), @DeliveryKey, @BusinessUnitId and
// @Version. When no row matched, notificationRefusal says why (wrongState judges the row's
// state); after, when not nil, runs in the same transaction on the updated row.
func (s *Store) notificationGuardedUpdate(ctx context.Context, name, key, bu string, version int64, now time.Time,
	wrongState func(store.NotificationJob) error, after func(*sql.Tx, store.NotificationJob) error, extra ...any) (store.NotificationJob, error) {
	args := append(extra, sql.Named("Now", s.tm(now)), sql.Named("DeliveryKey", key),
		sql.Named("BusinessUnitId", bu), sql.Named("Version", version))
	var out store.NotificationJob
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := s.scanNotification(s.queryRow(ctx, tx, name, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return s.notificationRefusal(ctx, tx, key, bu, version, wrongState)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
		out = j
		if after == nil {
			return nil
		}
		return after(tx, j)
	})
	return out, err
}

// notificationRefusal says why a guarded update of delivery key in business unit bu changed
// no row, reading the row in tx: store.ErrNotFound when there is none or it is another
// unit's; then wrongState's error when the row is not in the state the update needs (the
// error names the state, wrapping store.ErrConflict); else store.ErrLeaseLost, the version
// moved on from version.
func (s *Store) notificationRefusal(ctx context.Context, tx *sql.Tx, key, bu string, version int64, wrongState func(store.NotificationJob) error) error {
	cur, err := s.scanNotification(s.queryRow(ctx, tx, "NotificationGetByKey", sql.Named("DeliveryKey", key)))
	switch {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && cur.BusinessUnitID != bu):
		return fmt.Errorf("delivery %s in business unit %s: %w", key, bu, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s NotificationGetByKey: %w", s.d.Name, err)
	}
	if err := wrongState(cur); err != nil {
		return err
	}
	return fmt.Errorf("delivery %s is at version %d, not %d: %w", key, cur.Version, version, store.ErrLeaseLost)
}

func (s *Store) scanTemplate(r rowScanner) (store.NotificationTemplate, error) {
	var t store.NotificationTemplate
	err := r.Scan(&t.Key, &t.BusinessUnitID, &t.Version, &t.Subject, &t.Text, &t.HTML, &t.CreatedBy, s.t(&t.CreatedOn), &t.Kind, &t.Extra, &t.Deleted)
	return t, err
}

// NotificationTemplateSave implements store.DeliverySupportStore.
func (s *Store) NotificationTemplateSave(ctx context.Context, p store.NotificationTemplateSaveParams) (store.NotificationTemplate, error) {
	t := p.Template
	if t.Key == "" || t.CreatedBy == "" {
		return t, errors.New("NotificationTemplateSave: Key and CreatedBy are required")
	}
	if t.Kind == "" {
		t.Kind = "message"
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		latest, err := s.scanTemplate(s.queryRow(ctx, tx, "NotificationTemplateLatestForUpdate",
			sql.Named("TemplateKey", t.Key), sql.Named("BusinessUnitId", t.BusinessUnitID)))
		var stored, live int64
		switch {
		case err == nil:
			stored = latest.Version
			if !latest.Deleted {
				live = latest.Version
			}
		case errors.Is(err, sql.ErrNoRows):
		default:
			return fmt.Errorf("%s NotificationTemplateLatestForUpdate: %w", s.d.Name, err)
		}
		if t.Deleted && live == 0 {
			return fmt.Errorf("template %q (business unit %q) has no live version to delete: %w", t.Key, t.BusinessUnitID, store.ErrNotFound)
		}
		if p.ExpectedVersion != nil && *p.ExpectedVersion != live {
			return fmt.Errorf("template %q (business unit %q) is at version %d, not %d: %w", t.Key, t.BusinessUnitID, live, *p.ExpectedVersion, store.ErrConflict)
		}
		t.Version, t.CreatedOn = stored+1, ms(p.Now)
		if _, err := s.exec(ctx, tx, "NotificationTemplateInsert",
			sql.Named("TemplateKey", t.Key), sql.Named("BusinessUnitId", t.BusinessUnitID), sql.Named("Version", t.Version),
			sql.Named("Subject", t.Subject), sql.Named("TextBody", t.Text), sql.Named("HtmlBody", t.HTML),
			sql.Named("CreatedBy", t.CreatedBy), sql.Named("Now", s.tm(p.Now)),
			sql.Named("Kind", t.Kind), sql.Named("Extra", t.Extra), sql.Named("Deleted", t.Deleted)); err != nil {
			return fmt.Errorf("%s NotificationTemplateInsert: %w", s.d.Name, err)
		}
		return nil
	})
	return t, err
}

// NotificationTemplateGet implements store.DeliverySupportStore: the unit's latest version
// unless it is a tombstone, else the default's latest unless that is one.
func (s *Store) NotificationTemplateGet(ctx context.Context, key, businessUnitID string) (store.NotificationTemplate, error) {
	for _, bu := range []string{businessUnitID, ""} {
		t, err := s.scanTemplate(s.queryRow(ctx, nil, "NotificationTemplateLatest", sql.Named("TemplateKey", key), sql.Named("BusinessUnitId", bu)))
		if err == nil && !t.Deleted {
			return t, nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return t, fmt.Errorf("%s NotificationTemplateLatest: %w", s.d.Name, err)
		}
		if bu == "" {
			break
		}
	}
	return store.NotificationTemplate{}, fmt.Errorf("template %q for business unit %q: %w", key, businessUnitID, store.ErrNotFound)
}

// projectionStateName names the one DeliveryProjectionState row.
const projectionStateName = "delivery"

// DeliveryFactApply implements store.DeliverySupportStore. Per fact: a revision-guarded
// update; when no row changed, an insert-if-absent; when that inserted nothing either (the
// row exists, or a concurrent projector just inserted it), the guarded update once more.
func (s *Store) DeliveryFactApply(ctx context.Context, facts []store.DeliveryFact, now time.Time) (store.DeliveryFactApplyResult, error) {
	var res store.DeliveryFactApplyResult
	if len(facts) == 0 {
		return res, nil
	}
	if err := checkLimit("DeliveryFactApply", len(facts)); err != nil {
		return res, err
	}
	var newest time.Time
	for i, f := range facts {
		if f.CommandID == "" || f.EventID == "" || f.BusinessUnitID == "" || f.Status == "" || f.Revision <= 0 || f.OccurredOn.IsZero() {
			return res, fmt.Errorf("DeliveryFactApply: fact %d lacks commandId, eventId, businessUnitId, status, revision or occurredOn", i)
		}
		if f.OccurredOn.After(newest) {
			newest = f.OccurredOn
		}
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res = store.DeliveryFactApplyResult{}
		for _, f := range facts {
			args := []any{sql.Named("BusinessUnitId", f.BusinessUnitID), sql.Named("LocalDate", f.LocalDate),
				sql.Named("Channel", f.Channel), sql.Named("Status", string(f.Status)), sql.Named("Revision", f.Revision),
				sql.Named("EventId", f.EventID), sql.Named("OccurredOn", s.tm(f.OccurredOn)), sql.Named("Now", s.tm(now)),
				sql.Named("CommandId", f.CommandID)}
			n, err := s.execCount(ctx, tx, "DeliveryProjectionUpdate", args...)
			if err == nil && n == 0 {
				n, err = s.execCount(ctx, tx, "DeliveryProjectionInsert", args...)
				if err == nil && n == 0 {
					n, err = s.execCount(ctx, tx, "DeliveryProjectionUpdate", args...)
				}
			}
			if err != nil {
				return err
			}
			if n > 0 {
				res.Applied++
			} else {
				res.Stale++
			}
		}
		args := []any{sql.Named("FreshTo", s.tm(newest)), sql.Named("Now", s.tm(now)), sql.Named("Name", projectionStateName)}
		n, err := s.execCount(ctx, tx, "DeliveryProjectionStateUpdate", args...)
		if err == nil && n == 0 {
			n, err = s.execCount(ctx, tx, "DeliveryProjectionStateInsert", args...)
			if err == nil && n == 0 {
				_, err = s.execCount(ctx, tx, "DeliveryProjectionStateUpdate", args...)
			}
		}
		return err
	})
	return res, err
}

// DeliveryCountsByDay implements store.DeliverySupportStore.
func (s *Store) DeliveryCountsByDay(ctx context.Context, p store.DeliveryCountsParams) (store.DeliveryCounts, error) {
	var out store.DeliveryCounts
	if p.BusinessUnitID == "" || !isDate(p.From) || !isDate(p.To) || p.From > p.To {
		return out, fmt.Errorf("DeliveryCountsByDay: want a business unit and From <= To as YYYY-MM-DD, got %q %q..%q", p.BusinessUnitID, p.From, p.To)
	}
	rows, err := queryAll(ctx, s, nil, "DeliveryCountsByDay", scanDayStatusCount, sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("FromDate", p.From), sql.Named("ToDate", p.To))
	if err != nil {
		return out, err
	}
	out.Days = []store.DeliveryDayCounts{}
	for _, x := range rows {
		if len(out.Days) == 0 || out.Days[len(out.Days)-1].LocalDate != x.day {
			out.Days = append(out.Days, store.DeliveryDayCounts{LocalDate: x.day})
		}
		d := &out.Days[len(out.Days)-1]
		switch store.NotificationStatus(x.status) {
		case store.NotificationSent:
			d.Sent = x.n
		case store.NotificationFailed:
			d.Failed = x.n
		case store.NotificationUnknown:
			d.Unknown = x.n
		}
	}
	out.FreshTo, err = s.projectionFreshTo(ctx, "DeliveryProjectionStateGet", sql.Named("Name", projectionStateName))
	return out, err
}

// dayStatusCount is a row of a per-day count (CampaignCountsByDay, DeliveryCountsByDay): a
// local date (YYYY-MM-DD), a status and how many rows of that day hold it.
type dayStatusCount struct {
	day, status string
	n           int
}

func scanDayStatusCount(r rowScanner) (dayStatusCount, error) {
	var x dayStatusCount
	return x, r.Scan(&x.day, &x.status, &x.n)
}

// projectionFreshTo reads, with the query named name, the instant (UTC) up to which a
// projection has folded its facts: nil when it has folded none yet (no row, or NULL).
func (s *Store) projectionFreshTo(ctx context.Context, name string, args ...any) (*time.Time, error) {
	var fresh *time.Time
	err := s.queryRow(ctx, nil, name, args...).Scan(s.nt(&fresh))
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	return fresh, nil
}

func isDate(v string) bool {
	_, err := time.Parse("2006-01-02", v)
	return err == nil && len(v) == 10
}

// queryMultiRows runs the multi-row query name for rows as execRows runs a statement (split
// by multiRow.sizes, each statement prepared, bound by position where the dialect does)
// and calls each for every result row.
func (s *Store) queryMultiRows(ctx context.Context, tx *sql.Tx, name string, rows []map[string]any, each func(rowScanner) error) error {
	return s.eachStatement(ctx, tx, name, rows, func(st *sql.Stmt, args []any) error {
		rs, err := st.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			if err := each(rs); err != nil {
				return err
			}
		}
		return rs.Err()
	})
}
