package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

func (s *Store) scanNotification(r rowScanner) (store.NotificationJob, error) {
	var j store.NotificationJob
	var st string
	err := r.Scan(&j.ID, &j.DeliveryKey, &j.SchedulerKey, &j.BusinessUnitID, &j.Channel, &j.Recipient,
		&j.Template, &j.PayloadJSON, &st, s.nt(&j.ProcessingLeaseExpiresOn), &j.AttemptCount,
		ns(&j.ProviderReference), ns(&j.LastError), &j.Version, s.t(&j.CreatedOn), s.t(&j.UpdatedOn), s.nt(&j.SentOn))
	j.Status = store.NotificationStatus(st)
	return j, err
}

// NotificationGetByKey implements store.DeliveryStore.
func (s *Store) NotificationGetByKey(ctx context.Context, deliveryKey string) (store.NotificationJob, error) {
	j, err := s.scanNotification(s.queryRow(ctx, nil, "NotificationGetByKey", sql.Named("DeliveryKey", deliveryKey)))
	if errors.Is(err, sql.ErrNoRows) {
		return j, store.ErrNotFound
	}
	if err != nil {
		return j, fmt.Errorf("%s NotificationGetByKey: %w", s.d.Name, err)
	}
	return j, nil
}

// NotificationClaim implements store.DeliveryStore (the send claim, §5.2).
func (s *Store) NotificationClaim(ctx context.Context, p store.NotificationClaimParams) (store.NotificationClaimResult, error) {
	if p.Lease <= 0 {
		return store.NotificationClaimResult{}, fmt.Errorf("NotificationClaim: lease %s must be positive", p.Lease)
	}
	var res store.NotificationClaimResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := s.scanNotification(s.queryRow(ctx, tx, "NotificationClaim",
			sql.Named("LeaseExpiresOn", s.tm(p.Now.Add(p.Lease))),
			sql.Named("Now", s.tm(p.Now)),
			sql.Named("DeliveryKey", p.DeliveryKey)))
		if err == nil {
			res = store.NotificationClaimResult{Claimed: true, Job: j}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s NotificationClaim: %w", s.d.Name, err)
		}
		j, err = s.scanNotification(s.queryRow(ctx, tx, "NotificationGetByKey", sql.Named("DeliveryKey", p.DeliveryKey)))
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("%s NotificationGetByKey: %w", s.d.Name, err)
		}
		res = store.NotificationClaimResult{Claimed: false, Job: j}
		return nil
	})
	return res, err
}

// NotificationFinish implements store.DeliveryStore.
func (s *Store) NotificationFinish(ctx context.Context, p store.NotificationFinishParams) error {
	if p.Status != store.NotificationSent && p.Status != store.NotificationFailed {
		return fmt.Errorf("NotificationFinish: status %q is not Sent or Failed", p.Status)
	}
	return s.execOne(ctx, nil, "NotificationFinish",
		sql.Named("Status", string(p.Status)),
		sql.Named("ProviderReference", nstr(p.ProviderReference)),
		sql.Named("LastError", nstr(p.Error)),
		sql.Named("Now", s.tm(p.Now)),
		sql.Named("Id", p.ID), sql.Named("Token", p.Token))
}

// NotificationListUnsent implements store.DeliveryStore.
func (s *Store) NotificationListUnsent(ctx context.Context, afterID int64, limit int) ([]store.NotificationJob, error) {
	if err := checkLimit("NotificationListUnsent", limit); err != nil {
		return nil, err
	}
	return queryAll(ctx, s, nil, "NotificationListUnsent", s.scanNotification, sql.Named("AfterId", afterID), sql.Named("Limit", limit))
}

// OutboxListUnpublished implements store.DeliveryStore.
func (s *Store) OutboxListUnpublished(ctx context.Context, p store.OutboxListParams) ([]store.OutboxMessage, error) {
	if err := checkLimit("OutboxListUnpublished", p.Limit); err != nil {
		return nil, err
	}
	return queryAll(ctx, s, nil, "OutboxListUnpublished", func(r rowScanner) (store.OutboxMessage, error) {
		var m store.OutboxMessage
		err := r.Scan(&m.ID, &m.MessageID, &m.Destination, ns(&m.SessionID), &m.Body, s.t(&m.CreatedOn), s.nt(&m.PublishedOn), &m.Attempts)
		return m, err
	}, sql.Named("Limit", p.Limit))
}

// OutboxMarkPublished implements store.DeliveryStore.
func (s *Store) OutboxMarkPublished(ctx context.Context, p store.OutboxMarkPublishedParams) error {
	if len(p.IDs) > store.MaxBatch {
		return fmt.Errorf("OutboxMarkPublished: more than %d ids", store.MaxBatch)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range p.IDs {
			if _, err := s.exec(ctx, tx, "OutboxMarkPublished", sql.Named("Now", s.tm(p.Now)), sql.Named("Id", id)); err != nil {
				return fmt.Errorf("%s OutboxMarkPublished: %w", s.d.Name, err)
			}
		}
		return nil
	})
}

// OutboxRecordAttempt implements store.DeliveryStore.
func (s *Store) OutboxRecordAttempt(ctx context.Context, id int64, _ time.Time) error {
	_, err := s.exec(ctx, nil, "OutboxRecordAttempt", sql.Named("Id", id))
	if err != nil {
		return fmt.Errorf("%s OutboxRecordAttempt: %w", s.d.Name, err)
	}
	return nil
}
