package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.DeadLetterAuditStore = (*Store)(nil)

// DeadLetterAuditInsert implements store.DeadLetterAuditStore.
func (s *Store) DeadLetterAuditInsert(ctx context.Context, a store.DeadLetterAudit) error {
	if a.ETag == "" || a.Operator == "" || (a.Action != store.DeadLetterRequeue && a.Action != store.DeadLetterDiscard) {
		return fmt.Errorf("%s DeadLetterAuditInsert: an ETag, an operator and an action (Requeue, Discard) are required", s.d.Name)
	}
	n, err := s.execCount(ctx, nil, "DeadLetterAuditInsert", sql.Named("ETag", a.ETag), sql.Named("Action", string(a.Action)),
		sql.Named("DeadLetterId", a.DeadLetterID), sql.Named("Destination", a.Destination), sql.Named("MessageId", a.MessageID),
		sql.Named("BusinessUnitId", a.BusinessUnitID), sql.Named("Operator", a.Operator), sql.Named("Reason", a.Reason),
		sql.Named("BatchId", a.BatchID), sql.Named("ActedOn", s.tm(a.ActedOn)))
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%s DeadLetterAuditInsert: dead letter %s was acted on already: %w", s.d.Name, a.ETag, store.ErrConflict)
	}
	return nil
}

func (s *Store) scanDeadLetterAudit(r rowScanner) (store.DeadLetterAudit, error) {
	var a store.DeadLetterAudit
	var action string
	err := r.Scan(&a.ETag, &action, &a.DeadLetterID, &a.Destination, &a.MessageID, &a.BusinessUnitID, &a.Operator, &a.Reason,
		&a.BatchID, s.t(&a.ActedOn))
	a.Action = store.DeadLetterAction(action)
	return a, err
}

// DeadLetterAuditGet implements store.DeadLetterAuditStore.
func (s *Store) DeadLetterAuditGet(ctx context.Context, etag string) (store.DeadLetterAudit, error) {
	as, err := queryAll(ctx, s, nil, "DeadLetterAuditGet", s.scanDeadLetterAudit, sql.Named("ETag", etag))
	if err != nil {
		return store.DeadLetterAudit{}, err
	}
	if len(as) == 0 {
		return store.DeadLetterAudit{}, fmt.Errorf("%s DeadLetterAuditGet %s: %w", s.d.Name, etag, store.ErrNotFound)
	}
	return as[0], nil
}

// DeadLetterAuditDelete implements store.DeadLetterAuditStore.
func (s *Store) DeadLetterAuditDelete(ctx context.Context, etag string) error {
	if _, err := s.exec(ctx, nil, "DeadLetterAuditDelete", sql.Named("ETag", etag)); err != nil {
		return fmt.Errorf("%s DeadLetterAuditDelete: %w", s.d.Name, err)
	}
	return nil
}

// DeadLetterAuditTakeOver implements store.DeadLetterAuditStore.
func (s *Store) DeadLetterAuditTakeOver(ctx context.Context, a store.DeadLetterAudit, staleBefore time.Time) (bool, error) {
	if a.ETag == "" || a.Operator == "" || (a.Action != store.DeadLetterRequeue && a.Action != store.DeadLetterDiscard) {
		return false, fmt.Errorf("%s DeadLetterAuditTakeOver: an ETag, an operator and an action (Requeue, Discard) are required", s.d.Name)
	}
	n, err := s.execCount(ctx, nil, "DeadLetterAuditTakeOver", sql.Named("ETag", a.ETag), sql.Named("Action", string(a.Action)),
		sql.Named("Operator", a.Operator), sql.Named("Reason", a.Reason), sql.Named("BatchId", a.BatchID),
		sql.Named("ActedOn", s.tm(a.ActedOn)), sql.Named("StaleBefore", s.tm(staleBefore)))
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// DeadLetterAuditCount implements store.DeadLetterAuditStore.
func (s *Store) DeadLetterAuditCount(ctx context.Context, action store.DeadLetterAction, since time.Time) (int, error) {
	var n int
	err := s.queryRow(ctx, nil, "DeadLetterAuditCount", sql.Named("Since", s.tm(since)), sql.Named("Action", string(action))).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s DeadLetterAuditCount: %w", s.d.Name, err)
	}
	return n, nil
}

// DeadLetterAuditList implements store.DeadLetterAuditStore.
func (s *Store) DeadLetterAuditList(ctx context.Context, p store.DeadLetterAuditListParams) ([]store.DeadLetterAudit, error) {
	if p.Limit < 1 || p.Limit > store.MaxDeadLetterAuditList {
		return nil, fmt.Errorf("%s DeadLetterAuditList: limit %d outside 1..%d", s.d.Name, p.Limit, store.MaxDeadLetterAuditList)
	}
	args := append(unitsArgs(p.Scope), sql.Named("Limit", p.Limit))
	return queryAll(ctx, s, nil, "DeadLetterAuditList", s.scanDeadLetterAudit, args...)
}
